// The filesystem mke2fs 1.47.0 lays out, before any file exists:
// ext2fs_initialize (lib/ext2fs/initialize.c: groups, inodes per group,
// the reserved GDT blocks, the trimmed last group, each group's starting
// counts and flags) and ext2fs_allocate_tables (alloc_tables.c: where each
// group's bitmaps and inode table go, packed per flex group).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "ext/layout.hpp"
#include "ext/mkfs_blockset.hpp"
#include "ext/mkfs_params.hpp"

namespace ext {

// One group descriptor as mke2fs keeps it in memory.
struct MkfsGroup {
  std::uint64_t block_bitmap = 0, inode_bitmap = 0, inode_table = 0;
  std::uint32_t free_blocks = 0, free_inodes = 0, used_dirs = 0, itable_unused = 0;
  std::uint16_t flags = 0;
};

struct MkfsLayout {
  Layout l;  // the geometry, as decode_layout would read it back
  std::vector<MkfsGroup> groups;
  BlockSet used;
  std::set<std::uint32_t> inodes;         // inodes in use (the first few)
  std::uint64_t free_blocks = 0;          // s_free_blocks_count as the alloc-stat helpers keep it
  std::uint64_t initial_free_blocks = 0;  // ... as ext2fs_initialize left it (-J size= is checked against it)
  std::uint32_t free_inodes = 0;
  std::uint64_t overhead = 0;  // blocks in use once the tables are placed (s_overhead_clusters' base)
  std::uint32_t desc_blocks() const { return l.gdt_blocks; }
  std::uint64_t group_last_block(std::uint32_t g) const {
    return g + 1 == l.group_count ? l.blocks_count - 1 : l.group_first_block(g) + l.blocks_per_group - 1;
  }
  bool group_csum() const { return l.group_csum(); }
};

// ext2fs_initialize then ext2fs_allocate_tables. Errc::invalid_argument
// (as mke2fs's messages: too small, too many inodes, reserved blocks)
// with the numbers; Errc::unsupported where mke2fs would turn meta_bg on.
fsio::Result<MkfsLayout> lay_out(const MkfsParams& p);

// calc_reserved_gdt_blocks: enough descriptor blocks to grow to 1024 times
// the size (at most 2^32 blocks), at most a block's worth of addresses.
std::uint32_t reserved_gdt_blocks(std::uint64_t blocks, std::uint32_t first_data_block, std::uint32_t bpg,
                                  std::uint32_t descs_per_block, std::uint32_t desc_blocks, std::uint32_t block_size);

}  // namespace ext
