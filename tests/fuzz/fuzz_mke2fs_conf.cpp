// mke2fs.conf (ext::Mke2fsConf::parse), and everything mkext4 decides from
// a profile: the input is the profile, the request a few fixed sizes and
// usage types, and when a plan comes out its bytes are built too. Values
// the profile may hold unchecked elsewhere (blocksize -1, huge inode
// ratios, flex_bg sizes, features) reach the layout this way.
//
// Besides not crashing, one property is checked: a superblock mkext4 would
// write decodes (ext::decode_layout) to the layout it was built from.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ext/mkfs.hpp"

namespace {

std::array<std::uint8_t, 16> fixed16() { return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}; }

void plan_and_build(const ext::Mke2fsConf& conf, const char* size, const char* types) {
  ext::MkfsRequest r;
  r.size = size;
  if (types) r.usage_types = types;
  r.time = 1700000000;
  ext::MkfsTarget t;
  t.name = "fuzz.img";
  t.exists = false;
  auto plan = ext::plan_mkfs(r, t, conf, fixed16);
  if (!plan) return;
  const ext::MkfsBuilder b(plan->layout, plan->files, plan->params, plan->kbytes);
  const auto sb = b.superblock(0);
  auto back = ext::decode_layout(sb, plan->fs_bytes());
  if (!back || back->blocks_count != plan->layout.l.blocks_count || back->inodes_count != plan->layout.l.inodes_count ||
      back->group_count != plan->layout.l.group_count) {
    std::fprintf(stderr, "fuzz_mke2fs_conf: the superblock of a %s filesystem does not decode to its layout: %s\n",
                 size, back ? "counts differ" : back.error().message().c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto conf = ext::Mke2fsConf::parse(text, "fuzz.conf");
  if (!conf) return 0;
  (void)conf->get("defaults", "", "blocksize");
  (void)conf->has_subsection("fs_types", "ext4");
  plan_and_build(*conf, "8M", nullptr);
  plan_and_build(*conf, "1G", nullptr);
  plan_and_build(*conf, "64M", "small,big");
  return 0;
}
