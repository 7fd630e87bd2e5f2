// MkfsBuilder's superblock, group descriptors and bitmaps (see
// mkfs_build.hpp): closefs.c and rw_bitmaps.c's values.
#include <cstring>

#include "ext/crc.hpp"
#include "ext/group_desc.hpp"
#include "ext/mkfs_build.hpp"

namespace ext {

namespace {

// The fields that say what the filesystem is: sizes, counts, geometry.
void put_geometry(Ext4SuperBlock& s, const Layout& l, const MkfsLayout& m, const MkfsParams& p) {
  s.s_inodes_count = l.inodes_count;
  s.s_blocks_count_lo = std::uint32_t(l.blocks_count);
  s.s_r_blocks_count_lo = std::uint32_t(l.r_blocks_count);
  s.s_free_blocks_count_lo = std::uint32_t(m.free_blocks);
  if (l.is_64bit()) {
    s.s_blocks_count_hi = std::uint32_t(l.blocks_count >> 32);
    s.s_r_blocks_count_hi = std::uint32_t(l.r_blocks_count >> 32);
    s.s_free_blocks_count_hi = std::uint32_t(m.free_blocks >> 32);
    s.s_desc_size = std::uint16_t(l.desc_size);
  }
  s.s_free_inodes_count = m.free_inodes;
  s.s_first_data_block = l.first_data_block;
  s.s_log_block_size = p.log_block_size;
  s.s_log_cluster_size = p.log_block_size;
  s.s_blocks_per_group = l.blocks_per_group;
  s.s_clusters_per_group = l.blocks_per_group;
  s.s_inodes_per_group = l.inodes_per_group;
  s.s_magic = kSuperMagic;
  s.s_rev_level = 1;
  s.s_first_ino = l.first_ino;
  s.s_inode_size = std::uint16_t(l.inode_size);
  s.s_feature_compat = l.compat;
  s.s_feature_incompat = l.incompat;
  s.s_feature_ro_compat = l.ro_compat;
  s.s_reserved_gdt_blocks = std::uint16_t(l.reserved_gdt_blocks);
  if (l.inode_size >= 160) s.s_min_extra_isize = s.s_want_extra_isize = 32;  // sizeof ext2_inode_large - 128
  s.s_raid_stride = std::uint16_t(p.raid_stride);
  s.s_raid_stripe_width = p.raid_stripe_width;
  s.s_log_groups_per_flex = std::uint8_t(p.log_groups_per_flex);
  if (l.has_compat(EXT4_FEATURE_COMPAT_SPARSE_SUPER2)) {
    s.s_backup_bgs[0] = l.backup_bgs[0];
    s.s_backup_bgs[1] = l.backup_bgs[1];
  }
}

// Identity, times, policy: what mke2fs's main() sets.
void put_identity(Ext4SuperBlock& s, const Layout& l, const MkfsParams& p) {
  s.s_wtime = s.s_lastcheck = s.s_mkfs_time = p.time;
  s.s_errors = p.errors;
  std::memcpy(s.s_uuid, p.uuid.data(), 16);
  std::memcpy(s.s_volume_name, p.label.data(), std::min<std::size_t>(p.label.size(), 16));
  std::memcpy(s.s_last_mounted, p.last_mounted.data(), std::min<std::size_t>(p.last_mounted.size(), 64));
  for (int i = 0; i < 4; ++i) s.s_hash_seed[i] = l.hash_seed[i];
  s.s_def_hash_version = l.def_hash_version;
  s.s_default_mount_opts = p.default_mount_opts;
  s.s_flags = EXT2_FLAGS_SIGNED_HASH | (p.test_fs ? 0x4 : 0);  // char is signed on x86
  if (l.metadata_csum()) s.s_checksum_type = EXT4_CRC32C_CHKSUM;
  if (l.has_incompat(EXT4_FEATURE_INCOMPAT_CSUM_SEED)) s.s_checksum_seed = l.csum_seed;
  if (p.periodic_fsck) {  // 20 + a jitter from the UUID's bytes, and 180 days
    std::uint32_t sum = 0;
    for (auto b : p.uuid) sum += b;
    s.s_max_mnt_count = std::uint16_t(20 + sum % 20);
    s.s_checkinterval = 86400u * 180;
  } else {
    s.s_max_mnt_count = 0xFFFF;
  }
}

}  // namespace

std::array<std::byte, kSuperblockSize> MkfsBuilder::superblock(std::uint32_t g) const {
  Ext4SuperBlock s{};
  put_geometry(s, l_, m_, p_);
  put_identity(s, l_, p_);
  // closefs.c write_backup_super: the group number, VALID_FS cleared
  s.s_state = g == 0 ? EXT2_VALID_FS : 0;
  s.s_block_group_nr = std::uint16_t(std::min<std::uint32_t>(g, 0xFFFF));
  if (f_.journal_blocks) {
    s.s_journal_inum = EXT4_JOURNAL_INO;
    s.s_jnl_backup_type = 1;  // EXT3_JNL_BACKUP_BLOCKS
    for (int i = 0; i < 17; ++i) s.s_jnl_blocks[i] = journal_i_block_[i];
  }
  s.s_kbytes_written = kbytes_;
  s.s_overhead_clusters = std::uint32_t(f_.overhead);
  s.s_orphan_file_inum = f_.orphan_ino;
  std::array<std::byte, kSuperblockSize> out{};
  fsio::store(std::span<std::byte>(out), s);
  if (l_.metadata_csum()) {
    s.s_checksum = superblock_checksum(out);
    fsio::store(std::span<std::byte>(out), s);
  }
  return out;
}

bool MkfsBuilder::writes_block_bitmap(std::uint32_t g) const {
  return !l_.group_csum() || !(m_.groups[g].flags & EXT4_BG_BLOCK_UNINIT);
}

bool MkfsBuilder::writes_inode_bitmap(std::uint32_t g) const {
  return !l_.group_csum() || !(m_.groups[g].flags & EXT4_BG_INODE_UNINIT);
}

// write_bitmaps: the group's bits, the rest of the block 0xFF, and in the
// last group every bit past the end of the filesystem set.
void MkfsBuilder::block_bitmap(std::uint32_t g, std::span<std::byte> out) const {
  const std::uint32_t bytes = l_.blocks_per_group / 8;
  std::fill(out.begin(), out.end(), std::byte{0xFF});
  m_.used.bitmap(l_.group_first_block(g), l_.blocks_per_group,
                 std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(out.data()), bytes));
  if (g + 1 == l_.group_count) {
    const std::uint64_t n = (l_.blocks_count - l_.first_data_block) % l_.blocks_per_group;
    if (n)
      for (std::uint64_t bit = n; bit < std::uint64_t(l_.block_size) * 8; ++bit)
        out[bit / 8] |= std::byte(1u << (bit % 8));
  }
}

void MkfsBuilder::inode_bitmap(std::uint32_t g, std::span<std::byte> out) const {
  std::fill(out.begin(), out.end(), std::byte{0xFF});
  const std::uint32_t ipg = l_.inodes_per_group;
  std::fill(out.begin(), out.begin() + (ipg + 7) / 8, std::byte{0});
  for (std::uint32_t ino : m_.inodes)
    if (l_.group_of_inode(ino) == g) {
      const std::uint32_t bit = (ino - 1) % ipg;
      out[bit / 8] |= std::byte(1u << (bit % 8));
    }
}

void MkfsBuilder::build_gdt() {
  const std::uint32_t ds = l_.desc_size, bs = l_.block_size;
  gdt_.assign(std::size_t(l_.gdt_blocks) * bs, std::byte{0});
  std::vector<std::byte> bitmap(bs);
  for (std::uint32_t g = 0; g < l_.group_count; ++g) {
    const MkfsGroup& src = m_.groups[g];
    GroupDesc d;
    d.block_bitmap = src.block_bitmap;
    d.inode_bitmap = src.inode_bitmap;
    d.inode_table = src.inode_table;
    d.free_blocks = src.free_blocks;
    d.free_inodes = src.free_inodes;
    d.used_dirs = src.used_dirs;
    d.itable_unused = src.itable_unused;
    d.flags = src.flags;
    if (l_.metadata_csum() && writes_block_bitmap(g)) {
      block_bitmap(g, bitmap);
      d.block_bitmap_csum = crc32c_raw(l_.csum_seed, bitmap.data(), l_.blocks_per_group / 8);
    }
    if (l_.metadata_csum() && writes_inode_bitmap(g)) {
      inode_bitmap(g, bitmap);
      d.inode_bitmap_csum = crc32c_raw(l_.csum_seed, bitmap.data(), (l_.inodes_per_group + 7) / 8);
    }
    if (ds < 64) {
      d.block_bitmap_csum &= 0xFFFF;
      d.inode_bitmap_csum &= 0xFFFF;
    }
    const std::span<std::byte> raw(gdt_.data() + std::size_t(g) * ds, ds);
    encode_group_desc(d, raw, l_);
    if (l_.group_csum()) {
      std::uint8_t uuid[16];
      std::memcpy(uuid, uuid_.data(), 16);
      d.checksum = group_desc_checksum(raw, g, l_, uuid);
      encode_group_desc(d, raw, l_);
    }
  }
}

}  // namespace ext
