// kbytes_written (see mkfs_kbytes.hpp): libext2fs's caches replayed.
#include "ext/mkfs_kbytes.hpp"

#include <array>

#include "ext/group_desc.hpp"

namespace ext {
namespace {

// unix_io.c's cache: find_cached_block takes the first unused slot, else
// the least recently used one; reuse_cache writes a dirty victim out.
class UnixCache {
 public:
  UnixCache(std::uint32_t bs, std::vector<std::string>* trace) : bs_(bs), trace_(trace) {}
  void read(std::uint64_t b) {
    if (find(b)) return;
    reuse(victim(), b, "R ");
  }
  void write(std::uint64_t b) {
    Slot* s = find(b);
    if (!s) {
      s = victim();
      reuse(s, b, nullptr);
    }
    s->dirty = true;
  }
  void raw_write(std::uint64_t bytes) {
    bytes_ += bytes;
    if (trace_) trace_->push_back("RAW " + std::to_string(bytes));
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct Slot {
    std::uint64_t block = 0, access = 0;
    bool in_use = false, dirty = false;
  };
  Slot* find(std::uint64_t b) {
    for (Slot& s : slots_)
      if (s.in_use && s.block == b) {
        s.access = ++clock_;
        return &s;
      }
    return nullptr;
  }
  Slot* victim() {
    Slot* oldest = nullptr;
    for (Slot& s : slots_) {
      if (!s.in_use) return &s;
      if (!oldest || s.access < oldest->access) oldest = &s;
    }
    return oldest;
  }
  void reuse(Slot* s, std::uint64_t b, const char* read) {
    if (s->in_use && s->dirty) {
      bytes_ += bs_;
      if (trace_) trace_->push_back("W " + std::to_string(s->block));
    }
    if (read && trace_) trace_->push_back(read + std::to_string(b));
    *s = Slot{b, ++clock_, true, false};
  }
  std::uint32_t bs_;
  std::vector<std::string>* trace_;
  std::array<Slot, 8> slots_{};
  std::uint64_t clock_ = 0, bytes_ = 0;
};

// libext2fs's view of mke2fs: inode reads and writes through the inode
// cache (inode.c), directory and extent blocks with their checksums, each
// checksum reading its inode first (csum.c).
class Model {
 public:
  Model(const MkfsLayout& m, const MkfsParams& p, std::vector<std::string>* trace)
      : m_(m), cache_(m.l.block_size, trace), csum_(m.l.metadata_csum()), full_128_(m.l.inode_size == 128) {
    (void)p;
  }
  UnixCache& cache() { return cache_; }

  std::uint64_t itb(std::uint32_t ino) const {
    const Layout& l = m_.l;
    const std::uint64_t off = std::uint64_t((ino - 1) % l.inodes_per_group) * l.inode_size;
    return m_.groups[l.group_of_inode(ino)].inode_table + off / l.block_size;
  }
  // ext2fs_read_inode: the inode cache, else the buffered block, else a read.
  void read_inode(std::uint32_t ino) {
    for (std::uint32_t c : icache_)
      if (c == ino) return;
    load(itb(ino));
    last_ = (last_ + 1) % 4;
    icache_[last_] = ino;
  }
  // ext2fs_write_inode2: a write of less than the whole inode reads it first.
  void write_inode(std::uint32_t ino, bool whole) {
    if (!whole) read_inode(ino);
    load(itb(ino));
    cache_.write(itb(ino));
  }
  void write_new_inode(std::uint32_t ino) { write_inode(ino, true); }
  // ext2fs_write_inode with a struct ext2_inode (128 bytes).
  void write_inode_small(std::uint32_t ino) { write_inode(ino, full_128_); }

  void write_dir_block(std::uint64_t b, std::uint32_t ino) {
    if (csum_) read_inode(ino);
    cache_.write(b);
  }
  void read_dir_block(std::uint64_t b, std::uint32_t ino) {
    cache_.read(b);
    if (csum_) read_inode(ino);
  }
  void write_extent_block(std::uint64_t b, std::uint32_t ino) { write_dir_block(b, ino); }
  void read_extent_block(std::uint64_t b, std::uint32_t ino) { read_dir_block(b, ino); }
  // ext2fs_dir_iterate2 over a one-block directory (check_directory and
  // block_iterate3 each read the inode), rewriting the block if `modify`.
  void dir_iterate(std::uint32_t dir, std::uint64_t block, bool modify) {
    read_inode(dir);
    read_inode(dir);
    read_dir_block(block, dir);
    if (modify) write_dir_block(block, dir);
  }

 private:
  void load(std::uint64_t b) {
    if (buffer_ == b) return;
    cache_.read(b);
    buffer_ = b;
  }
  const MkfsLayout& m_;
  UnixCache cache_;
  bool csum_, full_128_;
  std::array<std::uint32_t, 4> icache_{};
  int last_ = -1;
  std::uint64_t buffer_ = 0;
};

void root_and_lost_found(Model& x, const MkfsFiles& f, const MkfsParams& p) {
  x.write_new_inode(EXT2_ROOT_INO);  // ext2fs_mkdir(root)
  x.write_dir_block(f.root_block, EXT2_ROOT_INO);
  x.write_inode_small(EXT2_ROOT_INO);  // extent set_bmap
  if (p.root_uid || p.root_gid) {
    x.read_inode(EXT2_ROOT_INO);
    x.write_new_inode(EXT2_ROOT_INO);
  }
  const std::uint32_t lpf = f.lpf_ino;
  x.read_inode(EXT2_ROOT_INO);  // ext2fs_mkdir(lost+found): the parent
  x.write_new_inode(lpf);
  x.write_dir_block(f.lpf_blocks[0], lpf);
  x.write_inode_small(lpf);
  x.dir_iterate(EXT2_ROOT_INO, f.root_block, false);  // ext2fs_lookup: not there yet
  x.read_inode(EXT2_ROOT_INO);                        // ext2fs_link
  x.dir_iterate(EXT2_ROOT_INO, f.root_block, true);
  x.read_inode(EXT2_ROOT_INO);  // the parent's link count
  x.write_inode_small(EXT2_ROOT_INO);
  x.dir_iterate(EXT2_ROOT_INO, f.root_block, false);       // create_lost_and_found's lookup
  for (std::size_t k = 1; k < f.lpf_blocks.size(); ++k) {  // ext2fs_expand_dir
    x.read_inode(lpf);
    x.read_inode(lpf);
    x.read_inode(lpf);  // block_iterate3
    x.write_dir_block(f.lpf_blocks[k], lpf);
    x.write_inode_small(lpf);  // set_bmap
    x.read_inode(lpf);
    x.write_inode_small(lpf);
  }
}

void resize_inode(Model& x, const MkfsLayout& m, const MkfsFiles& f) {
  if (!f.resize_dind) return;
  x.read_inode(EXT2_RESIZE_INO);
  const std::uint64_t first = m.l.first_data_block + 1 + m.l.gdt_blocks;
  for (std::uint32_t k = 0; k < m.l.reserved_gdt_blocks; ++k) x.cache().write(first + k);
  x.cache().write(f.resize_dind);
  x.write_new_inode(EXT2_RESIZE_INO);
}

// ext2fs_fallocate of the journal: four extents in the inode; the fifth
// splits the root into a leaf; later ones go to the leaf.
void journal(Model& x, const MkfsFiles& f) {
  if (!f.journal_blocks) return;
  const std::uint32_t j = EXT4_JOURNAL_INO;
  const std::uint64_t leaf = f.journal_leaf;
  x.read_inode(j);
  for (std::size_t k = 0; k < f.journal_extents.size(); ++k) {
    if (k < 4) {
      x.write_inode_small(j);  // extent_replace's and extent_insert's update_path
      x.write_inode_small(j);
      continue;
    }
    if (k == 4) {
      x.cache().write(leaf);  // ext2fs_alloc_block2 writes it zeroed
      x.write_extent_block(leaf, j);
      x.write_inode_small(j);  // the root, now an index
      x.write_inode_small(j);
      x.read_extent_block(leaf, j);  // extent_goto2 back down
      x.write_inode_small(j);        // i_blocks counts the leaf
    } else {
      x.read_extent_block(leaf, j);  // extent_goto
    }
    x.write_extent_block(leaf, j);
    x.write_extent_block(leaf, j);
    x.read_extent_block(leaf, j);  // extent_fix_parents' goto
  }
  x.write_new_inode(j);
  if (leaf) x.read_extent_block(leaf, j);          // ext2fs_bmap2 of block 0
  x.cache().write(f.journal_extents[0].physical);  // the journal superblock
}

void orphan_file(Model& x, const MkfsFiles& f) {
  if (!f.orphan_ino) return;
  const std::uint32_t o = f.orphan_ino;
  x.read_inode(o);
  x.write_inode_small(o);
  x.read_inode(o);  // block_iterate3
  for (const Extent& e : f.orphan_extents)
    for (std::uint32_t k = 0; k < e.len; ++k) {
      x.cache().write(e.physical + k);
      x.write_inode_small(o);  // set_bmap
    }
  x.read_inode(o);
  x.write_new_inode(o);
}

}  // namespace

std::uint64_t kbytes_written(const MkfsLayout& m, const MkfsFiles& f, const MkfsParams& p,
                             std::vector<std::string>* trace) {
  const Layout& l = m.l;
  constexpr std::uint32_t kStarts = EXT4_FEATURE_RO_COMPAT_HUGE_FILE | EXT4_FEATURE_RO_COMPAT_GDT_CSUM |
                                    EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT4_FEATURE_RO_COMPAT_METADATA_CSUM |
                                    EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE;
  if (!(p.incompat & EXT4_FEATURE_INCOMPAT_FLEX_BG) && !(p.ro_compat & kStarts)) return 0;
  Model x(m, p, trace);
  x.cache().raw_write(3072);  // zap_sector(2, 6)
  x.cache().raw_write(1024);  // zap_sector(0, 2)
  if (l.metadata_csum())      // write_reserved_inodes
    for (std::uint32_t ino = 1; ino < l.first_ino; ++ino) x.write_inode(ino, true);
  root_and_lost_found(x, f, p);
  x.read_inode(1);  // ext2fs_update_bb_inode: block_iterate2, then the times
  x.read_inode(1);
  x.write_inode_small(1);
  resize_inode(x, m, f);
  journal(x, f);
  orphan_file(x, f);
  for (std::uint32_t g = 0; g < l.group_count; ++g) {  // write_bitmaps
    const MkfsGroup& d = m.groups[g];
    if (!l.group_csum() || !(d.flags & EXT4_BG_BLOCK_UNINIT)) x.cache().write(d.block_bitmap);
    if (!l.group_csum() || !(d.flags & EXT4_BG_INODE_UNINIT)) x.cache().write(d.inode_bitmap);
  }
  return 1 + x.cache().bytes() / 1024 + (l.gdt_blocks + 1) / (l.block_size / 1024);
}

}  // namespace ext
