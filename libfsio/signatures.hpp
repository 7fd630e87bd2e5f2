// What libblkid finds on a device: filesystems, partition tables, RAID and
// other superblocks. Formatting tools refuse to overwrite these unless forced,
// and wipe the ones they overwrite so no stale magic survives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace fsio {

class Device;

struct Signature {
  std::string type;        // "ext4", "vfat", "dos" (a partition table), ...
  std::string usage;       // "filesystem", "raid", "partition_table", ...
  std::uint64_t offset;    // byte offset of the magic, window-relative
  std::uint64_t length;    // bytes of the magic
  std::string label;       // when known
};

// Every signature libblkid recognises inside the device's window.
Result<std::vector<Signature>> probe_signatures(const Device& device);

// "ext4 filesystem (label 'data')" / "dos partition table"
std::string describe(const Signature& sig);

}  // namespace fsio
