// Block and inode allocation: the bitmaps of each group, loaded on first
// use (synthesized for BLOCK_UNINIT / INODE_UNINIT groups), changed in
// memory, and written back by the commit with their checksums in the
// descriptors (group_descr.rst, bitmaps.rst).
//
// Allocation takes whole contiguous runs near a goal, never a block at a
// time, and writes nothing: a block handed out is the caller's to fill, so
// it is never zeroed first. Frees are deferred: they only reach the bitmaps
// when the commit has written the metadata that stopped using the blocks,
// so a crash in between leaks blocks instead of cross-linking them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ext/fs.hpp"

namespace ext {

struct BlockRun {
  std::uint64_t start = 0;
  std::uint32_t len = 0;
};

class Allocator {
 public:
  explicit Allocator(Filesystem& fs) : fs_(fs) {}

  // A run of up to `max_len` free blocks at or after `goal` (wrapping round):
  // the first run at least `want_len` long (min(max_len, 2048) by default) if
  // there is one, else the first free run of any length. Errc::io with
  // ENOSPC when no block is free (reserved blocks are left alone unless
  // `use_reserved`).
  fsio::Result<BlockRun> alloc_blocks(std::uint64_t goal, std::uint32_t max_len);
  // An inode near `goal_group`; `dir` counts it in bg_used_dirs_count.
  fsio::Result<std::uint32_t> alloc_inode(std::uint32_t goal_group, bool dir);

  // Deferred: recorded now, applied by apply_frees() after the links are gone.
  void free_blocks(std::uint64_t start, std::uint32_t len) { pending_block_frees_.push_back({start, len}); }
  void free_inode(std::uint32_t ino, bool dir) { pending_inode_frees_.push_back({ino, dir}); }
  bool has_pending_frees() const { return !pending_block_frees_.empty() || !pending_inode_frees_.empty(); }
  // Every refusal apply_frees() could meet, changing nothing: the bitmaps
  // the frees touch are loaded and checked (checksum, free count), and each
  // freed block and inode must be in use. Run before the first write of a
  // transaction, so that a corrupt bitmap refuses with the device untouched.
  fsio::Status check_frees();
  // Loads and checks the block bitmap of every group with a free block and
  // the inode bitmap of every group with a free inode: what any allocation
  // could reach. Called before the first data write of a put whose data
  // is written in several steps (a later step could otherwise meet a
  // corrupt bitmap with data already on the device).
  fsio::Status check_all_bitmaps();
  fsio::Status apply_frees();

  // Stores the bitmap checksums in the descriptors, marks the bitmap blocks
  // of changed groups dirty (MetaKind::bitmap). Called by the commit.
  fsio::Status seal_bitmaps();

  std::uint64_t blocks_allocated() const { return blocks_allocated_; }
  std::uint64_t free_blocks_left() const;  // per the descriptors, minus the reserve
  bool use_reserved = false;

 private:
  struct Group {
    bool loaded = false;
    bool changed = false;
  };
  fsio::Result<std::span<std::byte>> block_bitmap(std::uint32_t g);
  fsio::Result<std::span<std::byte>> inode_bitmap(std::uint32_t g);
  fsio::Status synthesize_block_bitmap(std::uint32_t g, std::span<std::byte> bits);
  fsio::Status verify_bitmap(std::uint32_t g, std::span<const std::byte> bits, bool inode, bool synthesized);
  fsio::Result<std::optional<BlockRun>> find_run(std::uint32_t g, std::uint64_t from, std::uint32_t max_len,
                                                 std::uint32_t min_len);
  void take(std::uint32_t g, std::span<std::byte> bits, const BlockRun& run);
  // Clears the bits of blocks [start, start+len) in their bitmaps (only
  // checks that they are set when !apply).
  fsio::Status release_blocks(std::uint64_t start, std::uint32_t len, bool apply);
  fsio::Status release_inode(std::uint32_t ino, bool dir, bool apply);

  Filesystem& fs_;
  std::vector<Group> blocks_, inodes_;
  std::vector<BlockRun> pending_block_frees_;
  std::vector<std::pair<std::uint32_t, bool>> pending_inode_frees_;
  std::uint64_t blocks_allocated_ = 0;
};

// Bit helpers on little-endian bitmaps (bit n is bit n%8 of byte n/8).
inline bool test_bit(std::span<const std::byte> b, std::uint64_t n) {
  return (std::to_integer<unsigned>(b[n / 8]) >> (n % 8)) & 1;
}
inline void set_bit(std::span<std::byte> b, std::uint64_t n) { b[n / 8] |= std::byte(1u << (n % 8)); }
inline void clear_bit(std::span<std::byte> b, std::uint64_t n) { b[n / 8] &= std::byte(~(1u << (n % 8)) & 0xFF); }

// Checksums stored in the descriptor (bitmaps.rst; the group number is not
// hashed, whatever group_descr.rst says): crc32c of the seed and the first
// clusters_per_group/8 (inodes_per_group/8) bytes.
std::uint32_t block_bitmap_checksum(std::span<const std::byte> bits, const Layout& l);
std::uint32_t inode_bitmap_checksum(std::span<const std::byte> bits, const Layout& l);

}  // namespace ext
