// A transaction: the allocator, the time, and the ordered commit of
// everything changed in the metadata cache.
//
// Nothing but file data reaches the disk before commit(). Its order makes a
// crash at any write leave at worst leaked blocks or inodes (e2fsck
// repairs them), never a name pointing at unwritten data and never a block
// in use that the bitmaps call free:
//   1. fresh blocks (extent tree blocks, new directory blocks); flush, so
//      they and the file data are on the device before anything refers to them
//   2. bitmaps and descriptors with the allocations (not the frees)
//   3. inode table blocks with new inodes
//   4. the links: existing directory blocks and the directory's inode (a
//      directory whose blocks were copied or added switches here)
//   5. inodes that lost their last link
//   6. the frees, now that nothing refers to the freed blocks: bitmaps and
//      descriptors again; flush
//   7. superblock and descriptor backups, then the primary superblock; flush
// libext2fs writes bitmaps after inodes (the reference's order); allocating
// in the bitmaps first is what turns "referenced but free" (a later
// allocation would cross-link) into "allocated but unreferenced" (a leak).
#pragma once

#include <cstdint>

#include "ext/alloc.hpp"
#include "ext/inode.hpp"

namespace ext {

class Transaction {
 public:
  // `now`: timestamps for everything this transaction touches.
  Transaction(Filesystem& fs, Timestamp now) : fs_(fs), alloc_(fs), now_(now) {}
  Filesystem& fs() { return fs_; }
  Allocator& alloc() { return alloc_; }
  const Timestamp& now() const { return now_; }
  // Writes everything, in the order above, after prepare().
  fsio::Status commit();
  // What the commit could refuse or fail to read, done before its first
  // write: the frees checked against their bitmaps (Allocator::check_frees)
  // and every block the commit rewrites read into the cache. An operation
  // that writes data before the commit calls it before the data too.
  fsio::Status prepare();

 private:
  fsio::Status write_kind(MetaKind kind);
  fsio::Status write_groups();
  fsio::Status write_superblocks();

  Filesystem& fs_;
  Allocator alloc_;
  Timestamp now_;

 public:
  // The primary superblock is new (mkext4 -d writes it only after the
  // tree): its second sector goes out first, flushed, then the block with
  // the magic, as write_mkfs writes it.
  bool split_primary = false;
  // No superblock on the device describes this filesystem until commit()
  // writes them (mkext4 -d: write_mkfs held back the primary and the
  // backups, and erased the old ones): metadata may then go out before the
  // commit, in any order, so the cache can be kept small (spill_if_over).
  bool early_writes = false;
  // Keeps the cache near `limit` bytes: when it holds more, writes what
  // may go out before the commit and drops it (with early_writes all of
  // it, else what no structure on the device refers to yet:
  // Filesystem::spill_unseen). Only between whole operations: no span from
  // Filesystem::meta() may be held across it.
  fsio::Status spill_if_over(std::uint64_t limit) {
    if (fs_.cached_bytes() <= std::max(limit, spill_at_)) return {};
    FSIO_TRY(early_writes ? fs_.spill() : fs_.spill_unseen());
    spill_at_ = fs_.cached_bytes() + limit / 2;  // what must stay costs no rescan per operation
    return {};
  }

 private:
  std::uint64_t spill_at_ = 0;
};

// Sets i_atime/i_ctime/i_mtime/i_crtime and their _extra words (where the
// inode has room for them) to `t`; `mtime` overrides the modification time.
void set_inode_times(Inode& inode, const Timestamp& t, const Timestamp* mtime = nullptr, bool crtime = false);

}  // namespace ext
