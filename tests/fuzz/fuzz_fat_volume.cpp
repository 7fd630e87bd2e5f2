// FAT read path: boot sector, BPB, FSInfo, backup boot sector and FAT head
// (fat::Volume::open), then every directory reachable from the root (long
// and short names, dot entries, the chain of each directory), and every
// file's chain walked and read, as fatfill and fatck -n read them.
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>

#include "fat/chain.hpp"
#include "fat/directory.hpp"
#include "fat/volume.hpp"
#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/fuzz/mem_image.hpp"

namespace {

constexpr unsigned kMaxDepth = 16;            // a loop of directories must end
constexpr std::size_t kMaxDirectories = 256;  // and so must a wide tree
constexpr std::uint64_t kMaxFileBytes = 1u << 20;

void walk(fat::Volume& vol, fat::Directory& dir, unsigned depth, std::set<std::uint32_t>& seen) {
  (void)dir.end_slot();
  (void)dir.problems();
  (void)dir.find("README.TXT");
  for (const fat::Entry& e : dir.entries()) {
    if (e.is_label()) continue;
    auto chain = fat::walk_chain(vol.fat(), e.first_cluster, [](std::uint32_t, std::uint32_t) { return true; });
    (void)fat::describe(chain ? *chain : fat::Chain{});
    if (e.is_dot()) continue;
    if (e.is_directory()) {
      if (depth >= kMaxDepth || seen.size() >= kMaxDirectories || !seen.insert(e.first_cluster).second) continue;
      auto sub = fat::Directory::open(vol, e);
      if (sub) walk(vol, *sub, depth + 1, seen);
      continue;
    }
    std::uint64_t got = 0;
    (void)fat::read_file(vol, e.first_cluster, std::min<std::uint64_t>(e.size, kMaxFileBytes),
                         [&](std::span<const std::byte> piece) {
                           got += piece.size();
                           return true;
                         });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  auto& image = fsio::fuzz::MemImage::load(in, fsio::fuzz::padded_size(size, fsio::fuzz::fat_declared_size(in)));
  fsio::OpenOptions oo;
  oo.direct = false;
  auto dev = fsio::Device::open(image.path(), oo);
  if (!dev) return 0;
  auto queue = fsio::IoQueue::create(*dev, fsio::make_sync_engine(dev->fd(), 8));
  if (!queue) return 0;
  auto vol = fat::Volume::open(*queue);
  if (!vol) return 0;
  (void)vol->allocation_hint();
  auto root = fat::Directory::open_root(*vol);
  if (!root) return 0;
  std::set<std::uint32_t> seen;
  walk(*vol, *root, 0, seen);
  return 0;
}
