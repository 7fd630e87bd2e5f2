// The blocks a filesystem being made has in use, as sorted runs: memory
// follows the metadata (tens of thousands of runs for 16 TiB), not the
// size, where mke2fs keeps a bitmap of every block. The searches are
// libext2fs's (lib/ext2fs/alloc.c, gen_bitmap64.c) with their wrap-around
// rules, so that every block lands where mke2fs puts it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>

namespace ext {

class BlockSet {
 public:
  BlockSet(std::uint64_t first_data_block, std::uint64_t blocks_count)
      : first_(first_data_block), count_(blocks_count) {}

  void mark(std::uint64_t block, std::uint64_t n = 1);
  bool used(std::uint64_t block) const;
  bool range_free(std::uint64_t block, std::uint64_t n) const;
  // The first free (used) block in [start, end], inclusive.
  std::optional<std::uint64_t> first_free(std::uint64_t start, std::uint64_t end) const;
  std::optional<std::uint64_t> first_used(std::uint64_t start, std::uint64_t end) const;
  std::uint64_t count_used(std::uint64_t start, std::uint64_t end) const;  // inclusive
  std::size_t runs() const { return runs_.size(); }

  // ext2fs_get_free_blocks2: the first b from `start` (0: the first data
  // block) towards `finish` (exclusive; 0: `start`), wrapping at the end
  // when finish <= start, with [b, b + num) free.
  std::optional<std::uint64_t> get_free_blocks(std::uint64_t start, std::uint64_t finish, std::uint64_t num) const;
  // ext2fs_new_block2's search: the first free block at or after goal
  // (out of range: the first data block), then from the first data block.
  std::optional<std::uint64_t> new_block(std::uint64_t goal) const;

  // The bitmap bits of blocks [start, start + bits) into `out` (bits / 8
  // bytes), 1 for used; blocks at or past the end read as free.
  void bitmap(std::uint64_t start, std::uint32_t bits, std::span<std::uint8_t> out) const;

 private:
  std::uint64_t first_, count_;
  std::map<std::uint64_t, std::uint64_t> runs_;  // start -> end (exclusive), disjoint, not touching
};

}  // namespace ext
