// Each group's starting state and table placement, as libext2fs makes them
// for mke2fs: ext2fs_initialize's per-group loop (ext2fs_reserve_super_and_bgd
// and the UNINIT flags) and ext2fs_allocate_group_table with flexbg_offset
// (lib/ext2fs/alloc_tables.c). Internal to ext/ (lay_out calls them).
#pragma once

#include "ext/mkfs_layout.hpp"

namespace ext {

// Superblock copies, GDT and reserve marked in use; free counts, flags
// (BLOCK_UNINIT but in the last group, INODE_UNINIT) and itable_unused
// with a descriptor checksum; s_free_blocks_count summed. With flex_bg
// (`flex`) the bitmaps and inode table are not yet counted.
void start_groups(MkfsLayout& m, bool flex);

// Places every group's block bitmap, inode bitmap and inode table.
// `stride` (-E stride=) spreads them without flex_bg.
fsio::Status allocate_tables(MkfsLayout& m, std::uint32_t log_groups_per_flex, std::uint32_t stride);

// ext2fs_block_alloc_stats2 / _range: mark, count down the group (or
// groups) and the superblock, clear BLOCK_UNINIT.
void claim_blocks(MkfsLayout& m, std::uint64_t block, std::uint64_t n);

// ext2fs_inode_alloc_stats2(ino, +1, isdir) and, for a new inode,
// ext2fs_new_inode's check_inode_uninit first.
void claim_inode(MkfsLayout& m, std::uint32_t ino, bool dir);

}  // namespace ext
