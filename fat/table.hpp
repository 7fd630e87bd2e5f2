// FatTable: the File Allocation Table of a volume on disk, read on demand
// through a bounded cache, written back to EVERY copy in one plug.
//
// A 2 TiB FAT32 volume has a 268 MB FAT per copy, so no copy is held whole.
// The FAT is read in blocks (64 KiB by default; a FAT12 FAT, at most 6 KiB of
// entries, is one block) and at most cache_bytes of clean blocks are kept,
// least recently used first out. set() marks the sectors it touches dirty (a
// FAT12 entry that straddles a sector boundary dirties both, see fat_entry.hpp)
// and pins its block until clear_dirty(): dirty blocks are never evicted, so
// the cache grows by what a writer changes between two flushes. A writer
// bounds that by flushing per file or per batch (dirty_sectors()).
//
// queue_dirty() puts every dirty sector of every copy into one plug: adjacent
// dirty sectors go out as one request per copy and IoQueue merges further.
// That is the batched, mirrored write that took the kernel's sync-mount
// allocation from 49.81 s to 12.26 s (DESIGN.md lesson 1).
//
// Reads come from the active copy (copy 0 unless FAT32 mirroring is off,
// Layout::active_fat), or the copy FatCacheOptions::read_copy names. scan() and compare_copies() stream the whole table
// in large reads (stream_bytes, 4 MiB by default) without going through the cache; scan() sees pending set()s,
// compare_copies() sees the disk.
//
// Not thread-safe. Holds a pointer to the IoQueue: the queue must outlive the
// table and must not move. Entry numbers are FAT entries: 0 and 1 are the
// reserved entries, 2..cluster_count+1 the clusters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "fat/fat_entry.hpp"
#include "fat/layout.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/result.hpp"

namespace fat {

struct FatCacheOptions {
  std::size_t cache_bytes = 4u << 20;   // clean blocks kept; dirty blocks come on top
  std::size_t block_bytes = 64u << 10;  // unit of on-demand reads (rounded to sectors)
  std::size_t stream_bytes = 4u << 20;  // per read in scan() and compare_copies()
  // Read this copy instead of the active one (a checker that finds copy 0's
  // FAT[0] damaged reads another copy, as fsck.fat does). Writes still go to
  // every copy. Must be < BPB_NumFATs.
  std::optional<std::uint32_t> read_copy;
};

struct FatTableStats {
  std::uint64_t block_reads = 0;  // cache misses (one read request each)
  std::uint64_t block_hits = 0;
  std::uint64_t stream_reads = 0;  // plugs issued by scan/compare_copies
  std::uint64_t bytes_read = 0;
};

// One FAT copy that differs from the active copy (byte for byte, over the
// bytes holding entries 0..cluster_count+1, as fsck.fat compares them).
struct CopyMismatch {
  std::uint32_t copy = 0;
  std::uint32_t first_entry = 0;   // first entry whose bytes differ
  std::uint64_t first_sector = 0;  // sector of that byte, counted from the copy's start
  std::uint64_t entries = 0;       // entries whose bytes differ
};

class FatTable {
 public:
  // Checks that the layout can be a FAT (sector size, FAT size against the
  // cluster count, active copy): Errc::corrupt naming the field otherwise.
  // With O_DIRECT, a device alignment above the sector size is
  // Errc::unsupported. Reads nothing yet.
  static fsio::Result<FatTable> open(fsio::IoQueue& queue, const Layout& layout, const FatCacheOptions& options = {});

  FatTable(FatTable&&) noexcept = default;
  FatTable& operator=(FatTable&&) noexcept = default;

  const Layout& layout() const { return layout_; }
  FatType type() const { return layout_.type; }
  std::uint32_t entry_count() const { return layout_.entry_count(); }
  // The copy get(), scan() and compare_copies() read: the active copy unless
  // FatCacheOptions::read_copy chose another.
  std::uint32_t read_copy() const { return read_copy_; }

  // Entry n's value (FAT32: low 28 bits). n >= entry_count() is
  // Errc::invalid_argument; a failed read is Errc::io.
  fsio::Result<std::uint32_t> get(std::uint32_t n);
  // Stores value (FAT32 keeps the entry's reserved high nibble) and marks the
  // sector(s) dirty. Same errors as get().
  fsio::Status set(std::uint32_t n, std::uint32_t value);
  // A run of a chain: entries first .. first+count-1 each point at the next
  // number, and the last holds last_value (an end-of-chain mark, or the
  // first cluster of the chain's next run). The same as count set() calls,
  // done a block at a time (a writer linking a 4 GiB file sets millions).
  fsio::Status set_chain(std::uint32_t first, std::uint32_t count, std::uint32_t last_value);

  // Reads the blocks holding these entry ranges (first, count) that are not
  // cached yet, all in one plug, so a writer about to set them waits for
  // one round of merged reads instead of one read per block. At most as
  // many blocks as the cache keeps clean are read; the rest come on demand.
  fsio::Status prefetch(std::span<const std::pair<std::uint32_t, std::uint32_t>> ranges);

  std::uint64_t dirty_sectors() const { return dirty_count_; }
  bool is_dirty(std::uint64_t sector) const;  // sector within a copy
  // Calls write(offset, bytes) for each run of adjacent dirty sectors within
  // a block, copy 0 first, then copy 1, ...; offsets are Device-window
  // offsets. Returns the number of calls. The bytes stay valid and unchanged
  // until the next set() or clear_dirty().
  std::size_t for_each_dirty_run(const std::function<void(std::uint64_t, std::span<const std::byte>)>& write) const;
  // Queues every dirty run of every copy into the plug. Does not clear the
  // dirty bits, so a failed finish() can be retried; call clear_dirty() after
  // a successful one, and no set() in between. Returns the requests queued.
  std::size_t queue_dirty(fsio::IoQueue::Plug& plug) const;
  void clear_dirty();
  // One plug of queue_dirty(), finished, then clear_dirty(). Returns the
  // requests queued (before IoQueue's merging).
  fsio::Result<std::size_t> flush();

  // Streams entries [first, entry_count()) of the active copy, with pending
  // set()s applied, calling visit(first_entry_of_span, values) in order for
  // each slice of at most 65536 entries; visit returns false to stop early.
  using ScanVisitor = std::function<bool(std::uint32_t, std::span<const std::uint32_t>)>;
  fsio::Status scan(const ScanVisitor& visit, std::uint32_t first = 0);
  // Free entries among the clusters (entries 2..cluster_count+1).
  fsio::Result<std::uint32_t> count_free();
  // Every copy against the one read (read_copy()), streamed; empty when all agree.
  fsio::Result<std::vector<CopyMismatch>> compare_copies();
  // scan() and compare_copies() in one pass over the table: each chunk is
  // read from every copy in one plug, compared as the disk holds it, then
  // visited with pending set()s applied. A checker that needs both reads the
  // table once instead of twice. With one copy it is scan().
  fsio::Result<std::vector<CopyMismatch>> scan_and_compare(const ScanVisitor& visit, std::uint32_t first = 0);

  const FatTableStats& stats() const { return stats_; }

 private:
  struct Block {
    fsio::AlignedBuffer buf;
    bool dirty = false;
    std::list<std::uint64_t>::iterator lru;  // valid while clean
  };
  FatTable(fsio::IoQueue& queue, const Layout& layout, std::size_t block_bytes, std::size_t cache_blocks,
           std::size_t stream_bytes, std::uint32_t read_copy);
  fsio::Result<Block*> block(std::uint64_t index);
  fsio::Result<Block*> dirty_block(std::uint64_t index);  // block(), pinned until clear_dirty
  fsio::Status check_entry(std::uint32_t n) const;
  std::uint32_t local_entry(std::uint32_t n, std::uint64_t index) const;
  std::span<std::byte> block_span(std::uint64_t index, Block& b);
  void mark(std::uint64_t byte_offset, std::uint32_t length);
  void evict_until(std::size_t room);
  std::uint64_t used_bytes() const;  // whole sectors holding entries 0..count+1
  void overlay_dirty(std::span<std::byte> span, std::uint64_t pos) const;
  static constexpr std::uint32_t kVisitSlice = 65536;  // entries decoded per visit
  bool visit_slices(const ScanVisitor& visit, std::span<const std::byte> chunk, std::uint32_t base, std::uint32_t from,
                    std::uint32_t end, std::vector<std::uint32_t>& values) const;
  fsio::Result<std::vector<CopyMismatch>> compare_stream(const ScanVisitor* visit, std::uint32_t first);
  std::size_t stream_chunk() const;

  fsio::IoQueue* queue_;
  Layout layout_;
  std::size_t block_bytes_;
  std::size_t cache_blocks_;
  std::size_t stream_bytes_;
  std::uint32_t read_copy_;
  std::unordered_map<std::uint64_t, Block> blocks_;
  std::list<std::uint64_t> lru_;  // clean blocks, most recent first
  std::map<std::uint64_t, Block*> dirty_blocks_;
  std::vector<std::uint64_t> dirty_;  // one bit per FAT sector
  std::uint64_t dirty_count_ = 0;
  std::uint64_t last_index_ = ~std::uint64_t(0);  // the block of the previous lookup
  Block* last_block_ = nullptr;
  FatTableStats stats_;
};

}  // namespace fat
