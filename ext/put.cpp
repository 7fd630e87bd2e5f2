// put: one file from a Source, as a new name or over a regular file (-f).
// The refusals, the old file's unlink and the new link all happen in the
// cache before the data; the commit makes them visible after it.
#include <algorithm>

#include "ext/dir_write.hpp"
#include "ext/op_steps.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// Points an existing entry at another inode, in place (valid in htree directories too).
fsio::Status retarget_entry(Filesystem& fs, const Inode& dir, const std::string& name, std::uint32_t ino) {
  const Layout& l = fs.layout();
  const bool indexed = dir.flags() & EXT4_INDEX_FL;
  for (const Extent& e : FSIO_TRY(fs.extents(dir))) {
    for (std::uint32_t i = 0; i < e.len; ++i) {
      auto block = FSIO_TRY(fs.meta(e.physical + i));
      std::uint32_t at = 0;
      bool found = false;
      FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), e.logical + i, indexed, l,
                               [&](const DirEntry& d) -> fsio::Status {
                                 if (!found && d.name == name) {
                                   found = true;
                                   at = d.offset;
                                 }
                                 return {};
                               }));
      if (!found) continue;
      auto h = fsio::load<Ext4DirEntryHead>(block, at);
      h.inode = ino;
      fsio::store(block, h, at);
      seal_leaf_block(block, dir, l);
      fs.mark_dirty(e.physical + i, MetaKind::directory);
      return {};
    }
  }
  return make_error(Errc::not_found, "ext: entry '" + name + "' vanished");
}

// What put checks before reading any input.
fsio::Status check_put_target(Filesystem& fs, const Inode& parent, const std::string& name, std::uint32_t existing,
                              bool force) {
  FSIO_TRY(check_name(name));
  if (existing != 0) {
    const Inode old = FSIO_TRY(fs.read_inode(existing));
    if (!force) return make_error(Errc::busy, "ext: '" + name + "' exists; --force replaces it");
    // A regular file replaces a regular file only: the entry's file_type
    // stays as it is, and taking a symlink or a directory away is what rm is for.
    if (!old.is_reg())
      return make_error(Errc::busy, "ext: '" + name + "' is " + file_type_prose(old.mode()) +
                                        "; --force replaces a regular file with a regular file only (rm it first)");
    if (old.file_acl(fs.layout()) != 0)
      return make_error(Errc::unsupported,
                        "ext: '" + name + "' has an extended attribute block; replacing it is not supported");
  } else if (parent.flags() & (EXT4_ENCRYPT_FL | EXT4_CASEFOLD_FL | EXT4_INLINE_DATA_FL)) {
    return make_error(Errc::unsupported,
                      "ext: the directory holding '" + name +
                          "' is encrypted, casefolded or inline; adding names to it is not supported");
  }
  return {};
}

// A dry run's stand-in for create_file: the blocks of `size` bytes for
// inode `ino` allocated in memory only, so the bitmaps they come from are
// checked and a lack of space is found.
fsio::Status rehearse_file(Transaction& tx, std::uint32_t ino, std::uint64_t size) {
  const Layout& l = tx.fs().layout();
  std::uint64_t goal = l.group_first_block(l.group_of_inode(ino));
  for (std::uint64_t left = (size + l.block_size - 1) / l.block_size; left > 0;) {
    const BlockRun run =
        FSIO_TRY(tx.alloc().alloc_blocks(goal, std::uint32_t(std::min<std::uint64_t>(left, 1u << 30))));
    goal = run.start + run.len;
    left -= run.len;
  }
  return {};
}

}  // namespace

fsio::Result<PutReport> put_file(Filesystem& fs, const std::string& dest, Source& src, const PutOptions& o) {
  const Layout& l = fs.layout();
  PutReport rep;
  rep.path = dest;
  const Owner dir_owner{0755, o.owner.uid, o.owner.gid};
  FSIO_TRY(check_op_times(l, o));
  if (o.dry_run) FSIO_TRY(fs.write_gate());
  // A dry run goes through the same steps in the cache (the device is open
  // read-only) and stops where the data would be written, so it meets the
  // refusals the write would.
  Transaction tx(fs, o.now);
  auto [parent, name] = FSIO_TRY(resolve_parent(tx, fs, dest, o.parents, dir_owner, rep.created_dirs));
  const std::uint32_t existing = FSIO_TRY(fs.find_entry(parent, name));
  FSIO_TRY(check_put_target(fs, parent, name, existing, o.force));
  if (existing != 0) {
    // The old file's link dropped (in the cache) and its frees checked
    // before any data is written: a refusal there leaves the device as it was.
    Inode old = FSIO_TRY(fs.read_inode(existing));
    FSIO_TRY(unlink_inode(tx, old));
  }
  // The link too, in the cache, before the data: what the directory could
  // refuse (a block it grows by, a leaf it splits) is met with nothing
  // written. Only the commit makes it visible, after the data and the inode.
  const std::uint32_t ino = FSIO_TRY(tx.alloc().alloc_inode(l.group_of_inode(parent.ino), false));
  if (existing != 0) {
    FSIO_TRY(retarget_entry(fs, parent, name, ino));
    rep.replaced = true;
  } else {
    FSIO_TRY(add_entry(fs, tx.alloc(), parent, name, ino, file_type_for(S_IFREG_, l)));
  }
  set_inode_times(parent, o.now);
  FSIO_TRY(fs.write_inode(parent, MetaKind::directory));
  FSIO_TRY(tx.prepare());
  if (o.dry_run) {
    FSIO_TRY(rehearse_file(tx, ino, src.size().value_or(0)));
    rep.size = src.size().value_or(0);
    return rep;
  }
  const NewFile nf = FSIO_TRY(create_file(tx, parent, std::uint16_t(S_IFREG_ | (o.owner.mode & 07777)), src, o.owner,
                                          o.mtime ? &*o.mtime : nullptr, o, ino));
  FSIO_TRY(tx.commit());
  rep.ino = nf.ino;
  rep.size = nf.size;
  rep.data_blocks = nf.data_blocks;
  rep.tree_blocks = nf.tree_blocks;
  rep.extents = nf.extents;
  rep.writeback = nf.writeback;
  rep.files = 1;
  return rep;
}

}  // namespace ext
