// rm: a name removed from its directory, and the inode's link dropped; at
// the last link its blocks and the inode are freed (after the commit's links).
#include "ext/dir_write.hpp"
#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// Every block an inode uses: data, extent tree (or indirect) blocks.
fsio::Result<std::uint64_t> free_inode_blocks(Filesystem& fs, Allocator& alloc, const Inode& inode) {
  std::uint64_t n = 0;
  const bool fast_symlink = inode.is_symlink() && inode.blocks_512(fs.layout()) == 0;
  if (fast_symlink || (inode.flags() & EXT4_INLINE_DATA_FL)) return n;
  FSIO_TRY(walk_mapping(
      inode, fs.layout(), fs.reader(),
      [&](const Extent& e) -> fsio::Status {
        alloc.free_blocks(e.physical, e.len);
        n += e.len;
        return {};
      },
      [&](std::uint64_t b) {
        alloc.free_blocks(b, 1);
        fs.forget(b);
        ++n;
      }));
  return n;
}

}  // namespace

fsio::Result<std::uint64_t> unlink_inode(Transaction& tx, Inode& inode) {
  Filesystem& fs = tx.fs();
  if (inode.file_acl(fs.layout()) != 0)
    return make_error(Errc::unsupported, "ext: inode " + std::to_string(inode.ino) +
                                             " has an extended attribute block; removing it is not supported");
  const std::uint16_t links = inode.fields().i_links_count;
  if (!inode.is_dir() && links > 1) {
    set_links(inode, std::uint16_t(links - 1));
    set_inode_times(inode, tx.now());
    FSIO_TRY(fs.write_inode(inode, MetaKind::unlinked));
    return std::uint64_t(0);
  }
  const std::uint64_t blocks = FSIO_TRY(free_inode_blocks(fs, tx.alloc(), inode));
  tx.alloc().free_inode(inode.ino, inode.is_dir());
  auto f = inode.fields();
  f.i_links_count = 0;
  f.i_dtime = std::uint32_t(tx.now().sec);
  inode.set_fields(f);
  FSIO_TRY(fs.write_inode(inode, MetaKind::unlinked));
  return blocks;
}

fsio::Result<RmReport> remove_path(Filesystem& fs, const std::string& path, const Timestamp& now, bool dry_run) {
  RmReport rep;
  const auto [parent_path, name] = split_parent(path);
  if (name.empty()) return make_error(Errc::invalid_argument, "ext: cannot remove the root directory");
  FSIO_TRY(check_op_times(fs.layout(), now, std::nullopt));
  if (dry_run) FSIO_TRY(fs.write_gate());
  Inode parent = FSIO_TRY(read_dir(fs, FSIO_TRY(fs.lookup(parent_path)), parent_path));
  const std::uint32_t ino = FSIO_TRY(fs.find_entry(parent, name));
  if (ino == 0) return make_error(Errc::not_found, "ext: " + path + ": no such file or directory");
  Inode inode = FSIO_TRY(fs.read_inode(ino));
  rep.ino = ino;
  if (inode.is_dir()) {
    bool empty = true;
    FSIO_TRY(fs.for_each_entry(inode, [&](const DirEntry& d) -> fsio::Result<bool> {
      empty = empty && (d.name == "." || d.name == "..");
      return empty;
    }));
    if (!empty) return make_error(Errc::busy, "ext: " + path + " is a directory that is not empty");
  }
  if (inode.file_acl(fs.layout()) != 0)
    return make_error(Errc::unsupported,
                      "ext: " + path + " has an extended attribute block; removing it is not supported");
  // A dry run changes the cache only (the device is open read-only) and
  // stops before the commit, so it meets the refusals of the frees.
  Transaction tx(fs, now);
  FSIO_TRY(remove_entry(fs, parent, name));
  rep.inode_freed = inode.is_dir() || inode.fields().i_links_count <= 1;
  rep.blocks_freed = FSIO_TRY(unlink_inode(tx, inode));
  if (inode.is_dir()) {
    const std::uint16_t links = parent.fields().i_links_count;
    if (links > 2) set_links(parent, std::uint16_t(links - 1));
  }
  set_inode_times(parent, now);
  FSIO_TRY(fs.write_inode(parent, MetaKind::directory));
  FSIO_TRY(dry_run ? tx.prepare() : tx.commit());
  return rep;
}

}  // namespace ext
