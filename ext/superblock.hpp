// The ext2/3/4 superblock: 1024 bytes at byte 1024 of the filesystem, with
// backups at the start of some block groups (sparse_super: groups 0, 1 and
// powers of 3, 5 and 7).
//
// Field names and offsets are Linux's (fs/ext4/ext4.h struct ext4_super_block,
// e2fsprogs lib/ext2fs/ext2_fs.h, Documentation/filesystems/ext4/super.rst).
// Fields split into _lo/_hi halves are combined by the accessors in
// superblock.cpp; the _hi halves only count with INCOMPAT_64BIT.
#pragma once

#include <cstddef>
#include <cstdint>

#include "libfsio/endian.hpp"

namespace ext {

using fsio::le16;
using fsio::le32;
using fsio::le64;

inline constexpr std::uint64_t kSuperblockOffset = 1024;
inline constexpr std::size_t kSuperblockSize = 1024;
inline constexpr std::uint16_t kSuperMagic = 0xEF53;

struct Ext4SuperBlock {
  le32 s_inodes_count;                  // 0x00
  le32 s_blocks_count_lo;               // 0x04
  le32 s_r_blocks_count_lo;             // 0x08
  le32 s_free_blocks_count_lo;          // 0x0C
  le32 s_free_inodes_count;             // 0x10
  le32 s_first_data_block;              // 0x14: 1 with 1 KiB blocks, else 0
  le32 s_log_block_size;                // 0x18: block size = 1024 << this
  le32 s_log_cluster_size;              // 0x1C: bigalloc
  le32 s_blocks_per_group;              // 0x20
  le32 s_clusters_per_group;            // 0x24
  le32 s_inodes_per_group;              // 0x28
  le32 s_mtime;                         // 0x2C
  le32 s_wtime;                         // 0x30
  le16 s_mnt_count;                     // 0x34
  le16 s_max_mnt_count;                 // 0x36
  le16 s_magic;                         // 0x38: 0xEF53
  le16 s_state;                         // 0x3A: VALID_FS 1, ERROR_FS 2, ORPHAN_FS 4
  le16 s_errors;                        // 0x3C
  le16 s_minor_rev_level;               // 0x3E
  le32 s_lastcheck;                     // 0x40
  le32 s_checkinterval;                 // 0x44
  le32 s_creator_os;                    // 0x48
  le32 s_rev_level;                     // 0x4C: 0 = good old, 1 = dynamic
  le16 s_def_resuid;                    // 0x50
  le16 s_def_resgid;                    // 0x52
  le32 s_first_ino;                     // 0x54: first non-reserved inode (11)
  le16 s_inode_size;                    // 0x58
  le16 s_block_group_nr;                // 0x5A: group holding this copy
  le32 s_feature_compat;                // 0x5C
  le32 s_feature_incompat;              // 0x60
  le32 s_feature_ro_compat;             // 0x64
  std::uint8_t s_uuid[16];              // 0x68
  char s_volume_name[16];               // 0x78
  char s_last_mounted[64];              // 0x88
  le32 s_algorithm_usage_bitmap;        // 0xC8
  std::uint8_t s_prealloc_blocks;       // 0xCC
  std::uint8_t s_prealloc_dir_blocks;   // 0xCD
  le16 s_reserved_gdt_blocks;           // 0xCE: resize_inode's reserve after the GDT
  std::uint8_t s_journal_uuid[16];      // 0xD0
  le32 s_journal_inum;                  // 0xE0
  le32 s_journal_dev;                   // 0xE4
  le32 s_last_orphan;                   // 0xE8: head of the legacy orphan list
  le32 s_hash_seed[4];                  // 0xEC: htree hash seed
  std::uint8_t s_def_hash_version;      // 0xFC
  std::uint8_t s_jnl_backup_type;       // 0xFD
  le16 s_desc_size;                     // 0xFE: group descriptor size with 64bit
  le32 s_default_mount_opts;            // 0x100
  le32 s_first_meta_bg;                 // 0x104
  le32 s_mkfs_time;                     // 0x108
  le32 s_jnl_blocks[17];                // 0x10C
  le32 s_blocks_count_hi;               // 0x150
  le32 s_r_blocks_count_hi;             // 0x154
  le32 s_free_blocks_count_hi;          // 0x158
  le16 s_min_extra_isize;               // 0x15C
  le16 s_want_extra_isize;              // 0x15E
  le32 s_flags;                         // 0x160: signed/unsigned dir hash
  le16 s_raid_stride;                   // 0x164
  le16 s_mmp_update_interval;           // 0x166
  le64 s_mmp_block;                     // 0x168
  le32 s_raid_stripe_width;             // 0x170
  std::uint8_t s_log_groups_per_flex;   // 0x174
  std::uint8_t s_checksum_type;         // 0x175: 1 = crc32c
  std::uint8_t s_encryption_level;      // 0x176
  std::uint8_t s_reserved_pad;          // 0x177
  le64 s_kbytes_written;                // 0x178
  le32 s_snapshot_inum;                 // 0x180
  le32 s_snapshot_id;                   // 0x184
  le64 s_snapshot_r_blocks_count;       // 0x188
  le32 s_snapshot_list;                 // 0x190
  le32 s_error_count;                   // 0x194
  le32 s_first_error_time;              // 0x198
  le32 s_first_error_ino;               // 0x19C
  le64 s_first_error_block;             // 0x1A0
  std::uint8_t s_first_error_func[32];  // 0x1A8
  le32 s_first_error_line;              // 0x1C8
  le32 s_last_error_time;               // 0x1CC
  le32 s_last_error_ino;                // 0x1D0
  le32 s_last_error_line;               // 0x1D4
  le64 s_last_error_block;              // 0x1D8
  std::uint8_t s_last_error_func[32];   // 0x1E0
  std::uint8_t s_mount_opts[64];        // 0x200
  le32 s_usr_quota_inum;                // 0x240
  le32 s_grp_quota_inum;                // 0x244
  le32 s_overhead_clusters;             // 0x248
  le32 s_backup_bgs[2];                 // 0x24C: sparse_super2 backup groups
  std::uint8_t s_encrypt_algos[4];      // 0x254
  std::uint8_t s_encrypt_pw_salt[16];   // 0x258
  le32 s_lpf_ino;                       // 0x268
  le32 s_prj_quota_inum;                // 0x26C
  le32 s_checksum_seed;                 // 0x270: crc32c(~0, uuid) when csum_seed
  std::uint8_t s_wtime_hi;              // 0x274
  std::uint8_t s_mtime_hi;              // 0x275
  std::uint8_t s_mkfs_time_hi;          // 0x276
  std::uint8_t s_lastcheck_hi;          // 0x277
  std::uint8_t s_first_error_time_hi;   // 0x278
  std::uint8_t s_last_error_time_hi;    // 0x279
  std::uint8_t s_first_error_errcode;   // 0x27A
  std::uint8_t s_last_error_errcode;    // 0x27B
  le16 s_encoding;                      // 0x27C
  le16 s_encoding_flags;                // 0x27E
  le32 s_orphan_file_inum;              // 0x280
  le32 s_reserved[94];                  // 0x284
  le32 s_checksum;                      // 0x3FC: crc32c_raw(~0, sb[0:0x3FC])
};
static_assert(sizeof(Ext4SuperBlock) == kSuperblockSize && alignof(Ext4SuperBlock) == 1);
static_assert(offsetof(Ext4SuperBlock, s_free_blocks_count_lo) == 0x0C);
static_assert(offsetof(Ext4SuperBlock, s_free_inodes_count) == 0x10);
static_assert(offsetof(Ext4SuperBlock, s_wtime) == 0x30);
static_assert(offsetof(Ext4SuperBlock, s_magic) == 0x38);
static_assert(offsetof(Ext4SuperBlock, s_state) == 0x3A);
static_assert(offsetof(Ext4SuperBlock, s_inode_size) == 0x58);
static_assert(offsetof(Ext4SuperBlock, s_feature_compat) == 0x5C);
static_assert(offsetof(Ext4SuperBlock, s_feature_incompat) == 0x60);
static_assert(offsetof(Ext4SuperBlock, s_feature_ro_compat) == 0x64);
static_assert(offsetof(Ext4SuperBlock, s_uuid) == 0x68);
static_assert(offsetof(Ext4SuperBlock, s_reserved_gdt_blocks) == 0xCE);
static_assert(offsetof(Ext4SuperBlock, s_journal_inum) == 0xE0);
static_assert(offsetof(Ext4SuperBlock, s_last_orphan) == 0xE8);
static_assert(offsetof(Ext4SuperBlock, s_hash_seed) == 0xEC);
static_assert(offsetof(Ext4SuperBlock, s_def_hash_version) == 0xFC);
static_assert(offsetof(Ext4SuperBlock, s_desc_size) == 0xFE);
static_assert(offsetof(Ext4SuperBlock, s_blocks_count_hi) == 0x150);
static_assert(offsetof(Ext4SuperBlock, s_free_blocks_count_hi) == 0x158);
static_assert(offsetof(Ext4SuperBlock, s_flags) == 0x160);
static_assert(offsetof(Ext4SuperBlock, s_mmp_block) == 0x168);
static_assert(offsetof(Ext4SuperBlock, s_log_groups_per_flex) == 0x174);
static_assert(offsetof(Ext4SuperBlock, s_checksum_type) == 0x175);
static_assert(offsetof(Ext4SuperBlock, s_kbytes_written) == 0x178);
static_assert(offsetof(Ext4SuperBlock, s_backup_bgs) == 0x24C);
static_assert(offsetof(Ext4SuperBlock, s_checksum_seed) == 0x270);
static_assert(offsetof(Ext4SuperBlock, s_wtime_hi) == 0x274);
static_assert(offsetof(Ext4SuperBlock, s_orphan_file_inum) == 0x280);
static_assert(offsetof(Ext4SuperBlock, s_checksum) == 0x3FC);

// s_state
inline constexpr std::uint16_t EXT2_VALID_FS = 0x0001;
inline constexpr std::uint16_t EXT2_ERROR_FS = 0x0002;
inline constexpr std::uint16_t EXT3_ORPHAN_FS = 0x0004;

// s_flags
inline constexpr std::uint32_t EXT2_FLAGS_SIGNED_HASH = 0x0001;
inline constexpr std::uint32_t EXT2_FLAGS_UNSIGNED_HASH = 0x0002;

// s_feature_compat
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_DIR_PREALLOC = 0x0001;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_IMAGIC_INODES = 0x0002;
inline constexpr std::uint32_t EXT3_FEATURE_COMPAT_HAS_JOURNAL = 0x0004;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_EXT_ATTR = 0x0008;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_RESIZE_INODE = 0x0010;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_DIR_INDEX = 0x0020;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_LAZY_BG = 0x0040;
inline constexpr std::uint32_t EXT2_FEATURE_COMPAT_EXCLUDE_BITMAP = 0x0100;
inline constexpr std::uint32_t EXT4_FEATURE_COMPAT_SPARSE_SUPER2 = 0x0200;
inline constexpr std::uint32_t EXT4_FEATURE_COMPAT_FAST_COMMIT = 0x0400;
inline constexpr std::uint32_t EXT4_FEATURE_COMPAT_STABLE_INODES = 0x0800;
inline constexpr std::uint32_t EXT4_FEATURE_COMPAT_ORPHAN_FILE = 0x1000;

// s_feature_ro_compat
inline constexpr std::uint32_t EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER = 0x0001;
inline constexpr std::uint32_t EXT2_FEATURE_RO_COMPAT_LARGE_FILE = 0x0002;
inline constexpr std::uint32_t EXT2_FEATURE_RO_COMPAT_BTREE_DIR = 0x0004;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_HUGE_FILE = 0x0008;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_GDT_CSUM = 0x0010;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_DIR_NLINK = 0x0020;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE = 0x0040;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_HAS_SNAPSHOT = 0x0080;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_QUOTA = 0x0100;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_BIGALLOC = 0x0200;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_METADATA_CSUM = 0x0400;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_REPLICA = 0x0800;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_READONLY = 0x1000;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_PROJECT = 0x2000;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_SHARED_BLOCKS = 0x4000;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_VERITY = 0x8000;
inline constexpr std::uint32_t EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT = 0x10000;

// s_feature_incompat
inline constexpr std::uint32_t EXT2_FEATURE_INCOMPAT_COMPRESSION = 0x0001;
inline constexpr std::uint32_t EXT2_FEATURE_INCOMPAT_FILETYPE = 0x0002;
inline constexpr std::uint32_t EXT3_FEATURE_INCOMPAT_RECOVER = 0x0004;
inline constexpr std::uint32_t EXT3_FEATURE_INCOMPAT_JOURNAL_DEV = 0x0008;
inline constexpr std::uint32_t EXT2_FEATURE_INCOMPAT_META_BG = 0x0010;
inline constexpr std::uint32_t EXT3_FEATURE_INCOMPAT_EXTENTS = 0x0040;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_64BIT = 0x0080;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_MMP = 0x0100;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_FLEX_BG = 0x0200;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_EA_INODE = 0x0400;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_DIRDATA = 0x1000;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_CSUM_SEED = 0x2000;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_LARGEDIR = 0x4000;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_INLINE_DATA = 0x8000;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_ENCRYPT = 0x10000;
inline constexpr std::uint32_t EXT4_FEATURE_INCOMPAT_CASEFOLD = 0x20000;

inline constexpr std::uint8_t EXT4_CRC32C_CHKSUM = 1;  // s_checksum_type

}  // namespace ext
