// What mke2fs 1.47.0 decides before it touches a device (misc/mke2fs.c
// PRS() and the settings main() makes before ext2fs_initialize lays the
// groups out): the usage types from the size, the feature words, the block
// size, the inode count request, the reserve, the flex_bg size, the journal
// request, the lazy-init and discard flags, and the identity (UUID, hash
// seed, time). Every choice reads the profile (mke2fs_conf.hpp) the way
// mke2fs does: integers from [defaults] then each type in order (the last
// wins), strings from the last type that has the key, else [defaults].
//
// Only ext4 is made (-t ext2/ext3 are refused by name), and only the
// features ext/ can write (features.cpp's writing set); the others are
// refused by name before anything is opened for writing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ext/mke2fs_conf.hpp"
#include "ext/mkfs_options.hpp"
#include "libfsio/result.hpp"

namespace ext {

// The options, in mke2fs's words and units (mkext4's command line).
struct MkfsRequest {
  std::optional<std::string> fs_type;       // -t
  std::optional<std::string> usage_types;   // -T, comma-separated
  std::optional<std::uint32_t> block_size;  // -b, bytes
  // SIZE as mke2fs reads it (parse_num_blocks2): a plain number counts
  // blocks (of -b, else of 1 KiB), a K/M/G/T suffix makes it bytes, 's'
  // 512-byte sectors. "KiB".."TiB" are taken as K..T.
  std::optional<std::string> size;
  std::optional<std::uint32_t> flex_bg_size;  // -G
  std::optional<std::uint64_t> inodes;        // -N
  std::optional<std::uint32_t> inode_ratio;   // -i
  std::optional<std::uint32_t> inode_size;    // -I
  std::optional<double> reserved_percent;     // -m
  std::optional<std::string> label;           // -L (truncated to 16 bytes, as mke2fs)
  std::optional<std::string> last_mounted;    // -M
  std::optional<std::string> uuid;            // -U: a UUID, null, clear, random
  std::optional<std::string> errors;          // -e: continue, remount-ro, panic
  std::vector<std::string> features;          // -O, every occurrence in order
  std::optional<std::string> extended;        // -E (mke2fs keeps the last one)
  std::vector<std::string> journal;           // -J, every occurrence
  bool journal_flag = false;                  // -j
  bool force = false;                         // -F
  std::uint64_t offset = 0;                   // --offset (bytes); -E offset= sets it too
  std::optional<std::int64_t> time;           // SOURCE_DATE_EPOCH; default: the clock
};

// The target as mke2fs sees it before it opens it for writing.
struct MkfsTarget {
  std::string name;         // as given: the [devices] key
  std::uint64_t bytes = 0;  // whole file or device (0: a file made now)
  bool exists = true;       // false: mke2fs creates it (and never discards it)
  bool is_block_device = false;
  std::uint32_t logical_sector = 0;  // block devices only (files: 0)
  std::uint32_t physical_sector = 0;
  std::uint32_t min_io = 0, opt_io = 0;  // libblkid topology, block devices only
  std::uint32_t page_size = 4096;
};

struct MkfsParams {
  std::vector<std::string> fs_types;  // "ext4", then the usage types in use
  std::uint32_t block_size = 0;
  std::uint32_t log_block_size = 0;  // block_size = 1024 << this
  std::uint64_t blocks_count = 0;    // before ext2fs_initialize trims the last group
  std::uint64_t r_blocks_count = 0;
  double reserved_ratio = 5.0;  // percent
  std::uint32_t compat = 0, incompat = 0, ro_compat = 0;
  std::uint32_t inodes_count = 0;  // the request ext2fs_initialize spreads over the groups
  std::uint32_t inode_size = 0;    // 0: 128 (ext2fs_initialize's default)
  std::uint32_t log_groups_per_flex = 0;
  std::uint32_t reserved_gdt_blocks = 0;  // -E resize=; 0: computed
  std::uint32_t backup_bgs[2] = {};       // sparse_super2 request
  std::uint32_t raid_stride = 0, raid_stripe_width = 0;
  std::uint32_t default_mount_opts = 0;
  std::uint16_t errors = 1;       // EXT2_ERRORS_CONTINUE
  std::uint8_t hash_version = 1;  // half_md4
  bool periodic_fsck = false;
  bool test_fs = false;  // -E test_fs: s_flags TEST_FILESYS
  // Journal: -1 = the default size, 0 = none, else MiB (-J size=).
  std::int64_t journal_mib = 0;
  std::uint32_t journal_fc_kib = 0;  // fast_commit area (-J fast_commit_size=), 0: default
  bool lazy_itable_init = true;
  bool lazy_journal_init = false;
  bool discard = true;
  bool assume_prezeroed = false;
  std::uint32_t root_uid = 0, root_gid = 0;
  std::uint32_t orphan_file_blocks = 0;  // 0: ext2fs_default_orphan_file_blocks
  std::array<std::uint8_t, 16> uuid{};
  std::array<std::uint8_t, 16> hash_seed{};
  std::string label, last_mounted;
  std::uint32_t time = 0;    // s_mkfs_time and every inode time
  std::uint64_t offset = 0;  // bytes into the target
  bool explicit_size = false;
  std::vector<std::string> warnings;  // what mke2fs would print and go on after
};

// PRS() and the pre-initialize part of main(). `random16` supplies the
// random UUID or hash seed bytes when they are not given (called at most
// twice; tests pass a fixed source). Errc::invalid_argument for a bad
// option or profile value, named as mke2fs names it; Errc::unsupported for
// what mkext4 does not make (-t ext3, bigalloc, meta_bg, ...).
fsio::Result<MkfsParams> resolve_params(const MkfsRequest& req, const MkfsTarget& target, const Mke2fsConf& conf,
                                        std::array<std::uint8_t, 16> (*random16)());

// The journal blocks mke2fs gives a filesystem of `blocks` blocks
// (ext2fs_default_journal_size); 0 below 2048 blocks (no journal).
std::uint32_t default_journal_blocks(std::uint64_t blocks);

}  // namespace ext
