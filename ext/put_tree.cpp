// put of a directory tree: a new directory `dest` made, then filled from a
// listed tree by TreeFill (tree_fill.hpp, the copy mkext4 -d shares), all
// in one transaction, as mke2fs -d fills a new filesystem.
#include "ext/dir_write.hpp"
#include "ext/op_steps.hpp"
#include "ext/tree_fill.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

fsio::Result<PutReport> put_tree(Filesystem& fs, const std::string& dest, const fsio::Tree& tree, fsio::TreeSource& src,
                                 const PutOptions& o) {
  PutReport rep;
  rep.path = dest;
  const Owner dir_owner{0755, o.owner.uid, o.owner.gid};
  if (o.dry_run) FSIO_TRY(fs.write_gate());
  TreeFillOptions fo;
  if (o.uid_map || o.gid_map) fo.uid_map = o.uid_map, fo.gid_map = o.gid_map;
  else fo.owner = o.owner;
  fo.mtime = o.mtime;
  fo.clamp = o.clamp;
  fo.now = o.now;
  fo.batch_bytes = o.writeback.chunk;
  fo.cache_bytes = o.dry_run ? UINT64_MAX : o.meta_cache;  // a dry run's device is open read-only
  fo.interrupted = o.interrupted;
  fo.progress = o.progress;
  FSIO_TRY(check_tree(fs.layout(), tree, fo, true));
  Transaction tx(fs, o.now);
  // A dry run makes everything in the cache only (the device is open
  // read-only) and stops before the first byte of data.
  auto [parent, name] = FSIO_TRY(resolve_parent(tx, fs, dest, o.parents, dir_owner, rep.created_dirs));
  const std::uint32_t existing = FSIO_TRY(fs.find_entry(parent, name));
  if (existing != 0) return make_error(Errc::busy, "ext: " + dest + " exists; a tree is copied into a new directory");
  FSIO_TRY(check_name(name));
  FSIO_TRY(check_op_times(fs.layout(), o));
  const std::uint32_t ino = FSIO_TRY(create_dir(tx, parent, name, FSIO_TRY(owner_in_image(tree, 0, fo))));
  Inode top = FSIO_TRY(fs.read_inode(ino));
  TreeFill fill(tx, tree, fo);
  FSIO_TRY(fill.plan(top, true));  // every allocation, in the cache
  FSIO_TRY(tx.prepare());          // before the first byte of data
  const TreeFillReport& fr = fill.report();
  rep.files = fr.count.files;
  rep.dirs = fr.count.dirs + 1;
  rep.symlinks = fr.count.symlinks;
  rep.size = fr.count.bytes;
  rep.data_blocks = fr.data_blocks;
  rep.tree_blocks = fr.tree_blocks;
  rep.extents = fr.extents;
  if (o.dry_run) return rep;
  FSIO_TRY(fill.write_data(src));
  FSIO_TRY(tx.commit());
  rep.ino = ino;
  rep.writeback.blocks_committed = fill.report().bytes_written / fs.layout().block_size;
  return rep;
}

}  // namespace ext
