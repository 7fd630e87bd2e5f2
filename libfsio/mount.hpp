// Is this device or image in use by a mounted filesystem?
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "libfsio/result.hpp"

namespace fsio {

// Returns the mount point if `path` (a block device or a regular file) is
// mounted: by device number in /proc/self/mountinfo (itself, a partition, or
// a device stacked on it), or as the backing file of a loop device that is
// mounted (/sys/block/loopN/loop/backing_file); kSwap if it is active swap;
// nullopt when it is in none of these uses. Errors when path cannot be stat'ed or
// /proc/self/mountinfo cannot be read (not knowing is not "not mounted").
inline constexpr std::string_view kSwap = "[SWAP]";  // what lsblk shows as the mount point

Result<std::optional<std::string>> find_mount(const std::string& path);

// "mounted on /mnt" or "in use as swap", for messages.
inline std::string describe_use(const std::string& where) {
  return where == kSwap ? std::string("in use as swap") : "mounted on " + where;
}

}  // namespace fsio
