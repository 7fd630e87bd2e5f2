// MkfsBuilder (see mkfs_build.hpp): inodes, directories, resize inode,
// journal and orphan blocks. The superblock, descriptors and bitmaps are in
// mkfs_super.cpp.
#include "ext/mkfs_build.hpp"

#include <cstring>

#include "ext/crc.hpp"
#include "ext/dirent.hpp"
#include "ext/inode.hpp"
#include "ext/journal.hpp"

namespace ext {

namespace {

constexpr std::uint16_t kDirMode = 0x4000, kRegMode = 0x8000;

constexpr std::size_t kChunkBlocks = 256;

void put32(std::span<std::byte> b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = std::byte(v >> (8 * i));
}
void put16(std::span<std::byte> b, std::size_t at, std::uint16_t v) {
  b[at] = std::byte(v);
  b[at + 1] = std::byte(v >> 8);
}
void put_be32(std::span<std::byte> b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = std::byte(v >> (24 - 8 * i));
}

// i_blocks (and l_i_blocks_high with huge_file) in 512-byte units, as
// ext2fs_iblk_set/add_blocks keep them for an inode without HUGE_FILE_FL.
void set_iblocks(std::vector<std::byte>& ino, std::uint64_t blocks, const Layout& l) {
  const std::uint64_t b = blocks * (l.block_size / 512);
  put32(ino, offsetof(Ext4Inode, i_blocks_lo), std::uint32_t(b));
  if (l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_HUGE_FILE))
    put16(ino, offsetof(Ext4Inode, l_i_blocks_high), std::uint16_t(b >> 32));
}

void set_size(std::vector<std::byte>& ino, std::uint64_t size) {
  put32(ino, offsetof(Ext4Inode, i_size_lo), std::uint32_t(size));
  put32(ino, offsetof(Ext4Inode, i_size_high), std::uint32_t(size >> 32));
}

// An extent root in i_block: header, then up to 4 leaf entries (depth 0)
// or one index entry (depth 1).
void set_extent_root(std::vector<std::byte>& ino, const std::vector<Extent>& ex, std::uint64_t leaf) {
  const std::size_t at = offsetof(Ext4Inode, i_block);
  put16(ino, at, kExtentMagic);
  put16(ino, at + 2, std::uint16_t(leaf ? 1 : ex.size()));
  put16(ino, at + 4, kExtentRootMax);
  put16(ino, at + 6, leaf ? 1 : 0);
  // extent_node_split moves the root's four extents to the leaf and writes
  // the index over the first; the other three stay behind, unused.
  for (std::size_t k = leaf ? 1 : 0; k < std::min<std::size_t>(ex.size(), leaf ? kExtentRootMax : ex.size()); ++k) {
    const std::size_t e = at + 12 + 12 * k;
    put32(ino, e, ex[k].logical);
    put16(ino, e + 4, std::uint16_t(ex[k].len));
    put16(ino, e + 6, std::uint16_t(ex[k].physical >> 32));
    put32(ino, e + 8, std::uint32_t(ex[k].physical));
  }
  if (leaf) {
    put32(ino, at + 12, ex.empty() ? 0 : ex[0].logical);
    put32(ino, at + 16, std::uint32_t(leaf));
    put16(ino, at + 20, std::uint16_t(leaf >> 32));
    put16(ino, at + 22, 0);
  }
}

std::vector<Extent> runs_of(const std::vector<std::uint64_t>& blocks) {
  std::vector<Extent> out;
  for (std::uint32_t k = 0; k < blocks.size(); ++k) {
    if (!out.empty() && out.back().physical + out.back().len == blocks[k]) ++out.back().len;
    else out.push_back({k, 1, blocks[k], false});
  }
  return out;
}

}  // namespace

MkfsBuilder::MkfsBuilder(const MkfsLayout& m, const MkfsFiles& f, const MkfsParams& p, std::uint64_t kbytes)
    : m_(m), f_(f), p_(p), l_(m.l), kbytes_(kbytes), uuid_(p.uuid) {
  l_.csum_seed = crc32c_raw(~0u, p.uuid.data(), p.uuid.size());
  for (int i = 0; i < 4; ++i)
    l_.hash_seed[i] = std::uint32_t(p.hash_seed[4 * i]) | std::uint32_t(p.hash_seed[4 * i + 1]) << 8 |
                      std::uint32_t(p.hash_seed[4 * i + 2]) << 16 | std::uint32_t(p.hash_seed[4 * i + 3]) << 24;
  l_.def_hash_version = p.hash_version;
  build_inodes();
  build_directories();
  build_resize();
  build_journal();
  build_orphan();
  build_gdt();
}

std::span<std::byte> MkfsBuilder::block(std::uint64_t b) {
  auto [it, fresh] = blocks_.try_emplace(b);
  if (!fresh) return it->second;
  if (chunks_.empty() || (chunk_used_ + 1) * l_.block_size > chunks_.back().size()) {
    // The first chunk holds what the files below need, so one allocation
    // serves (of 2 MiB or more it is a transparent huge page: one fault,
    // where 4 KiB pages take one each); more come only if that was short.
    const std::size_t blocks =
        chunks_.empty() ? 16 + l_.reserved_gdt_blocks + f_.lpf_blocks.size() + f_.orphan_blocks : kChunkBlocks;
    chunks_.emplace_back(blocks * l_.block_size);
    chunk_used_ = 0;
  }
  it->second = chunks_.back().span().subspan(chunk_used_++ * l_.block_size, l_.block_size);
  return it->second;
}

std::vector<std::byte> MkfsBuilder::new_inode(std::uint16_t mode, std::uint16_t links, std::uint32_t flags) const {
  std::vector<std::byte> ino(l_.inode_size);
  put16(ino, offsetof(Ext4Inode, i_mode), mode);
  put16(ino, offsetof(Ext4Inode, i_links_count), links);
  put32(ino, offsetof(Ext4Inode, i_flags), flags);
  for (std::size_t at : {offsetof(Ext4Inode, i_atime), offsetof(Ext4Inode, i_ctime), offsetof(Ext4Inode, i_mtime)})
    put32(ino, at, p_.time);
  if (l_.inode_size > kGoodOldInodeSize) {  // ext2fs_write_new_inode's large part
    put16(ino, offsetof(Ext4Inode, i_extra_isize), sizeof(Ext4Inode) - kGoodOldInodeSize);
    put32(ino, offsetof(Ext4Inode, i_crtime), p_.time);
  }
  return ino;
}

void MkfsBuilder::put_inode(std::uint32_t ino, const std::vector<std::byte>& raw) {
  Inode in{ino, raw};
  if (l_.metadata_csum()) set_inode_checksum(in, l_);
  const std::uint32_t g = l_.group_of_inode(ino);
  const std::uint64_t off = std::uint64_t((ino - 1) % l_.inodes_per_group) * l_.inode_size;
  const auto b = block(m_.groups[g].inode_table + off / l_.block_size);
  std::memcpy(b.data() + off % l_.block_size, in.raw.data(), in.raw.size());
}

// Inodes 1-10 (write_reserved_inodes with metadata_csum, the bad blocks
// inode's times), root and lost+found.
void MkfsBuilder::build_inodes() {
  for (std::uint32_t ino = 1; ino < l_.first_ino; ++ino) {
    std::vector<std::byte> raw(l_.inode_size);
    if (ino == 1)
      for (std::size_t at : {offsetof(Ext4Inode, i_atime), offsetof(Ext4Inode, i_ctime), offsetof(Ext4Inode, i_mtime)})
        put32(raw, at, p_.time);
    if (ino == 1 || l_.metadata_csum()) put_inode(ino, raw);
  }
  auto root = new_inode(kDirMode | 0755, 3, EXT4_EXTENTS_FL);
  put16(root, offsetof(Ext4Inode, i_uid), std::uint16_t(p_.root_uid));
  put16(root, offsetof(Ext4Inode, l_i_uid_high), std::uint16_t(p_.root_uid >> 16));
  put16(root, offsetof(Ext4Inode, i_gid), std::uint16_t(p_.root_gid));
  put16(root, offsetof(Ext4Inode, l_i_gid_high), std::uint16_t(p_.root_gid >> 16));
  set_size(root, l_.block_size);
  set_iblocks(root, 1, l_);
  set_extent_root(root, {{0, 1, f_.root_block, false}}, 0);
  put_inode(EXT2_ROOT_INO, root);
  auto lpf = new_inode(kDirMode | 0700, 2, EXT4_EXTENTS_FL);
  set_size(lpf, std::uint64_t(f_.lpf_blocks.size()) * l_.block_size);
  set_iblocks(lpf, f_.lpf_blocks.size(), l_);
  set_extent_root(lpf, runs_of(f_.lpf_blocks), 0);
  put_inode(f_.lpf_ino, lpf);
}

// ext2fs_new_dir_block and ext2fs_link: root holds ".", ".." and
// lost+found; lost+found holds "." and ".." then empty blocks; each block
// ends in the checksum tail with metadata_csum.
void MkfsBuilder::build_directories() {
  const std::uint32_t bs = l_.block_size, tail = l_.metadata_csum() ? kDirTailSize : 0;
  const std::uint8_t dir_type = l_.has_incompat(EXT2_FEATURE_INCOMPAT_FILETYPE) ? EXT4_FT_DIR : 0;
  auto entry = [&](std::span<std::byte> b, std::size_t at, std::uint32_t ino, std::uint32_t rec_len, const char* name) {
    put32(b, at, ino);
    put16(b, at + 4, rec_len_to_disk(rec_len, bs));
    b[at + 6] = std::byte(std::strlen(name));
    b[at + 7] = std::byte(ino ? dir_type : 0);
    std::memcpy(b.data() + at + 8, name, std::strlen(name));
  };
  auto finish = [&](std::span<std::byte> b, std::uint32_t dir) {
    if (!tail) return;
    put16(b, bs - 12 + 4, 12);
    b[bs - 12 + 7] = std::byte(kDirTailFileType);
    put32(b, bs - 12 + 8, dir_leaf_checksum(b, dir, 0, l_));
  };
  const auto root = block(f_.root_block);
  entry(root, 0, EXT2_ROOT_INO, 12, ".");
  entry(root, 12, EXT2_ROOT_INO, 12, "..");
  entry(root, 24, f_.lpf_ino, bs - 24 - tail, "lost+found");
  finish(root, EXT2_ROOT_INO);
  for (std::size_t k = 0; k < f_.lpf_blocks.size(); ++k) {
    const auto b = block(f_.lpf_blocks[k]);
    if (k == 0) {
      entry(b, 0, f_.lpf_ino, 12, ".");
      entry(b, 12, EXT2_ROOT_INO, bs - 12 - tail, "..");
    } else {
      entry(b, 0, 0, bs - tail, "");
    }
    finish(b, f_.lpf_ino);
  }
}

// res_gdt.c: the double-indirect block lists the primary reserved GDT
// blocks, each of which lists its backups; the backups stay unwritten.
void MkfsBuilder::build_resize() {
  if (!f_.resize_dind) return;
  const std::uint32_t apb = l_.block_size / 4;
  const std::uint64_t first = l_.first_data_block + 1 + l_.gdt_blocks;
  std::vector<std::uint32_t> groups;  // the groups with backups, at most a block's worth
  for (std::uint32_t g = 1; g < l_.group_count && groups.size() < apb; ++g)
    if (l_.group_has_super(g)) groups.push_back(g);
  const std::uint64_t backups = groups.size();
  const auto dind = block(f_.resize_dind);
  for (std::uint32_t k = 0; k < l_.reserved_gdt_blocks; ++k) {
    const std::uint64_t gdt_blk = first + k;
    put32(dind, 4 * ((l_.gdt_blocks + k) % apb), std::uint32_t(gdt_blk));
    const auto b = block(gdt_blk);
    for (std::size_t n = 0; n < groups.size(); ++n)
      put32(b, 4 * n, std::uint32_t(gdt_blk + std::uint64_t(groups[n]) * l_.blocks_per_group));
  }
  auto ino = new_inode(kRegMode | 0600, 1, 0);
  put32(ino, offsetof(Ext4Inode, i_block) + 4 * 13, std::uint32_t(f_.resize_dind));
  set_size(ino, (std::uint64_t(apb) * apb + apb + 12) * l_.block_size);
  set_iblocks(ino, 1 + std::uint64_t(l_.reserved_gdt_blocks) * (1 + backups), l_);
  put_inode(EXT2_RESIZE_INO, ino);
}

// mkjournal.c: the journal inode, its superblock, its extent leaf.
void MkfsBuilder::build_journal() {
  if (!f_.journal_blocks) return;
  const std::uint64_t total = std::uint64_t(f_.journal_blocks) + f_.fc_blocks;
  auto ino = new_inode(kRegMode | 0600, 1, EXT4_EXTENTS_FL);
  set_size(ino, total * l_.block_size);
  set_iblocks(ino, total + (f_.journal_leaf ? 1 : 0), l_);
  set_extent_root(ino, f_.journal_extents, f_.journal_leaf);
  put_inode(EXT4_JOURNAL_INO, ino);
  journal_i_block_.resize(17);
  for (int i = 0; i < 15; ++i)
    journal_i_block_[i] = std::to_integer<std::uint32_t>(ino[0x28 + 4 * i]) |
                          std::to_integer<std::uint32_t>(ino[0x29 + 4 * i]) << 8 |
                          std::to_integer<std::uint32_t>(ino[0x2A + 4 * i]) << 16 |
                          std::to_integer<std::uint32_t>(ino[0x2B + 4 * i]) << 24;
  journal_i_block_[15] = std::uint32_t((total * l_.block_size) >> 32);
  journal_i_block_[16] = std::uint32_t(total * l_.block_size);
  if (f_.journal_leaf) {
    const auto leaf = block(f_.journal_leaf);
    const std::uint32_t max = extent_node_max(l_.block_size);
    put16(leaf, 0, kExtentMagic);
    put16(leaf, 2, std::uint16_t(f_.journal_extents.size()));
    put16(leaf, 4, std::uint16_t(max));
    for (std::size_t k = 0; k < f_.journal_extents.size(); ++k) {
      const Extent& e = f_.journal_extents[k];
      put32(leaf, 12 + 12 * k, e.logical);
      put16(leaf, 16 + 12 * k, std::uint16_t(e.len));
      put16(leaf, 18 + 12 * k, std::uint16_t(e.physical >> 32));
      put32(leaf, 20 + 12 * k, std::uint32_t(e.physical));
    }
    if (l_.metadata_csum()) put32(leaf, 12 + 12 * max, extent_block_checksum(leaf, EXT4_JOURNAL_INO, 0, l_));
  }
  const auto sb = block(f_.journal_extents[0].physical);
  put_be32(sb, 0x0, kJbd2Magic);
  put_be32(sb, 0x4, kJbd2SuperblockV2);
  put_be32(sb, 0xC, l_.block_size);
  put_be32(sb, 0x10, std::uint32_t(total));
  put_be32(sb, 0x14, 1);  // s_first
  put_be32(sb, 0x18, 1);  // s_sequence
  std::memcpy(sb.data() + 0x30, uuid_.data(), 16);
  put_be32(sb, 0x40, 1);  // s_nr_users
  put_be32(sb, 0x54, f_.fc_blocks);
}

// orphan.c: every block empty but for the tail's magic and checksum.
void MkfsBuilder::build_orphan() {
  if (!f_.orphan_ino) return;
  const std::uint32_t bs = l_.block_size;
  for (const Extent& e : f_.orphan_extents)
    for (std::uint32_t k = 0; k < e.len; ++k) {
      const std::uint64_t blk = e.physical + k;
      const auto b = block(blk);
      put32(b, bs - 8, 0x0B10CA04);
      if (!l_.metadata_csum()) continue;
      std::uint32_t c = crc32c_raw_le32(l_.csum_seed, f_.orphan_ino);
      c = crc32c_raw_le32(c, 0);
      std::byte le[8];
      for (int i = 0; i < 8; ++i) le[i] = std::byte(blk >> (8 * i));
      c = crc32c_raw(c, le, 8);
      c = crc32c_raw(c, std::span<const std::byte>(b).first(bs - 8));
      put32(b, bs - 4, c);
    }
  auto ino = new_inode(kRegMode | 0600, 1, EXT4_EXTENTS_FL);
  set_size(ino, std::uint64_t(f_.orphan_blocks) * bs);
  set_iblocks(ino, f_.orphan_blocks, l_);
  set_extent_root(ino, f_.orphan_extents, 0);
  put_inode(f_.orphan_ino, ino);
}

}  // namespace ext
