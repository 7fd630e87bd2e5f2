// Opening a FAT volume to check or repair: the device (read-only for a
// check, read-write for a repair, with every refusal Device::open makes),
// its queue, the Volume, and the FAT copy to read.
//
// A check opens the target read-only (O_RDONLY: it cannot write, whatever
// the target allows). A target in use is then checked anyway, the way
// e2fsck -n checks a mounted filesystem, and `in_use` says so: the caller
// warns that what the mounted filesystem changes meanwhile can show up as
// damage. A repair refuses a target in use or read-only (Errc::busy,
// Errc::io from Device::open, naming the mount and the device it is reached
// through); nothing overrides that.
//
// The copy read is copy 0 unless its FAT[0] lacks the reserved bits and
// another copy's has them: fsck.fat (read_fat) then uses the second copy.
// choose_fat_copy (fsck.fat -F) names it instead.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "fat/volume.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/mount.hpp"

namespace fat {

struct CheckTargetOptions {
  bool repair = false;
  // A check that refuses what a repair would refuse (in use, read-only),
  // with the same errors, but opens read-only: a repair's dry run.
  bool refuse_like_repair = false;
  // Where the filesystem starts: `offset` bytes, or with offset_in_sectors
  // `offset` logical sectors of the target (512 for an image file).
  std::uint64_t offset = 0;
  bool offset_in_sectors = false;
};

// Device, queue and volume together: the volume points at the queue and
// the queue at the device, so they live on the heap and never move.
struct CheckTarget {
  std::optional<fsio::Device> device;
  std::optional<fsio::IoQueue> queue;
  std::unique_ptr<Volume> volume;
  std::optional<fsio::InUse> in_use;  // a read-only check of a target in use
  std::uint64_t offset_bytes = 0;
};

// Opens the device and its queue, and for a check finds what uses it; the
// volume is not read yet, so a caller can warn about a target in use
// before anything else. Errors: Device::open's and IoQueue's, naming the path.
fsio::Result<std::unique_ptr<CheckTarget>> open_check_target(const std::string& path,
                                                             const CheckTargetOptions& options);

// Reads the volume into target.volume, choosing the copy to read. Errors:
// Volume::open's (Errc::corrupt or unsupported: not a FAT volume we can
// read), naming the path.
fsio::Status open_check_volume(CheckTarget& target);

// fsck.fat -F NUM: read FAT copy `number` instead of the one
// open_check_volume chose, counted as fsck.fat counts them: 1 the first
// copy (copy 0 in fatck's messages), 2 the second, ...; 0 keeps the choice.
// A repair then writes that copy over the others where they differ.
// Errc::not_found, naming the path, when the volume has fewer copies.
fsio::Status choose_fat_copy(CheckTarget& target, std::uint32_t number);

}  // namespace fat
