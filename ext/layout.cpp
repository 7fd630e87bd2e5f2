// Decoding the superblock into a Layout, and block group arithmetic.
// Every number a later multiplication depends on is range-checked here.
#include "ext/layout.hpp"

#include <bit>
#include <cinttypes>
#include <cstdio>

#include "ext/crc.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

fsio::Error bad(const char* field, std::uint64_t value, const std::string& why) {
  return make_error(Errc::corrupt, std::string("ext superblock: ") + field + " " + std::to_string(value) + " " + why);
}

bool is_power_of(std::uint32_t n, std::uint32_t base) {
  while (n > 1 && n % base == 0) n /= base;
  return n == 1;
}

}  // namespace

std::uint32_t superblock_checksum(std::span<const std::byte> sb) {
  return crc32c_raw(~0u, sb.first(offsetof(Ext4SuperBlock, s_checksum)));
}

std::uint32_t Layout::blocks_in_group(std::uint32_t g) const {
  if (g + 1 < group_count) return blocks_per_group;
  return std::uint32_t(blocks_count - group_first_block(g));
}

bool Layout::group_has_super(std::uint32_t g) const {
  if (g == 0) return true;
  if (has_compat(EXT4_FEATURE_COMPAT_SPARSE_SUPER2)) return g == backup_bgs[0] || g == backup_bgs[1];
  if (g == 1 || !has_ro_compat(EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER)) return true;
  if (g % 2 == 0) return false;
  return is_power_of(g, 3) || is_power_of(g, 5) || is_power_of(g, 7);
}

// e2fsprogs ext2fs_super_and_bgd_loc2 / the kernel's ext4_num_base_meta_blocks.
std::uint32_t Layout::group_overhead_blocks(std::uint32_t g) const {
  const bool super = group_has_super(g);
  std::uint32_t n = super ? 1 : 0;
  const bool meta = has_incompat(EXT2_FEATURE_INCOMPAT_META_BG);
  const std::uint32_t dpb = descs_per_block();
  if (!meta || g / dpb < first_meta_bg) {
    if (super) n += meta ? first_meta_bg : gdt_blocks + reserved_gdt_blocks;
  } else {
    std::uint32_t r = g % dpb;
    if (r == 0 || r == 1 || r == dpb - 1) n += 1;
  }
  return n;
}

std::uint64_t Layout::descriptor_block(std::uint32_t i) const {
  // The table follows the block holding the primary superblock (block 1
  // with 1 KiB blocks, even when bigalloc makes s_first_data_block 0).
  if (!has_incompat(EXT2_FEATURE_INCOMPAT_META_BG) || i < first_meta_bg)
    return kSuperblockOffset / block_size + 1ull + i;
  std::uint32_t g = i * descs_per_block();
  return group_first_block(g) + (group_has_super(g) ? 1 : 0);
}

namespace {

// The magic, a revision we know, and the feature words (none in rev 0).
fsio::Status decode_identity(const Ext4SuperBlock& sb, Layout& l) {
  if (sb.s_magic != kSuperMagic)
    return make_error(Errc::corrupt,
                      "ext superblock: bad magic " + fsio::format_hex(sb.s_magic, true) + " (expected 0xEF53)");
  if (sb.s_rev_level > 1)
    return make_error(Errc::unsupported,
                      "ext superblock: s_rev_level " + std::to_string(sb.s_rev_level) + " is unknown");

  l.compat = sb.s_feature_compat;
  l.incompat = sb.s_feature_incompat;
  l.ro_compat = sb.s_feature_ro_compat;
  if (sb.s_rev_level == 0) l.compat = l.incompat = l.ro_compat = 0;  // good old rev: no features
  return {};
}

// With metadata_csum, crc32c over the superblock before s_checksum.
fsio::Status check_superblock_checksum(const Ext4SuperBlock& sb, std::span<const std::byte> bytes, const Layout& l) {
  if (l.metadata_csum()) {
    if (sb.s_checksum_type != EXT4_CRC32C_CHKSUM)
      return bad("s_checksum_type", sb.s_checksum_type, "is not crc32c (1)");
    const std::uint32_t want = superblock_checksum(bytes.first(kSuperblockSize));
    if (sb.s_checksum != want)
      return make_error(Errc::corrupt, "ext superblock: s_checksum " + fsio::format_hex(sb.s_checksum, true) +
                                           " does not match the contents (" + fsio::format_hex(want, true) + ")");
  }
  return {};
}

// The block size, and the block counts within the device.
fsio::Status decode_block_counts(const Ext4SuperBlock& sb, std::uint64_t device_bytes, Layout& l) {
  if (sb.s_log_block_size > 6) return bad("s_log_block_size", sb.s_log_block_size, "(block size above 64 KiB)");
  l.block_size = 1024u << sb.s_log_block_size;
  l.blocks_count = sb.s_blocks_count_lo;
  l.r_blocks_count = sb.s_r_blocks_count_lo;
  if (l.is_64bit()) {
    l.blocks_count |= std::uint64_t(sb.s_blocks_count_hi) << 32;
    l.r_blocks_count |= std::uint64_t(sb.s_r_blocks_count_hi) << 32;
  }
  l.first_data_block = sb.s_first_data_block;
  if (l.first_data_block > 1 ||
      (l.block_size == 1024 && l.first_data_block != 1 && !l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_BIGALLOC)))
    return bad("s_first_data_block", l.first_data_block,
               "is impossible for " + std::to_string(l.block_size) + "-byte blocks");
  if (l.blocks_count <= l.first_data_block) return bad("s_blocks_count", l.blocks_count, "leaves no block groups");
  if (l.blocks_count > device_bytes / l.block_size)
    return bad("s_blocks_count", l.blocks_count,
               "is beyond the end of the device (" + std::to_string(device_bytes / l.block_size) + " blocks)");
  if (l.r_blocks_count > l.blocks_count) return bad("s_r_blocks_count", l.r_blocks_count, "exceeds s_blocks_count");
  return {};
}

// Clusters, blocks and inodes per group, and the group count s_inodes_count must agree with.
fsio::Status decode_groups(const Ext4SuperBlock& sb, Layout& l) {
  const std::uint32_t bits = l.block_size * 8;
  // Bitmaps count clusters: one block's worth of bits per group at most.
  std::uint32_t cluster_shift = 0;
  if (l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_BIGALLOC)) {
    if (sb.s_log_cluster_size < sb.s_log_block_size || sb.s_log_cluster_size - sb.s_log_block_size > 16)
      return bad("s_log_cluster_size", sb.s_log_cluster_size, "is impossible for the block size");
    cluster_shift = sb.s_log_cluster_size - sb.s_log_block_size;
  }
  const std::uint32_t cpg = sb.s_clusters_per_group;
  if (cpg == 0 || cpg > bits || cpg % 8)
    return bad("s_clusters_per_group", cpg, "(expected a multiple of 8 up to " + std::to_string(bits) + ")");
  l.blocks_per_group = sb.s_blocks_per_group;
  if (std::uint64_t(cpg) << cluster_shift != l.blocks_per_group)
    return bad("s_blocks_per_group", l.blocks_per_group, "is not s_clusters_per_group << cluster bits");
  l.inodes_per_group = sb.s_inodes_per_group;
  if (l.inodes_per_group == 0 || l.inodes_per_group > bits || l.inodes_per_group % 8)
    return bad("s_inodes_per_group", l.inodes_per_group,
               "(expected a multiple of 8 up to " + std::to_string(bits) + ")");

  const std::uint64_t groups = (l.blocks_count - l.first_data_block + l.blocks_per_group - 1) / l.blocks_per_group;
  if (groups * l.inodes_per_group != sb.s_inodes_count)
    return bad("s_inodes_count", sb.s_inodes_count,
               "is not " + std::to_string(groups) + " groups x " + std::to_string(l.inodes_per_group) + " inodes");
  l.group_count = std::uint32_t(groups);
  l.inodes_count = sb.s_inodes_count;
  return {};
}

// The inode size and first inode (rev 1), and the inode table they make.
fsio::Status decode_inodes(const Ext4SuperBlock& sb, Layout& l) {
  if (sb.s_rev_level >= 1) {
    l.inode_size = sb.s_inode_size;
    if (l.inode_size < 128 || l.inode_size > l.block_size || !std::has_single_bit(l.inode_size))
      return bad("s_inode_size", l.inode_size, "(expected a power of two from 128 to the block size)");
    l.first_ino = sb.s_first_ino;
    if (l.first_ino < 11 || l.first_ino >= l.inodes_count)
      return bad("s_first_ino", l.first_ino, "(expected 11 up to s_inodes_count)");
  }
  l.inode_table_blocks =
      std::uint32_t((std::uint64_t(l.inodes_per_group) * l.inode_size + l.block_size - 1) / l.block_size);
  if (l.inode_table_blocks >= l.blocks_per_group)
    return bad("s_inodes_per_group", l.inodes_per_group, "needs an inode table as large as the group");
  return {};
}

// The descriptor size and table, and where meta_bg, flex_bg and sparse_super2 put things.
fsio::Status decode_descriptors(const Ext4SuperBlock& sb, Layout& l) {
  if (l.is_64bit()) {
    l.desc_size = sb.s_desc_size;
    if (l.desc_size < 64 || l.desc_size > 1024 || !std::has_single_bit(l.desc_size))
      return bad("s_desc_size", l.desc_size, "(expected a power of two from 64 to 1024 with 64bit)");
  }
  l.gdt_blocks = (l.group_count + l.descs_per_block() - 1) / l.descs_per_block();
  l.reserved_gdt_blocks = sb.s_reserved_gdt_blocks;
  if (l.reserved_gdt_blocks > l.block_size / 4)
    return bad("s_reserved_gdt_blocks", l.reserved_gdt_blocks, "exceeds a quarter of the block size");
  if (l.has_incompat(EXT2_FEATURE_INCOMPAT_META_BG)) {
    l.first_meta_bg = sb.s_first_meta_bg;
    if (l.first_meta_bg > l.gdt_blocks) return bad("s_first_meta_bg", l.first_meta_bg, "exceeds the descriptor blocks");
  }
  if (l.has_incompat(EXT4_FEATURE_INCOMPAT_FLEX_BG)) {
    if (sb.s_log_groups_per_flex > 31) return bad("s_log_groups_per_flex", sb.s_log_groups_per_flex, "(at most 31)");
    l.flex_size = 1u << sb.s_log_groups_per_flex;
  }
  if (l.has_compat(EXT4_FEATURE_COMPAT_SPARSE_SUPER2)) {
    l.backup_bgs[0] = sb.s_backup_bgs[0];
    l.backup_bgs[1] = sb.s_backup_bgs[1];
  }
  return {};
}

// The metadata checksum seed and the directory hash's seed and version.
void decode_seeds(const Ext4SuperBlock& sb, Layout& l) {
  l.csum_seed = l.has_incompat(EXT4_FEATURE_INCOMPAT_CSUM_SEED) ? std::uint32_t(sb.s_checksum_seed)
                                                                : crc32c_raw(~0u, sb.s_uuid, sizeof sb.s_uuid);
  for (int i = 0; i < 4; ++i) l.hash_seed[i] = sb.s_hash_seed[i];
  l.def_hash_version = sb.s_def_hash_version;
  l.unsigned_hash = sb.s_flags & EXT2_FLAGS_UNSIGNED_HASH;
}

}  // namespace

fsio::Result<Layout> decode_layout(std::span<const std::byte> bytes, std::uint64_t device_bytes) {
  if (bytes.size() < kSuperblockSize)
    return make_error(Errc::corrupt, "ext superblock: device too small (" + std::to_string(device_bytes) + " bytes)");
  const auto sb = fsio::load<Ext4SuperBlock>(bytes);
  // Each step range-checks what the next computes with, so the order matters.
  Layout l;
  FSIO_TRY(decode_identity(sb, l));
  FSIO_TRY(check_superblock_checksum(sb, bytes, l));  // before trusting any number
  FSIO_TRY(decode_block_counts(sb, device_bytes, l));
  FSIO_TRY(decode_groups(sb, l));
  FSIO_TRY(decode_inodes(sb, l));
  FSIO_TRY(decode_descriptors(sb, l));
  decode_seeds(sb, l);
  return l;
}

}  // namespace ext
