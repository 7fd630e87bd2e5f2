// New inodes: a fresh one in memory, its size and link count; a regular
// file (its data written back, then the inode) and a symlink (in i_block,
// or one data block written like a file's).
#include <algorithm>
#include <cstring>

#include "ext/extent_build.hpp"
#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// Bytes in memory as a Source (a symlink's target).
class MemorySource : public Source {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  fsio::Result<std::size_t> read(std::span<std::byte> buf) override {
    const std::size_t n = std::min(buf.size(), data_.size());
    if (n > 0) std::memcpy(buf.data(), data_.data(), n);
    data_.remove_prefix(n);
    return n;
  }
  std::optional<std::uint64_t> size() const override { return data_.size(); }

 private:
  std::string_view data_;
};

}  // namespace

Inode new_inode(const Layout& l, std::uint32_t ino, std::uint16_t mode, const Owner& o) {
  Inode inode;
  inode.ino = ino;
  inode.raw.assign(l.inode_size, std::byte{0});
  auto f = inode.fields();
  f.i_mode = mode;
  f.i_uid = std::uint16_t(o.uid);
  f.l_i_uid_high = std::uint16_t(o.uid >> 16);
  f.i_gid = std::uint16_t(o.gid);
  f.l_i_gid_high = std::uint16_t(o.gid >> 16);
  if (l.inode_size > kGoodOldInodeSize)
    f.i_extra_isize = std::uint16_t(std::min<std::uint32_t>(32, l.inode_size - 128));
  inode.set_fields(f);
  return inode;
}

void set_size(Inode& inode, std::uint64_t size) {
  auto f = inode.fields();
  f.i_size_lo = std::uint32_t(size);
  f.i_size_high = std::uint32_t(size >> 32);
  inode.set_fields(f);
}

void set_links(Inode& inode, std::uint16_t n) {
  auto f = inode.fields();
  f.i_links_count = n;
  inode.set_fields(f);
}

fsio::Result<NewFile> create_file(Transaction& tx, const Inode& parent, std::uint16_t mode, Source& src,
                                  const Owner& owner, const Timestamp* mtime, const PutOptions& o, std::uint32_t ino) {
  Filesystem& fs = tx.fs();
  const Layout& l = fs.layout();
  NewFile nf;
  nf.ino = ino != 0 ? ino : FSIO_TRY(tx.alloc().alloc_inode(l.group_of_inode(parent.ino), false));
  FileWriter w(fs, tx.alloc(), l.group_first_block(l.group_of_inode(nf.ino)), o.writeback, src.size());
  w.interrupted = o.interrupted;
  w.progress = o.progress;
  FSIO_TRY(w.stream(src));

  Inode inode = new_inode(l, nf.ino, mode, owner);
  const auto extents = normalize_extents(w.extents());
  const std::uint64_t goal =
      extents.empty() ? l.group_first_block(l.group_of_inode(nf.ino)) : extents.back().physical + extents.back().len;
  const auto tree = FSIO_TRY(build_extent_tree(fs, tx.alloc(), inode, extents, goal));
  FSIO_TRY(set_inode_blocks(inode, w.data_blocks() + tree.size(), l));
  set_size(inode, w.size());
  set_links(inode, 1);
  set_inode_times(inode, tx.now(), mtime, true);
  if (w.size() >= (std::uint64_t(1) << 31) && !l.has_ro_compat(EXT2_FEATURE_RO_COMPAT_LARGE_FILE))
    fs.super_mut().s_feature_ro_compat = fs.super().s_feature_ro_compat | EXT2_FEATURE_RO_COMPAT_LARGE_FILE;
  FSIO_TRY(fs.write_inode(inode));
  nf.size = w.size();
  nf.data_blocks = w.data_blocks();
  nf.tree_blocks = tree.size();
  nf.extents = extents.size();
  nf.writeback = w.stats();
  return nf;
}

fsio::Result<std::uint32_t> create_symlink(Transaction& tx, const Inode& parent, const std::string& target,
                                           const Owner& owner, const Timestamp* mtime, const PutOptions& o) {
  Filesystem& fs = tx.fs();
  const Layout& l = fs.layout();
  if (target.empty() || target.size() >= l.block_size)
    return make_error(Errc::unsupported, "ext: a symlink target of " + std::to_string(target.size()) + " bytes");
  if (target.size() >= 60) {
    MemorySource src(target);
    return FSIO_TRY(create_file(tx, parent, std::uint16_t(S_IFLNK_ | 0777), src, owner, mtime, o)).ino;
  }
  const std::uint32_t ino = FSIO_TRY(tx.alloc().alloc_inode(l.group_of_inode(parent.ino), false));
  Inode inode = new_inode(l, ino, std::uint16_t(S_IFLNK_ | 0777), owner);
  std::memcpy(inode.raw.data() + offsetof(Ext4Inode, i_block), target.data(), target.size());
  set_size(inode, target.size());
  set_links(inode, 1);
  set_inode_times(inode, tx.now(), mtime, true);
  FSIO_TRY(fs.write_inode(inode));
  return ino;
}

}  // namespace ext
