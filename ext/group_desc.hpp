// Block group descriptors: 32 bytes, or s_desc_size (>= 64) with 64bit.
// The table starts in the block after the superblock (group_descr.rst); the
// _hi halves exist only in descriptors of 64 bytes or more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ext/layout.hpp"

namespace ext {

struct Ext4GroupDesc {
  le32 bg_block_bitmap_lo;       // 0x00
  le32 bg_inode_bitmap_lo;       // 0x04
  le32 bg_inode_table_lo;        // 0x08
  le16 bg_free_blocks_count_lo;  // 0x0C
  le16 bg_free_inodes_count_lo;  // 0x0E
  le16 bg_used_dirs_count_lo;    // 0x10
  le16 bg_flags;                 // 0x12: INODE_UNINIT 1, BLOCK_UNINIT 2, INODE_ZEROED 4
  le32 bg_exclude_bitmap_lo;     // 0x14
  le16 bg_block_bitmap_csum_lo;  // 0x18
  le16 bg_inode_bitmap_csum_lo;  // 0x1A
  le16 bg_itable_unused_lo;      // 0x1C
  le16 bg_checksum;              // 0x1E
  // 64-byte descriptors only:
  le32 bg_block_bitmap_hi;       // 0x20
  le32 bg_inode_bitmap_hi;       // 0x24
  le32 bg_inode_table_hi;        // 0x28
  le16 bg_free_blocks_count_hi;  // 0x2C
  le16 bg_free_inodes_count_hi;  // 0x2E
  le16 bg_used_dirs_count_hi;    // 0x30
  le16 bg_itable_unused_hi;      // 0x32
  le32 bg_exclude_bitmap_hi;     // 0x34
  le16 bg_block_bitmap_csum_hi;  // 0x38
  le16 bg_inode_bitmap_csum_hi;  // 0x3A
  le32 bg_reserved;              // 0x3C
};
static_assert(sizeof(Ext4GroupDesc) == 64 && alignof(Ext4GroupDesc) == 1);
static_assert(offsetof(Ext4GroupDesc, bg_free_blocks_count_lo) == 0x0C);
static_assert(offsetof(Ext4GroupDesc, bg_flags) == 0x12);
static_assert(offsetof(Ext4GroupDesc, bg_block_bitmap_csum_lo) == 0x18);
static_assert(offsetof(Ext4GroupDesc, bg_itable_unused_lo) == 0x1C);
static_assert(offsetof(Ext4GroupDesc, bg_checksum) == 0x1E);
static_assert(offsetof(Ext4GroupDesc, bg_block_bitmap_hi) == 0x20);
static_assert(offsetof(Ext4GroupDesc, bg_free_blocks_count_hi) == 0x2C);
static_assert(offsetof(Ext4GroupDesc, bg_itable_unused_hi) == 0x32);
static_assert(offsetof(Ext4GroupDesc, bg_block_bitmap_csum_hi) == 0x38);

inline constexpr std::uint16_t EXT4_BG_INODE_UNINIT = 0x0001;
inline constexpr std::uint16_t EXT4_BG_BLOCK_UNINIT = 0x0002;
inline constexpr std::uint16_t EXT4_BG_INODE_ZEROED = 0x0004;

// One descriptor decoded to full-width numbers. `encode` writes it back into
// its on-disk bytes, leaving fields we do not model (exclude bitmap,
// reserved) as they were.
struct GroupDesc {
  std::uint64_t block_bitmap = 0, inode_bitmap = 0, inode_table = 0;
  std::uint32_t free_blocks = 0, free_inodes = 0, used_dirs = 0, itable_unused = 0;
  std::uint16_t flags = 0;
  std::uint32_t block_bitmap_csum = 0, inode_bitmap_csum = 0;
  std::uint16_t checksum = 0;
};

GroupDesc decode_group_desc(std::span<const std::byte> raw, const Layout& l);
void encode_group_desc(const GroupDesc& d, std::span<std::byte> raw, const Layout& l);

// bg_checksum over `raw` (desc_size bytes) for group g: metadata_csum's
// crc32c & 0xFFFF, gdt_csum's crc16, 0 without either (group_descr.rst,
// e2fsprogs csum.c ext2fs_group_desc_csum).
std::uint16_t group_desc_checksum(std::span<const std::byte> raw, std::uint32_t g, const Layout& l,
                                  const std::uint8_t (&uuid)[16]);

// Checks one decoded descriptor against the layout: its bitmaps and inode
// table lie inside the filesystem, counts within the group's size.
fsio::Status check_group_desc(const GroupDesc& d, std::uint32_t g, const Layout& l);

}  // namespace ext
