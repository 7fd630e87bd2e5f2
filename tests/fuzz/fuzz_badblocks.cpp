// mkfat -l FILE: the bad-block list (fat::parse_bad_block_list), and the
// blocks it accepts mapped to clusters of a small FAT16 layout
// (fat::bad_clusters), as mkfat does before it formats.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fat/badblocks.hpp"
#include "fat/volume.hpp"

namespace {

// A 16 MiB FAT16 volume's layout, parsed from its boot sector (mkfs.fat -F 16).
const fat::Layout& layout() {
  static const fat::Layout l = [] {
    std::byte s[512]{};
    const unsigned char bpb[] = {0xEB, 0x3C, 0x90, 'm',  'k',  'f',  's',  '.',  'f',  'a',  't',  0x00, 0x02, 0x04,
                                 0x04, 0x00, 0x02, 0x00, 0x02, 0x00, 0x80, 0xF8, 0x20, 0x00, 0x20, 0x00, 0x02};
    for (std::size_t i = 0; i < sizeof bpb; ++i) s[i] = std::byte(bpb[i]);
    s[510] = std::byte(0x55);
    s[511] = std::byte(0xAA);
    auto info = fat::parse_boot_sector(s, 16u << 20);
    if (!info) {
      std::fprintf(stderr, "fuzz_badblocks: the fixed boot sector does not parse: %s\n",
                   info.error().message().c_str());
      std::abort();
    }
    return info->layout;
  }();
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto blocks = fat::parse_bad_block_list(text);
  if (!blocks) return 0;
  auto clusters = fat::bad_clusters(layout(), *blocks);
  if (!clusters) return 0;
  for (const std::uint32_t c : *clusters)
    if (c < 2 || c >= layout().cluster_count + 2) {
      std::fprintf(stderr, "fuzz_badblocks: bad_clusters gave cluster %u outside 2..%u\n", c,
                   layout().cluster_count + 1);
      std::abort();
    }
  return 0;
}
