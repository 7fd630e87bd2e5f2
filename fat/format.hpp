// format_volume: write a fresh FAT12/16/32 volume laid out by compute_geometry.
//
// What is written (mkfs.fat writes the same areas): every reserved sector
// (boot sector, FSInfo and their FAT32 backups, zeros elsewhere), every
// sector of every FAT copy, and the root directory (FAT12/16: the whole root
// region; FAT32: its first cluster). The data area is never touched, except
// for the foreign-signature ranges the caller asks us to wipe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fat/boot.hpp"
#include "fat/geometry.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"

namespace fat {

// A byte range of the device window to zero (from probe_signatures).
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// mkfs.fat 4.2 --invariant: volume id 0x1234ABCD and timestamp 1426325213
// (2015-03-14 09:26:53 UTC), as observed in its output.
inline constexpr std::uint32_t kInvariantVolumeId = 0x1234ABCD;
inline constexpr std::int64_t kInvariantTime = 1426325213;

// Where the volume id and label timestamp come from.
struct VolumeIdentity {
  std::uint32_t volume_id = 0;
  std::int64_t time = 0;  // seconds since the epoch
  bool utc = true;        // encode `time` in UTC (reproducible) or local time
};

// Precedence: -i wins for the id; --invariant fixes id and time;
// SOURCE_DATE_EPOCH (the caller passes its seconds, read by the tool) fixes
// the time and derives the id from it the way mkfs.fat derives it from the
// clock (seconds << 20); otherwise the clock: id = seconds << 20 |
// microseconds, local time.
VolumeIdentity resolve_identity(const FormatOptions& options, std::optional<std::int64_t> source_date_epoch);

// What a volume made with content (mkfat -d, tree_fill.hpp) holds besides
// the empty tables: the FATs' first bytes and the root directory's instead
// of an empty head, FSInfo's numbers, and a writer for the data area that
// format_volume calls once the old boot sector is erased and before the
// tables, so that the boot sector, last, is what makes the volume exist.
struct FormatContent {
  std::span<const std::byte> fat;   // each copy's first bytes, whole sectors (media entry, chains, bad marks)
  std::span<const std::byte> root;  // the root directory's first bytes, whole sectors, at most its
                                    // region (FAT12/16) or first cluster (FAT32); slot 0 is left for the label
  std::uint32_t free_clusters = 0;  // FSInfo (FAT32)
  std::uint32_t next_free = 0;
  std::function<fsio::Status(fsio::IoQueue&, fsio::Progress*)> write_data;
};

struct FormatExtras {
  std::vector<ByteRange> wipe;              // zeroed in the same pass
  std::optional<VolumeIdentity> identity;   // default: resolve_identity(options, nullopt)
  BootOptions boot;                         // boot message (-m), MBR disk signature
  std::vector<std::uint32_t> bad_clusters;  // marked bad in every FAT copy (bad_clusters())
  const FormatContent* content = nullptr;   // mkfat -d: the tree; its `fat` carries the bad marks
};

struct FormatReport {
  Layout layout;  // what was written (Geometry without the format-only parts)
  std::uint32_t volume_id = 0;
  std::string label;                // as stored, trailing spaces trimmed; "" for none
  std::uint64_t bytes_written = 0;  // metadata and wipes
  std::uint64_t bytes_wiped = 0;    // of which foreign-signature wipes
  std::uint64_t bad_clusters = 0;   // marked bad in the FATs
  unsigned plugs = 0;
  unsigned flushes = 0;
};

// Bytes format_volume will write (for sizing a progress bar).
std::uint64_t format_bytes(const Geometry& geometry);

// Writes the volume through the queue: a few plugs of large merged requests
// (one zeroed buffer of up to 4 MiB referenced by many requests), and a
// flush after each phase. Phases, for crash safety:
//   1. zero the boot sector (and FAT32 backup boot sector), flush: from here
//      on no old boot sector describes a half-written new layout;
//   2. with content, its data area (write_data); then everything else
//      (reserved area, FATs, root directory, wipes), flush;
//   3. backup boot sector, flush, then the boot sector, flush.
// A crash before phase 3 completes leaves a device without a valid-looking
// FAT boot sector (blkid and the kernel see nothing) rather than an old or
// new boot sector over inconsistent tables. Every request is whole
// filesystem sectors at sector offsets: with O_DIRECT the device's DIO
// alignment must not exceed the sector size (else Errc::unsupported).
// Errc::interrupted if InterruptGuard fired: before phase 1 ("the target is
// unchanged") or between plugs of phase 2 (the message says the old boot
// sector is erased, no filesystem is left and the format must be re-run).
// Every error's message starts with the device path.
fsio::Result<FormatReport> format_volume(fsio::IoQueue& queue, const Geometry& geometry, const FormatOptions& options,
                                         fsio::Progress* progress, const FormatExtras& extras = {});

}  // namespace fat
