// The ordered commit.
#include "ext/commit.hpp"

#include <cstring>

#include "ext/mkfs_io.hpp"

namespace ext {

void set_inode_times(Inode& inode, const Timestamp& t, const Timestamp* mtime, bool crtime) {
  auto f = inode.fields();
  const bool extra = inode.raw.size() > kGoodOldInodeSize;
  auto has = [&](std::size_t end) { return extra && kGoodOldInodeSize + inode.extra_isize() >= end; };
  const Timestamp& m = mtime ? *mtime : t;
  f.i_atime = std::uint32_t(t.sec);
  f.i_ctime = std::uint32_t(t.sec);
  f.i_mtime = std::uint32_t(m.sec);
  if (has(offsetof(Ext4Inode, i_ctime_extra) + 4)) f.i_ctime_extra = encode_time_extra(t.sec, t.nsec);
  if (has(offsetof(Ext4Inode, i_mtime_extra) + 4)) f.i_mtime_extra = encode_time_extra(m.sec, m.nsec);
  if (has(offsetof(Ext4Inode, i_atime_extra) + 4)) f.i_atime_extra = encode_time_extra(t.sec, t.nsec);
  if (crtime && has(offsetof(Ext4Inode, i_crtime) + 4)) f.i_crtime = std::uint32_t(t.sec);
  if (crtime && has(offsetof(Ext4Inode, i_crtime_extra) + 4)) f.i_crtime_extra = encode_time_extra(t.sec, t.nsec);
  inode.set_fields(f);
}

fsio::Status Transaction::write_kind(MetaKind kind) {
  const auto blocks = fs_.dirty_blocks(kind);
  if (blocks.empty()) return {};
  auto plug = fs_.queue().plug();
  for (std::uint64_t b : blocks) {
    auto data = FSIO_TRY(fs_.meta(b));
    plug.write(b * fs_.layout().block_size, data);
  }
  FSIO_TRY(plug.finish());
  for (std::uint64_t b : blocks) fs_.mark_clean(b);
  return {};
}

// Bitmap checksums into the descriptors, descriptors (with their own
// checksums) into the table, and the changed table blocks out with the bitmaps.
fsio::Status Transaction::write_groups() {
  const Layout& l = fs_.layout();
  FSIO_TRY(alloc_.seal_bitmaps());
  auto raw = fs_.gdt_raw_mut();
  std::vector<bool> table_dirty(l.gdt_blocks, false);
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    if (!fs_.group_dirty(g)) continue;
    auto desc = raw.subspan(std::size_t(g) * l.desc_size, l.desc_size);
    GroupDesc d = fs_.group(g);
    encode_group_desc(d, desc, l);
    d.checksum = group_desc_checksum(desc, g, l, fs_.super().s_uuid);
    fs_.group_mut(g).checksum = d.checksum;
    encode_group_desc(d, desc, l);
    table_dirty[g / l.descs_per_block()] = true;
  }
  for (std::uint32_t i = 0; i < l.gdt_blocks; ++i) {
    if (!table_dirty[i]) continue;
    const std::uint64_t blk = l.descriptor_block(i);
    auto block = FSIO_TRY(fs_.meta(blk));
    const std::size_t from = std::size_t(i) * l.block_size;
    const std::size_t n = std::min<std::size_t>(l.block_size, raw.size() - from);
    std::memcpy(block.data(), raw.data() + from, n);
    fs_.mark_dirty(blk, MetaKind::bitmap);
  }
  return write_kind(MetaKind::bitmap);
}

// Backups first (libext2fs ext2fs_flush2: each with its group number, VALID_FS
// and needs_recovery cleared, its own checksum, and the descriptor table
// after it), then the primary.
fsio::Status Transaction::write_superblocks() {
  const Layout& l = fs_.layout();
  Ext4SuperBlock& sb = fs_.super_mut();
  const std::uint64_t free_blocks = fs_.free_blocks_from_groups();
  sb.s_free_blocks_count_lo = std::uint32_t(free_blocks);
  if (l.is_64bit()) sb.s_free_blocks_count_hi = std::uint32_t(free_blocks >> 32);
  sb.s_free_inodes_count = std::uint32_t(fs_.free_inodes_from_groups());
  sb.s_wtime = std::uint32_t(now_.sec);
  sb.s_wtime_hi = std::uint8_t(now_.sec >> 32);
  sb.s_kbytes_written = sb.s_kbytes_written + fs_.queue().stats().bytes_written / 1024;
  const bool meta_bg = l.has_incompat(EXT2_FEATURE_INCOMPAT_META_BG);
  for (std::uint32_t g = 1; g < l.group_count; ++g) {
    if (!l.group_has_super(g)) continue;
    const std::uint64_t first = l.group_first_block(g);
    Ext4SuperBlock copy = sb;
    copy.s_block_group_nr = std::uint16_t(g);
    copy.s_state = std::uint16_t(copy.s_state & ~EXT2_VALID_FS);
    copy.s_feature_incompat = copy.s_feature_incompat & ~EXT3_FEATURE_INCOMPAT_RECOVER;
    copy.s_checksum = superblock_checksum(std::as_bytes(std::span(&copy, 1)));
    auto block = FSIO_TRY(fs_.meta(first));
    fsio::store(block, copy);
    fs_.mark_dirty(first, MetaKind::other);
    if (meta_bg) continue;
    const auto raw = fs_.gdt_raw();
    for (std::uint32_t i = 0; i < l.gdt_blocks; ++i) {
      auto t = FSIO_TRY(fs_.meta(first + 1 + i));
      const std::size_t from = std::size_t(i) * l.block_size;
      std::memcpy(t.data(), raw.data() + from, std::min<std::size_t>(l.block_size, raw.size() - from));
      fs_.mark_dirty(first + 1 + i, MetaKind::other);
    }
  }
  FSIO_TRY(write_kind(MetaKind::other));
  sb.s_checksum = superblock_checksum(std::as_bytes(std::span(&sb, 1)));
  const std::uint64_t sb_block = kSuperblockOffset / l.block_size;
  auto block = FSIO_TRY(fs_.meta(sb_block));
  const std::size_t at = kSuperblockOffset % l.block_size;
  fsio::store(block, sb, at);
  if (split_primary) {
    // Its second sector (counts, checksum) first: the write with the magic
    // then finds it in place, so no torn write shows a half-new superblock.
    FSIO_TRY(write_bytes(fs_.queue(), kSuperblockOffset + 512, block.subspan(at + 512, kSuperblockSize - 512),
                         "writing the superblock's second sector"));
    FSIO_TRY(fs_.queue().flush());
  }
  FSIO_TRY(fs_.queue().write(sb_block * l.block_size, block));
  fs_.mark_clean(sb_block);
  return fs_.queue().flush();
}

fsio::Status Transaction::prepare() {
  const Layout& l = fs_.layout();
  FSIO_TRY(alloc_.check_frees());
  FSIO_TRY(fs_.zero_spilled_frees(early_writes));  // before any data may land there
  // The superblock backups and their descriptor copies (write_superblocks).
  const bool meta_bg = l.has_incompat(EXT2_FEATURE_INCOMPAT_META_BG);
  for (std::uint32_t g = 1; g < l.group_count; ++g) {
    if (!l.group_has_super(g)) continue;
    const std::uint64_t first = l.group_first_block(g);
    FSIO_TRY(fs_.meta(first));
    for (std::uint32_t i = 0; !meta_bg && i < l.gdt_blocks; ++i) FSIO_TRY(fs_.meta(first + 1 + i));
  }
  for (std::uint32_t i = 0; i < l.gdt_blocks; ++i) FSIO_TRY(fs_.meta(l.descriptor_block(i)));
  FSIO_TRY(fs_.meta(kSuperblockOffset / l.block_size));
  return {};
}

fsio::Status Transaction::commit() {
  FSIO_TRY(prepare());
  FSIO_TRY(write_kind(MetaKind::fresh));
  FSIO_TRY(fs_.queue().flush());
  FSIO_TRY(write_groups());
  FSIO_TRY(write_kind(MetaKind::inode_table));
  FSIO_TRY(write_kind(MetaKind::directory));
  FSIO_TRY(write_kind(MetaKind::unlinked));
  if (alloc_.has_pending_frees()) {
    FSIO_TRY(alloc_.apply_frees());
    FSIO_TRY(write_groups());
  }
  FSIO_TRY(fs_.queue().flush());
  return write_superblocks();
}

}  // namespace ext
