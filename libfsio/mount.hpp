// Is this device or image in use by a mounted filesystem?
#pragma once

#include <optional>
#include <string>

#include "libfsio/result.hpp"

namespace fsio {

// Returns the mount point if `path` (a block device or a regular file) is
// mounted: by device number in /proc/self/mountinfo, or as the backing file
// of a loop device that is mounted (/sys/block/loopN/loop/backing_file), or
// nullopt when it is not. Errors when path cannot be stat'ed or
// /proc/self/mountinfo cannot be read (not knowing is not "not mounted").
Result<std::optional<std::string>> find_mount(const std::string& path);

}  // namespace fsio
