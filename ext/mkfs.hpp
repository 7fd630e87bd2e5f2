// Making an ext4 filesystem as mke2fs 1.47.0 makes it, in two calls:
// plan_mkfs decides everything (nothing is opened for writing, every
// refusal happens here), write_mkfs writes it through an IoQueue.
//
// What is written, and in what order (a crash or Ctrl-C at any point
// leaves either no filesystem blkid or e2fsck recognise, or a complete one):
//   0. the discard mke2fs makes of an existing target (punch on a file,
//      BLKDISCARD on a device), when planned;
//   1. bytes 0-4095 zeroed (the old primary superblock; a BSD disklabel at
//      byte 64 is kept, as mke2fs keeps it) and every old ext2/3/4
//      superblock e2fsck would fall back to (group 1's for each block
//      size), then a flush;
//   2. everything mke2fs zeroes (the last 64-128 KiB, the inode-table
//      blocks it initialises, the journal) by fallocate where the target
//      can, else by written zeros; then the descriptor tables, bitmaps,
//      inode-table blocks, directories, resize inode, journal superblock
//      and extent leaf, orphan file, merged into large sorted writes; flush;
//   3. the backup superblocks; flush;
//   4. the primary superblock: its second sector, then (with a flush
//      between) the sector holding the magic, so no torn write can show a
//      half-written superblock; flush.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ext/mkfs_build.hpp"
#include "ext/mkfs_kbytes.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"

namespace ext {

struct MkfsPlan {
  MkfsParams params;
  MkfsLayout layout;
  MkfsFiles files;
  ItableInit init;
  std::uint64_t kbytes = 0;
  // mke2fs discards an existing target (not a file it creates) unless
  // nodiscard; on a file the punched holes read as zeros, so it leaves the
  // inode tables alone and marks them zeroed (init.zeroed).
  bool discard = false;
  bool discard_zeroes = false;
  std::uint64_t fs_bytes() const { return layout.l.blocks_count * layout.l.block_size; }
};

fsio::Result<MkfsPlan> plan_mkfs(const MkfsRequest& req, const MkfsTarget& target, const Mke2fsConf& conf,
                                 std::array<std::uint8_t, 16> (*random16)());

// After a discard that failed, or did not zero: the tables are not zeroed.
fsio::Status replan_not_zeroed(MkfsPlan& plan);

struct MkfsReport {
  std::uint64_t bytes_written = 0;  // through the queue (metadata and any written zeros)
  std::uint64_t bytes_zeroed = 0;   // of which, or besides: zeroed by fallocate
  std::uint64_t zero_writes = 0;    // bytes of zeros that had to be written
  bool discarded = false;           // the discard succeeded
  std::string discard_error;        // why it did not (formatting went on)
  unsigned plugs = 0, flushes = 0;
};

// Writes the planned filesystem into the queue's device window (its
// offset 0 is the filesystem's block 0; the window must hold fs_bytes()).
// Errc::interrupted when InterruptGuard fired: the message says what the
// target holds then. No error is wrapped with the device path: IoQueue and
// Device name it. With `held_primary` phases 3 and 4 are left out: the
// primary superblock's 1024 bytes go there instead, for mkext4 -d's commit
// to write with the backups once the tree is in (until then the target
// holds no superblock, primary or backup, that blkid or e2fsck would find).
fsio::Result<MkfsReport> write_mkfs(fsio::IoQueue& queue, MkfsPlan& plan, fsio::Progress* progress,
                                    std::vector<std::byte>* held_primary = nullptr);

// The bytes write_mkfs writes and zeroes, for a progress bar.
std::uint64_t mkfs_work_bytes(const MkfsPlan& plan);

}  // namespace ext
