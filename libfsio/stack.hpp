// What a block device or image file is made of, down to the bottom of its
// stack, and whether two of them share storage.
//
// Writing through one name can destroy data reached through another: a
// second loop device over a mounted image, a loop device over a partition
// of a mounted disk, a `losetup -o` window over the same file. Comparing
// device numbers or paths misses all of these; comparing what lies at the
// bottom of both stacks does not. The in-use check (mount.hpp) resolves the
// target and every mounted or swapped device this way and compares them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace fsio {

inline constexpr std::uint64_t kToEnd = UINT64_MAX;  // a range that runs to the end

// How a block device on the way down reaches what lies below it.
enum class LinkKind : unsigned char {
  partition,  // a window of its disk
  loop,       // a loop device over a file or block device
  members,    // a dm or md device over its members (slaves/)
};

// A block device passed through on the way down.
struct StackLink {
  dev_t dev = 0;
  bool device_mapper = false;  // a dm device (sysfs has a dm/ directory)
  LinkKind kind = LinkKind::loop;
};

// A byte range of something at the bottom of a stack: a regular file,
// identified by st_dev/st_ino (so every path, bind mount or symlink that
// reaches it compares equal), or a block device that is not a partition,
// loop, dm or md device.
struct StorageExtent {
  bool is_file = false;
  dev_t dev = 0;                 // the file's st_dev, or the bottom device's number
  ino_t ino = 0;                 // files only
  std::uint64_t begin = 0;       // bytes into the file or device
  std::uint64_t end = kToEnd;    // exclusive; kToEnd: to its end
  std::string name;              // for messages: "/var/tmp/ext.img", "/dev/vda"
  std::vector<StackLink> links;  // the block devices above it, top first
};

// Resolves the byte range [begin, end) of a block device down its stack:
//   partition   -> its disk, shifted by the partition's start and cut at its
//                  size (sysfs start/size, 512-byte units);
//   loop device -> its backing file or block device, inside the loop's
//                  offset/sizelimit window (sysfs loop/);
//   dm, md      -> every member (sysfs slaves/), whole: a dm table's
//                  mapping is not in sysfs, so the whole member is assumed;
//   anything else is the bottom.
// A loop device whose backing file cannot be stat'ed (deleted, or outside
// our mount namespace) is its own bottom. Depth is bounded (16 levels), so
// a sysfs cycle cannot hang us. Reads sysfs only; opens no device. Never
// fails: what cannot be resolved stops the walk where it is.
std::vector<StorageExtent> resolve_block_storage(dev_t dev, std::uint64_t begin = 0, std::uint64_t end = kToEnd);

// The same for a path: a block device (by its device number) or a regular
// file (its own bottom). Errors when the path cannot be stat'ed; anything
// else (a directory, a FIFO) resolves to nothing.
Result<std::vector<StorageExtent>> resolve_storage(const std::string& path, std::uint64_t begin = 0,
                                                   std::uint64_t end = kToEnd);

// Do two extents share bytes? The same bottom and overlapping ranges --
// except when the two stacks part at two different dm devices right above
// a common device: device-mapper keeps the targets of its tables apart
// (LVM logical volumes on one physical volume), so siblings there are not
// each other's storage. Everything else that meets at the bottom does share.
bool shares_storage(const StorageExtent& a, const StorageExtent& b);

// "/dev/loop0" (sysfs uevent DEVNAME), or "block device 7:0" when unnamed.
std::string block_device_name(dev_t dev);

}  // namespace fsio
