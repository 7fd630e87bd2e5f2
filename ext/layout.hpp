// What a superblock says about the shape of the filesystem, decoded once and
// range-checked: block size, groups, descriptor size, which features count.
// Everything later (descriptors, bitmaps, inode tables, the allocator) works
// from this struct, never from raw superblock fields.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ext/superblock.hpp"
#include "libfsio/result.hpp"

namespace ext {

struct Layout {
  std::uint32_t block_size = 0;    // 1024 << s_log_block_size
  std::uint64_t blocks_count = 0;  // s_blocks_count_lo | hi << 32 (64bit)
  std::uint64_t r_blocks_count = 0;
  std::uint32_t first_data_block = 0;  // 1 with 1 KiB blocks
  std::uint32_t blocks_per_group = 0;
  std::uint32_t inodes_per_group = 0;
  std::uint32_t inodes_count = 0;
  std::uint32_t group_count = 0;
  std::uint32_t inode_size = 128;  // 128 with rev 0
  std::uint32_t first_ino = 11;
  std::uint32_t desc_size = 32;  // 32, or s_desc_size with 64bit
  std::uint32_t gdt_blocks = 0;  // blocks holding the descriptor table
  std::uint32_t reserved_gdt_blocks = 0;
  std::uint32_t inode_table_blocks = 0;  // per group
  std::uint32_t flex_size = 1;           // groups per flex group (1 without flex_bg)
  std::uint32_t first_meta_bg = 0;
  std::uint32_t csum_seed = 0;  // seed of every metadata checksum but the superblock's
  std::uint32_t hash_seed[4] = {};
  std::uint8_t def_hash_version = 0;
  bool unsigned_hash = false;  // s_flags UNSIGNED_HASH
  std::uint32_t compat = 0, incompat = 0, ro_compat = 0;
  std::uint32_t backup_bgs[2] = {};  // sparse_super2

  bool has_compat(std::uint32_t f) const { return compat & f; }
  bool has_incompat(std::uint32_t f) const { return incompat & f; }
  bool has_ro_compat(std::uint32_t f) const { return ro_compat & f; }
  bool is_64bit() const { return has_incompat(EXT4_FEATURE_INCOMPAT_64BIT); }
  bool metadata_csum() const { return has_ro_compat(EXT4_FEATURE_RO_COMPAT_METADATA_CSUM); }
  // uninit_bg: crc16 descriptors, only without metadata_csum.
  bool gdt_csum() const { return !metadata_csum() && has_ro_compat(EXT4_FEATURE_RO_COMPAT_GDT_CSUM); }
  // Either kind of descriptor checksum: the UNINIT flags and itable_unused are meaningful.
  bool group_csum() const { return metadata_csum() || gdt_csum(); }

  // Block group arithmetic (super.rst "Block Group Descriptors", "Flexible
  // Block Groups"); g < group_count is the caller's invariant.
  std::uint64_t group_first_block(std::uint32_t g) const {
    return first_data_block + std::uint64_t(g) * blocks_per_group;
  }
  std::uint32_t blocks_in_group(std::uint32_t g) const;  // the last group may be short
  std::uint32_t group_of_block(std::uint64_t block) const {
    return std::uint32_t((block - first_data_block) / blocks_per_group);
  }
  std::uint32_t group_of_inode(std::uint32_t ino) const { return (ino - 1) / inodes_per_group; }
  // Does group g hold a superblock backup (and, without meta_bg, the GDT)?
  bool group_has_super(std::uint32_t g) const;
  // Blocks at the start of group g taken by the superblock copy, the GDT
  // and its reserve (0 when g holds no backup). meta_bg groups hold one
  // descriptor block instead of the whole table.
  std::uint32_t group_overhead_blocks(std::uint32_t g) const;
  // Where descriptor block i of the primary table lives.
  std::uint64_t descriptor_block(std::uint32_t i) const;
  std::uint32_t descs_per_block() const { return block_size / desc_size; }
};

// Decodes and range-checks the superblock (the 1024 bytes at byte 1024):
// magic, checksum (metadata_csum), and every number the layout is computed
// from. `device_bytes` bounds s_blocks_count. Errc::corrupt names the field
// and the value; Errc::unsupported names a feature we cannot even read.
fsio::Result<Layout> decode_layout(std::span<const std::byte> sb_bytes, std::uint64_t device_bytes);

// The superblock's own checksum.
std::uint32_t superblock_checksum(std::span<const std::byte> sb_bytes);

// "has_journal ext_attr ..." as dumpe2fs names the set bits; unknown bits as
// "FEATURE_C12" / "FEATURE_I17" / "FEATURE_R20".
std::string feature_names(std::uint32_t compat, std::uint32_t incompat, std::uint32_t ro_compat);

// Features reading refuses (compression, dirdata, journal_dev, unknown
// incompat bits), by name.
fsio::Status check_readable(const Layout& l);

// Features and states writing refuses (DESIGN.md "Writing safely", the
// reference's refuse-to-write gate 2.1), by name. The journal's own state is
// checked separately (journal.hpp).
fsio::Status check_writable(const Layout& l, const Ext4SuperBlock& sb);

}  // namespace ext
