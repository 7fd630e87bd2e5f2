// The bytes of a filesystem mke2fs 1.47.0 would make: superblock and its
// backups, the group descriptor table, bitmaps with their padding, the
// inode-table blocks that hold inodes in use, root and lost+found, the
// resize inode's blocks, the journal superblock and extent leaf, the
// orphan file. Values and checksums as lib/ext2fs writes them (csum.c,
// closefs.c, rw_bitmaps.c, newdir.c, res_gdt.c, mkjournal.c, orphan.c).
//
// Memory follows the metadata: bitmaps are built a group at a time on
// request, everything else is a few hundred blocks at most (the reserved
// GDT blocks: at most a block's worth of addresses).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "ext/mkfs_files.hpp"
#include "ext/superblock.hpp"
#include "libfsio/buffer.hpp"

namespace ext {

class MkfsBuilder {
 public:
  // `kbytes` is s_kbytes_written (mkfs_kbytes.hpp). The layout's csum seed
  // and hash fields are set here from the parameters.
  MkfsBuilder(const MkfsLayout& m, const MkfsFiles& f, const MkfsParams& p, std::uint64_t kbytes);

  const Layout& layout() const { return l_; }
  // The superblock as group g's copy holds it (0: the primary):
  // s_block_group_nr and s_state differ in backups (closefs.c write_backup_super).
  std::array<std::byte, kSuperblockSize> superblock(std::uint32_t g) const;
  // The descriptor table, gdt_blocks whole blocks, checksums set.
  const std::vector<std::byte>& gdt() const { return gdt_; }
  // Is group g's block (inode) bitmap written? Not with *_UNINIT and a descriptor checksum.
  bool writes_block_bitmap(std::uint32_t g) const;
  bool writes_inode_bitmap(std::uint32_t g) const;
  // A bitmap block as write_bitmaps fills it (block_size bytes).
  void block_bitmap(std::uint32_t g, std::span<std::byte> out) const;
  void inode_bitmap(std::uint32_t g, std::span<std::byte> out) const;
  // Every other block with contents, by block number; aligned for direct
  // I/O, valid as long as the builder.
  const std::map<std::uint64_t, std::span<std::byte>>& blocks() const { return blocks_; }

 private:
  void build_inodes();
  void build_directories();
  void build_resize();
  void build_journal();
  void build_orphan();
  void build_gdt();
  std::span<std::byte> block(std::uint64_t b);
  void put_inode(std::uint32_t ino, const std::vector<std::byte>& raw);
  std::vector<std::byte> new_inode(std::uint16_t mode, std::uint16_t links, std::uint32_t flags) const;

  const MkfsLayout& m_;
  const MkfsFiles& f_;
  const MkfsParams& p_;
  Layout l_;
  std::uint64_t kbytes_;
  std::vector<std::byte> gdt_;
  std::map<std::uint64_t, std::span<std::byte>> blocks_;
  std::vector<fsio::AlignedBuffer> chunks_;  // the blocks' storage, kChunkBlocks at a time
  std::size_t chunk_used_ = 0;
  std::array<std::uint8_t, 16> uuid_{};
  std::vector<std::uint32_t> journal_i_block_;  // the journal inode's i_block: s_jnl_blocks
};

}  // namespace ext
