// What libblkid finds on a device: filesystems, partition tables, RAID and
// other superblocks. Formatting tools refuse to overwrite these unless forced,
// and wipe the ones they overwrite so no stale magic survives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace fsio {

class Device;

struct Signature {
  std::string type;      // "ext4", "vfat", "dos" (a partition table), ...
  std::string usage;     // "filesystem", "raid", "partition_table", ...
  std::uint64_t offset;  // byte offset of the magic, window-relative
  std::uint64_t length;  // bytes of the magic
  std::string label;     // when known
};

// Every signature libblkid recognises inside the device's window.
Result<std::vector<Signature>> probe_signatures(const Device& device);

// "ext4 filesystem (label 'data')" / "dos partition table"
std::string describe(const Signature& sig);

// The check every tool makes before it overwrites bytes [offset, offset +
// length) of path (window-relative to nothing: offsets into the file or
// device itself; length nullopt = to the end). Probes that range through its
// own read-only, buffered open, so nothing is opened for writing (or grown)
// before the answer. Returns the signatures found, offsets relative to
// `offset`, so a caller that goes ahead can wipe them; with any found and
// !force, Errc::busy: "PATH: holds ext4 filesystem; ACTION would destroy it
// (use --force to overwrite it)". A path that does not exist yet holds nothing.
Result<std::vector<Signature>> check_overwrite(const std::string& path, std::uint64_t offset,
                                               std::optional<std::uint64_t> length, bool force,
                                               const std::string& action);

}  // namespace fsio
