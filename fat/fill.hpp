// fill: preallocate files on an existing FAT12/16/32 volume, every FAT copy
// kept in step (what fatfill does). The volume may hold files already.
//
//   auto vol = FSIO_TRY(fat::Volume::open(queue, {offset}));
//   FillOptions o; o.dir = "/rec"; o.names = FSIO_TRY(expand_names("CAM%03d.MP4", 0, 16)); o.size = 1 << 30;
//   FillReport r = FSIO_TRY(fill(vol, o, &progress));
//
// Everything that can refuse is decided before the first write (plan()):
// a dirty volume, FAT copies that differ, a name that exists (unless
// force), a directory path through a file, a root directory that is full,
// too little free space, no free run long enough under `contiguous`, a
// file to replace whose chain another entry's chain reaches (a cross-link:
// freeing it would give away clusters the other file uses). The
// plan allocates every cluster in memory (alloc.hpp); --dry-run stops there.
//
// Write order, for each file (with sync) or each batch of files:
//   1. data: the file's clusters zeroed (unless !zero), a new directory's
//      cluster ("." and "..", zeros), a directory's new cluster (zeros);
//   2. the FAT: the new chains in every copy (one plug, or one request per
//      sector per copy with MirrorMode::serial), then a flush. Data and FAT
//      share the plug: nothing points at either until step 3. A directory
//      that grows is the exception: its new cluster is linked into a chain
//      that is already reachable, so its zeros are flushed before the link;
//   3. the directory entries (and, with sync, FSInfo), then a flush with
//      sync. FSInfo needs no order against the entries: both come after the
//      flushed FAT, so a crash between them leaves at most a stale count;
//   4. a replaced file (force): its old chain is freed only after the entry
//      that pointed at it is durable;
//   5. at the end, FSInfo's free count and next-free hint, and a flush.
// A crash after any write leaves at most clusters allocated that no entry
// reaches (lost clusters) and a stale free count, which fsck.fat repairs;
// never an entry pointing at free or foreign clusters, never a change to
// another file. New clusters are never handed out twice, and a replaced
// file's clusters are not reused in the same run.
//
// InterruptGuard is polled between batches (with sync, between files) and
// between zero-fill plugs; an interrupted run finishes nothing half-way,
// writes FSInfo for what is done and returns Errc::interrupted. Any error
// after writing began says how many files were completed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fat/alloc.hpp"
#include "fat/dirent.hpp"
#include "fat/volume.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"
#include "libfsio/stats.hpp"

namespace fat {

// DIR_FileSize is 32 bits: 4 GiB - 1 is the largest file FAT holds.
inline constexpr std::uint64_t kMaxFileSize = 0xFFFFFFFFull;
// A directory holds at most 65536 slots (kMaxDirBytes), so no run can add more files to one.
inline constexpr std::uint32_t kMaxFillCount = 65536;

enum class MirrorMode {
  batched,  // every dirty FAT sector of every copy in one plug, merged
  serial,   // one request per FAT sector per copy, each waited for (Linux before batching)
};

struct FillOptions {
  std::string dir = "/";           // created as needed, like mkdir -p
  std::vector<std::string> names;  // one new file per name, in this order
  std::uint64_t size = 0;          // bytes per file, at most kMaxFileSize
  bool contiguous = false;         // refuse unless every file fits in one run
  bool zero = true;                // zero the clusters (false exposes old contents)
  bool sync = false;               // each file durable before the next begins
  bool force = false;              // replace files that exist (never directories)
  bool dry_run = false;            // plan only: nothing is written
  MirrorMode mirror = MirrorMode::batched;
  DosDateTime when = kDosEpoch;  // creation and modification time of what is made
  // Without sync, files are written in batches: a batch ends when its FAT
  // changes reach this many bytes (dirty FAT blocks stay in memory until
  // flushed) or it holds max_batch_files files.
  std::uint64_t batch_fat_bytes = 16u << 20;
  std::uint32_t max_batch_files = 4096;
  std::uint64_t zero_plug_bytes = 256u << 20;  // zero fill per plug: progress and Ctrl-C granularity
};

struct FilledFile {
  std::string path;  // "/DIR/NAME" as given
  std::uint32_t size = 0;
  std::vector<Extent> extents;  // in chain order; empty for size 0
  bool replaced = false;        // an existing file of that name was replaced
  std::uint32_t first_cluster() const { return extents.empty() ? 0 : extents.front().first; }
  std::uint64_t clusters() const;
};

struct FillReport {
  Layout layout;
  std::vector<std::string> created_dirs;  // in the order they were (or would be) made
  std::vector<FilledFile> files;          // every planned file; the first files_done were written
  std::uint32_t files_done = 0;
  bool dry_run = false;
  std::uint32_t free_before = 0;  // free clusters before (counted in the FAT)
  std::uint32_t free_after = 0;
  std::uint64_t clusters_allocated = 0;  // for files and directories
  std::uint64_t fragments = 0;           // extents over all files
  std::uint64_t clusters_freed = 0;      // of replaced files
  std::uint64_t bytes_zeroed = 0;        // data and new directory clusters
  std::uint32_t fat_copies = 0;
  std::uint64_t fat_sectors_per_copy = 0;  // FAT sectors written to each copy
  std::uint64_t fat_requests = 0;          // FAT write requests queued, all copies, before merging
  std::uint64_t dir_sectors = 0;           // directory sectors written
  std::uint64_t fsinfo_writes = 0;
  std::uint64_t flushes = 0;          // ordering points (device flushes)
  fsio::IoStats write_io;             // the queue's counters over the writing phase alone
  double plan_seconds = 0;            // wall time: checks, free-space scan, plan
  double write_seconds = 0;           // wall time: the writing phase
  double read_ahead_seconds = 0;      // of which: reading the directories and FAT blocks it changes
  std::vector<std::string> warnings;  // findings the run goes on with
};

// The FAT cache fill works best with (VolumeOptions::fat_cache): 1 MiB
// blocks, so linking a 256 MiB file of 512-byte clusters (2 MiB of FAT32
// entries) reads two blocks, not 32, and room for the blocks a run changes,
// which are read ahead in one plug before the first write: 48 MiB holds 16
// such files and their edges (a bigger run reads the rest a batch at a
// time). Memory stays bounded: at most this plus one batch's dirty blocks
// (FillOptions::batch_fat_bytes).
inline FatCacheOptions fill_fat_cache() {
  FatCacheOptions o;
  o.block_bytes = 1u << 20;
  o.cache_bytes = 48u << 20;
  return o;
}

// "FILL%04d.BIN" with first 0 and count 3 -> FILL0000.BIN, FILL0001.BIN,
// FILL0002.BIN. The pattern holds at most one %d conversion (flags: '0'
// and a width up to 10), '%%' for a percent sign; with count > 1 it must
// hold one. Errc::invalid_argument naming the pattern otherwise, or when
// first + count - 1 overflows.
fsio::Result<std::vector<std::string>> expand_names(std::string_view pattern, std::uint64_t first, std::uint64_t count);

// "/DIR/SUB/NAME" -> {"/DIR/SUB", "NAME"}; Errc::invalid_argument for a
// path without a name ("/", "/DIR/") or with "." or ".." parts.
fsio::Result<std::pair<std::string, std::string>> split_path(std::string_view path);

// The time new entries get: SOURCE_DATE_EPOCH's (UTC) when given (its
// seconds), else the clock's in local time, as Linux's vfat stores it.
DosDateTime fill_time(std::optional<std::int64_t> source_date_epoch);

// Plans and (unless dry_run) writes. Errors before the first write leave the
// volume untouched: Errc::busy for refusals (dirty, copies differ, exists,
// no space), Errc::invalid_argument for names and paths FAT cannot hold.
fsio::Result<FillReport> fill(Volume& volume, const FillOptions& options, fsio::Progress* progress = nullptr);

}  // namespace fat
