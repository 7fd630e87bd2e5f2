// Directory insertion and removal.
#include "ext/dir_write.hpp"

#include <cstring>

#include "ext/extent_build.hpp"
#include "ext/htree.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

std::uint32_t leaf_end(const Layout& l) { return l.block_size - (l.metadata_csum() ? kDirTailSize : 0); }

void put_entry(std::span<std::byte> block, std::uint32_t off, std::uint32_t ino, std::uint32_t rec,
               std::string_view name, std::uint8_t type, const Layout& l) {
  Ext4DirEntryHead h{};
  h.inode = ino;
  h.rec_len = rec_len_to_disk(rec, l.block_size);
  h.name_len = std::uint8_t(name.size());
  h.file_type = type;
  fsio::store(block, h, off);
  if (!name.empty()) std::memcpy(block.data() + off + 8, name.data(), name.size());  // an empty view may hold nullptr
}

bool insert_in_block(std::span<std::byte> block, std::string_view name, std::uint32_t ino, std::uint8_t type,
                     const Layout& l) {
  const std::uint32_t need = dirent_size(std::uint32_t(name.size()));
  const std::uint32_t end = leaf_end(l);
  for (std::uint32_t off = 0; off < end;) {
    const auto h = fsio::load<Ext4DirEntryHead>(block, off);
    const std::uint32_t rec = rec_len_from_disk(h.rec_len, l.block_size);
    if (rec < 8 || off + rec > end) return false;  // checked when the block was read
    const std::uint32_t used = h.inode ? dirent_size(h.name_len) : 0;
    if (rec - used >= need) {
      if (used == 0) {
        put_entry(block, off, ino, rec, name, type, l);
      } else {
        auto shrunk = h;
        shrunk.rec_len = rec_len_to_disk(used, l.block_size);
        fsio::store(block, shrunk, off);
        put_entry(block, off + used, ino, rec - used, name, type, l);
      }
      return true;
    }
    off += rec;
  }
  return false;
}

fsio::Status rebuild_dir_tree(Filesystem& fs, Allocator& alloc, Inode& dir, std::vector<Extent> extents,
                              std::uint64_t goal) {
  const auto old_tree = FSIO_TRY(extent_tree_blocks(fs, dir));
  for (std::uint64_t b : old_tree) {
    alloc.free_blocks(b, 1);
    fs.forget(b);
  }
  extents = normalize_extents(extents);
  const auto tree = FSIO_TRY(build_extent_tree(fs, alloc, dir, extents, goal));
  std::uint64_t data = 0;
  for (const Extent& e : extents) data += e.len;
  return set_inode_blocks(dir, data + tree.size(), fs.layout());
}

// Appends a block to a directory: allocated after its last block, one
// empty entry spanning it, the extent tree rebuilt around it.
fsio::Result<NewDirBlock> grow_dir(Filesystem& fs, Allocator& alloc, Inode& dir) {
  const Layout& l = fs.layout();
  auto extents = FSIO_TRY(fs.extents(dir));
  const std::uint64_t nblocks = (dir.size() + l.block_size - 1) / l.block_size;
  std::uint64_t goal =
      extents.empty() ? l.group_first_block(l.group_of_inode(dir.ino)) : extents.back().physical + extents.back().len;
  const BlockRun run = FSIO_TRY(alloc.alloc_blocks(goal, 1));
  auto block = fs.meta_new(run.start, MetaKind::fresh);
  put_entry(block, 0, 0, leaf_end(l), {}, 0, l);
  extents.push_back(Extent{std::uint32_t(nblocks), 1, run.start, false});
  FSIO_TRY(rebuild_dir_tree(fs, alloc, dir, extents, run.start + 1));
  auto f = dir.fields();
  const std::uint64_t size = (nblocks + 1) * l.block_size;
  f.i_size_lo = std::uint32_t(size);
  f.i_size_high = std::uint32_t(size >> 32);
  dir.set_fields(f);
  return NewDirBlock{run.start, std::uint32_t(nblocks), block};
}

fsio::Result<NewDirBlock> copy_dir_block(Filesystem& fs, Allocator& alloc, Inode& dir, std::uint32_t logical) {
  auto extents = FSIO_TRY(fs.extents(dir));
  // A block this transaction allocated is not linked on the device yet:
  // nothing can see it change, so it is changed in place (copying it again
  // at each leaf split made a tree of N names cost O(N^2)). It is marked
  // dirty here, as a copy is: once a spill has written it out, it comes
  // back into the cache clean, and the caller's changes (a split's lower
  // half, when the new name goes to the upper one) would be dropped.
  for (const Extent& e : extents) {
    if (e.unwritten || logical < e.logical || logical - e.logical >= e.len) continue;
    const std::uint64_t b = e.physical + (logical - e.logical);
    if (!fs.is_fresh(b)) break;
    auto data = FSIO_TRY(fs.meta(b));
    fs.mark_dirty(b, MetaKind::fresh);
    return NewDirBlock{b, logical, data};
  }
  std::vector<Extent> remapped;
  std::uint64_t old = 0;
  for (const Extent& e : extents) {
    if (logical < e.logical || logical - e.logical >= e.len) {
      remapped.push_back(e);
      continue;
    }
    old = e.physical + (logical - e.logical);
    if (logical > e.logical) remapped.push_back(Extent{e.logical, logical - e.logical, e.physical, e.unwritten});
    remapped.push_back(Extent{logical, 1, 0, false});  // filled in below
    if (logical + 1 < e.logical + e.len)
      remapped.push_back(Extent{logical + 1, e.logical + e.len - logical - 1, old + 1, e.unwritten});
  }
  if (old == 0)
    return make_error(Errc::corrupt, "ext directory inode " + std::to_string(dir.ino) + ": block " +
                                         std::to_string(logical) + " is not mapped");
  const BlockRun run = FSIO_TRY(alloc.alloc_blocks(old, 1));
  const auto src = FSIO_TRY(fs.meta(old));
  const std::vector<std::byte> copy(src.begin(), src.end());
  auto block = fs.meta_new(run.start, MetaKind::fresh);
  std::copy(copy.begin(), copy.end(), block.begin());
  for (Extent& e : remapped)
    if (e.logical == logical && e.len == 1 && e.physical == 0) e.physical = run.start;
  alloc.free_blocks(old, 1);
  fs.forget(old);
  FSIO_TRY(rebuild_dir_tree(fs, alloc, dir, remapped, run.start + 1));
  return NewDirBlock{run.start, logical, block};
}

fsio::Status check_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..")
    return make_error(Errc::invalid_argument, "ext: '" + std::string(name) + "' cannot be a file name");
  if (name.size() > 255)
    return make_error(Errc::invalid_argument, "ext: a name of " + std::to_string(name.size()) + " bytes is over 255");
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return make_error(Errc::invalid_argument, "ext: a name cannot hold '/' or NUL");
  return {};
}

std::uint8_t file_type_for(std::uint16_t mode, const Layout& l) {
  if (!l.has_incompat(EXT2_FEATURE_INCOMPAT_FILETYPE)) return 0;
  switch (mode & S_IFMT_) {
    case S_IFREG_: return EXT4_FT_REG_FILE;
    case S_IFDIR_: return EXT4_FT_DIR;
    case S_IFLNK_: return EXT4_FT_SYMLINK;
    case 0x2000: return EXT4_FT_CHRDEV;
    case 0x6000: return EXT4_FT_BLKDEV;
    case 0x1000: return EXT4_FT_FIFO;
    case 0xC000: return EXT4_FT_SOCK;
    default: return EXT4_FT_UNKNOWN;
  }
}

void seal_leaf_block(std::span<std::byte> block, const Inode& dir, const Layout& l) {
  if (!l.metadata_csum()) return;
  Ext4DirEntryTail t{};
  t.det_rec_len = kDirTailSize;
  t.det_reserved_ft = kDirTailFileType;
  t.det_checksum = dir_leaf_checksum(block, dir.ino, dir.generation(), l);
  fsio::store(block, t, block.size() - kDirTailSize);
}

void init_dir_block(std::span<std::byte> block, const Inode& dir, std::uint32_t parent, const Layout& l) {
  std::fill(block.begin(), block.end(), std::byte{0});
  const std::uint8_t dt = file_type_for(S_IFDIR_, l);
  put_entry(block, 0, dir.ino, 12, ".", dt, l);
  put_entry(block, 12, parent, leaf_end(l) - 12, "..", dt, l);
  seal_leaf_block(block, dir, l);
}

fsio::Status add_entry(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                       std::uint8_t file_type) {
  FSIO_TRY(check_name(name));
  const Layout& l = fs.layout();
  if (dir.flags() & (EXT4_ENCRYPT_FL | EXT4_CASEFOLD_FL | EXT4_INLINE_DATA_FL))
    return make_error(Errc::unsupported, "ext: directory inode " + std::to_string(dir.ino) +
                                             " is encrypted, casefolded or inline; not supported");
  if (dir.flags() & EXT4_INDEX_FL) return htree_add(fs, alloc, dir, name, ino, file_type);
  const auto extents = FSIO_TRY(fs.extents(dir));
  const std::uint64_t nblocks = (dir.size() + l.block_size - 1) / l.block_size;
  for (const Extent& e : extents) {
    for (std::uint32_t i = 0; i < e.len && e.logical + std::uint64_t(i) < nblocks; ++i) {
      if (e.unwritten) continue;
      auto block = FSIO_TRY(fs.meta(e.physical + i));
      // Parsing first checks the block (and its checksum) before we trust its
      // rec_lens, unless this transaction made it.
      if (!fs.is_fresh(e.physical + i))
        FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), e.logical + i, false, l,
                                 [](const DirEntry&) -> fsio::Status { return {}; }));
      if (insert_in_block(block, name, ino, file_type, l)) {
        seal_leaf_block(block, dir, l);
        fs.mark_dirty(e.physical + i, MetaKind::directory);
        return {};
      }
    }
  }
  // ext4_add_entry: a full one-block directory becomes an htree (make_indexed_dir).
  if (nblocks == 1 && l.has_compat(EXT2_FEATURE_COMPAT_DIR_INDEX))
    return htree_convert(fs, alloc, dir, name, ino, file_type);
  auto grown = FSIO_TRY(grow_dir(fs, alloc, dir));
  if (!insert_in_block(grown.data, name, ino, file_type, l))
    return make_error(Errc::invalid_argument, "ext: a new directory block has no room for '" + std::string(name) + "'");
  seal_leaf_block(grown.data, dir, l);
  return {};
}

fsio::Result<std::uint32_t> remove_entry(Filesystem& fs, const Inode& dir, std::string_view name) {
  const Layout& l = fs.layout();
  const bool indexed = dir.flags() & EXT4_INDEX_FL;
  const auto extents = FSIO_TRY(fs.extents(dir));
  const std::uint64_t nblocks = (dir.size() + l.block_size - 1) / l.block_size;
  for (const Extent& e : extents) {
    for (std::uint32_t i = 0; i < e.len && e.logical + std::uint64_t(i) < nblocks; ++i) {
      if (e.unwritten) continue;
      const std::uint32_t logical = e.logical + i;
      auto block = FSIO_TRY(fs.meta(e.physical + i));
      if (classify_dir_block(block, logical, indexed, l) != DirBlockKind::leaf) continue;
      std::uint32_t found = 0, at = 0, prev = 0, rec = 0;
      bool has_prev = false;
      std::uint32_t last = 0;
      bool seen = false;
      FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), logical, indexed, l,
                               [&](const DirEntry&) -> fsio::Status { return {}; }));
      // Walk again by rec_len to know each entry's predecessor (unused ones included).
      for (std::uint32_t off = 0; off < leaf_end(l) && !found;) {
        const auto h = fsio::load<Ext4DirEntryHead>(block, off);
        const std::uint32_t r = rec_len_from_disk(h.rec_len, l.block_size);
        if (h.inode != 0 && h.name_len == name.size() &&
            std::memcmp(block.data() + off + 8, name.data(), name.size()) == 0) {
          found = h.inode;
          at = off;
          rec = r;
          prev = last;
          has_prev = seen;
        }
        last = off;
        seen = true;
        off += r;
      }
      if (!found) continue;
      if (has_prev) {
        auto p = fsio::load<Ext4DirEntryHead>(block, prev);
        p.rec_len = rec_len_to_disk(rec_len_from_disk(p.rec_len, l.block_size) + rec, l.block_size);
        fsio::store(block, p, prev);
      } else {
        auto h = fsio::load<Ext4DirEntryHead>(block, at);
        h.inode = 0;
        fsio::store(block, h, at);
      }
      seal_leaf_block(block, dir, l);
      fs.mark_dirty(e.physical + i, MetaKind::directory);
      return found;
    }
  }
  return make_error(Errc::not_found,
                    "ext: no entry '" + std::string(name) + "' in directory inode " + std::to_string(dir.ino));
}

}  // namespace ext
