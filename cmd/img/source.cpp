// Choosing what to save: the mount check, filesystem detection, raw maps.
#include "cmd/img/source.hpp"

#include <algorithm>

#include "libfsio/device.hpp"
#include "libfsio/mount.hpp"
#include "libfsio/signatures.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

// Refuses a source whose storage is mounted read-write, used as swap or
// held open exclusively by another program (which may be writing it);
// notes a read-only mount.
fsio::Status check_not_written(const std::string& path, const fsio::Device& dev, std::vector<std::string>& notes) {
  const auto uses = FSIO_TRY(fsio::find_uses(path, dev.offset(), dev.offset() + dev.size()));
  for (const auto& use : uses) {
    if (use.where == fsio::kHeld)
      return make_error(Errc::busy, fsio::describe_use(use) +
                                        "; its blocks may change while they are saved (save it when that program "
                                        "has let go of it)")
          .at(path);
    if (use.where == fsio::kSwap || !use.read_only)
      return make_error(Errc::busy, fsio::describe_use(use) + (use.where == fsio::kSwap ? "" : " read-write") +
                                        "; its blocks would change while they are saved (unmount it, or remount it "
                                        "read-only: mount -o remount,ro " +
                                        use.where + ")")
          .at(path);
    notes.push_back("mounted read-only: " + fsio::describe_use(use));
  }
  return {};
}

fsio::Result<FsChoice> detect(const fsio::Device& dev) {
  const auto sigs = FSIO_TRY(fsio::probe_signatures(dev));
  for (const auto& s : sigs) {
    if (s.type == "vfat") return FsChoice::fat;
    if (s.type == "ext2" || s.type == "ext3" || s.type == "ext4") return FsChoice::ext;
  }
  if (sigs.empty())
    return make_error(Errc::unsupported,
                      "libblkid finds no filesystem; use --fs raw to save every "
                      "non-zero block")
        .at(dev.path());
  const std::string found = fsio::describe(sigs.front());
  const bool table = sigs.front().usage == "partition_table";
  return make_error(Errc::unsupported, "holds " + found +
                                           "; fsimg saves FAT and ext2/3/4 by their "
                                           "used blocks" +
                                           (table ? " (give a partition, or --offset to one)" : "") +
                                           "; use --fs raw to save every non-zero block")
      .at(dev.path());
}

fsio::Result<fsio::Device> open_source(const std::string& path, const SourceOptions& o) {
  fsio::OpenOptions oo;
  oo.direct = true;
  oo.offset = o.offset;
  return fsio::Device::open(path, oo);
}

}  // namespace

fsio::Result<FsChoice> parse_fs_choice(const std::string& t) {
  if (t == "auto") return FsChoice::automatic;
  if (t == "fat" || t == "vfat") return FsChoice::fat;
  if (t == "ext4" || t == "ext" || t == "ext2" || t == "ext3") return FsChoice::ext;
  if (t == "raw") return FsChoice::raw;
  return make_error(Errc::invalid_argument, "--fs " + t + ": expected auto, fat, ext4 or raw");
}

std::uint32_t fat_block_size(std::uint64_t data_start_bytes, std::uint64_t cluster_bytes) {
  std::uint64_t bs = std::min<std::uint64_t>(4096, cluster_bytes);
  while (bs > 512 && (data_start_bytes % bs || cluster_bytes % bs)) bs /= 2;
  return std::uint32_t(bs);
}

fsio::Result<Source> map_raw(const std::string& path, const SourceOptions& o) {
  auto dev = FSIO_TRY(open_source(path, o));
  const std::uint64_t size = dev.size();
  if (size == 0) return make_error(Errc::invalid_argument, "empty; nothing to save").at(path);
  const std::uint32_t bs = size % 4096 == 0 ? 4096 : 512;
  if (size % bs)
    return make_error(Errc::unsupported, "size " + std::to_string(size) +
                                             " is not a whole number of 512-byte sectors; --fs raw saves whole sectors")
        .at(path);
  Source p;
  p.header.fs_type = FsType::raw;
  p.header.block_size = bs;
  p.header.source_bytes = p.header.image_bytes = size;
  p.header.block_count = size / bs;
  BlockMap map;
  map.add(0, p.header.block_count);
  p.header.runs = map.runs();
  p.header.mapped_blocks = map.blocks();
  p.detail = "raw, every block of " + std::to_string(bs) + " bytes that is not all zeros";
  return p;
}

fsio::Result<Source> map_source(const std::string& path, const SourceOptions& o) {
  std::vector<std::string> notes;
  FsChoice fs = o.fs;
  {
    auto dev = FSIO_TRY(open_source(path, o));
    FSIO_TRY(check_not_written(path, dev, notes));
    if (fs == FsChoice::automatic) fs = FSIO_TRY(detect(dev));
  }
  Source p;
  switch (fs) {
    case FsChoice::fat: p = FSIO_TRY(map_fat(path, o)); break;
    case FsChoice::ext: p = FSIO_TRY(map_ext(path, o)); break;
    default: p = FSIO_TRY(map_raw(path, o)); break;
  }
  p.path = path;
  p.offset = o.offset;
  p.notes.insert(p.notes.begin(), notes.begin(), notes.end());
  return p;
}

}  // namespace img
