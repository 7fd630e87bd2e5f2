// Is this device or image in use by a mounted filesystem or as swap?
//
// The contract every tool that writes relies on (Device::open calls it, so
// a tool gets it by opening for writing or with OpenOptions::check_write):
// a target is in use when anything that shares storage with it is mounted
// or active swap, however that storage is reached. The target and every
// mounted or swapped device are resolved down their stacks (stack.hpp:
// partitions to their disk, loop devices to their backing file or device
// within their offset/sizelimit window, dm and md devices to their members)
// and compared at the bottom. So all of these are in use:
//   - the device itself mounted, or one of its partitions, or a dm/md/loop
//     device stacked on it;
//   - an image file behind a mounted loop device, reached by any path
//     (symlink, bind mount, relative path: files compare by st_dev/st_ino);
//   - a second loop device over a mounted image, loop devices stacked
//     several deep, a `losetup -o` window that overlaps a mounted window of
//     the same file (windows that do not overlap do not conflict);
//   - a loop device over a partition of a mounted disk, and the reverse;
//   - active swap (a swap file, or a swap device reached any of these ways);
//   - any other block device sharing storage with it that someone holds
//     open exclusively (O_EXCL: another fsio tool, a partitioner, md/dm
//     built on it, a mount in another namespace): the image file behind a
//     held loop device, a second loop device beside it. An attached loop
//     device that nobody holds does not make its file in use.
// Only `begin..end` of the target is compared, so a window of an image can
// be written while a disjoint window of it is mounted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"
#include "libfsio/stack.hpp"

namespace fsio {

inline constexpr std::string_view kSwap = "[SWAP]";  // what lsblk shows as the mount point
inline constexpr std::string_view kHeld = "[HELD]";  // held open exclusively (O_EXCL), not mounted

struct InUse {
  std::string where;       // the mount point, kSwap or kHeld
  std::string device;      // what is mounted, swapped on or held: "/dev/loop0", or the swap file
  std::string shared;      // the storage both use: "/var/tmp/ext.img", "/dev/vda"; "" when
                           // that is the target itself (a file under a mounted loop device)
  bool direct = false;     // the target itself is what is mounted or swapped on
  bool read_only = false;  // a mount whose filesystem is read-only (superblock
                           // option "ro" in mountinfo); never for swap
};

// The first use found of bytes [begin, end) of path (a block device or a
// regular file), or nullopt when nothing sharing them is mounted, swap or
// held. Mounts and swap come first. Errors when path cannot be stat'ed or
// /proc/self/mountinfo cannot be read (not knowing is not "not mounted").
// Reads /proc and sysfs, and opens read-only with O_EXCL, for a moment,
// each other block device that shares storage with the target (never the
// target itself: the caller's own O_EXCL open asks about that, and a
// descriptor this process holds on another device counts as held). A
// device without a node under /dev cannot be asked and is not.
Result<std::optional<InUse>> find_use(const std::string& path, std::uint64_t begin = 0, std::uint64_t end = kToEnd);

// Every use of bytes [begin, end) of path, one per mount or swap area, as
// find_use finds them. A reader that may copy from a filesystem mounted
// read-only (fsimg save) checks that each use is a read-only mount.
Result<std::vector<InUse>> find_uses(const std::string& path, std::uint64_t begin = 0, std::uint64_t end = kToEnd);

// The mount point (or kSwap, kHeld) of the first use of the whole of path, as
// find_use finds it; nullopt when it is in no use.
Result<std::optional<std::string>> find_mount(const std::string& path);

// "mounted on /mnt", "in use as swap" or (kHeld) "in use by a mount, md/dm
// or another program" (Device::open's words for EBUSY), for messages.
inline std::string describe_use(const std::string& where) {
  if (where == kSwap) return "in use as swap";
  if (where == kHeld) return "in use by a mount, md/dm or another program";
  return "mounted on " + where;
}

// The same with the way it is reached: "mounted on /mnt through /dev/loop0
// (both use /var/tmp/ext.img)", "mounted on /mnt through /dev/loop0, which
// is stacked on it", or just "mounted on /mnt" when direct; for kHeld "in
// use by a mount, md/dm or another program: /dev/loop0 is held open
// exclusively and is stacked on it" (or "... (both use e.img)").
std::string describe_use(const InUse& use);

}  // namespace fsio
