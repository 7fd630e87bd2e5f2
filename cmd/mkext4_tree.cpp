// mkext4 -d (see mkext4_tree.hpp).
#include "cmd/mkext4_tree.hpp"

#include <cerrno>

#include "cmd/common.hpp"
#include "cmd/tree/source.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return format_count(n) + " " + (n == 1 ? one : many);
}

// What an interrupted fill leaves: the format is on the target, but not
// one superblock (they are written last), so no filesystem at all.
Error interrupted_fill() {
  return make_error(Errc::interrupted,
                    "interrupted while filling the new filesystem: the target holds no filesystem (its superblocks "
                    "are written last); make it again to finish");
}

}  // namespace

Result<std::unique_ptr<Mkext4Tree>> Mkext4Tree::start(const std::string& source, const ext::MkfsPlan& plan,
                                                      std::optional<std::int64_t> epoch, const TreeOwners& owners) {
  auto t = FSIO_TRY(open(source));
  FSIO_TRY(t->check(plan, epoch, owners));
  return t;
}

Result<std::unique_ptr<Mkext4Tree>> Mkext4Tree::open(const std::string& source) {
  std::unique_ptr<Mkext4Tree> t(new Mkext4Tree);
  t->source_ = source;
  tree::SourceOptions so;
  so.symlinks = SymlinkPolicy::keep;
  so.holes = true;  // holes stay holes
  so.attrs = true;  // xattrs, ACLs and chattr flags
  t->src_ = FSIO_TRY(tree::open_source(source, so));
  t->tree_ = FSIO_TRY(t->src_->list());
  return t;
}

Status Mkext4Tree::check(const ext::MkfsPlan& plan, std::optional<std::int64_t> epoch, const TreeOwners& owners) {
  const ext::Layout& l = plan.layout.l;
  opt_.clamp = epoch;
  if (owners.all_root) opt_.owner = ext::Owner{0, 0, 0};
  opt_.uid_map = owners.uid_map;
  opt_.gid_map = owners.gid_map;
  opt_.now = ext::Timestamp{plan.params.time, 0};
  opt_.use_reserved = true;  // as mke2fs -d: the reserve is the kernel's rule for users, not the builder's
  opt_.interrupted = [] { return InterruptGuard::requested(); };
  FSIO_TRY(ext::check_tree(l, tree_, opt_));
  count_ = ext::count_tree(tree_, l.block_size);
  free_blocks_ = plan.layout.free_blocks;
  free_inodes_ = plan.layout.free_inodes;
  if (count_.inodes > free_inodes_ || count_.min_blocks > free_blocks_)
    return errno_error(ENOSPC, source_ + ": the tree takes at least " + plural(count_.min_blocks, "block", "blocks") +
                                   " of " + std::to_string(l.block_size) + " bytes and " +
                                   plural(count_.inodes, "inode", "inodes") + "; the new filesystem has " +
                                   format_count(free_blocks_) + " and " + format_count(free_inodes_) +
                                   " free (a larger SIZE, or more inodes with -N or -i)");
  return {};
}

Status Mkext4Tree::check_apart(const std::string& target) const {
  return fsio::check_apart({"", target}, src_->storage());
}

Result<IoStats> Mkext4Tree::fill(std::unique_ptr<Device> device, std::unique_ptr<IoQueue> queue,
                                 const std::string& target, std::span<const std::byte> primary, Progress* progress) {
  ext::OpenOptions oo;
  oo.write = true;
  auto fs = FSIO_TRY(ext::Filesystem::adopt(std::move(device), std::move(queue), target, primary, oo));
  opt_.progress = progress;
  ext::Transaction tx(*fs, opt_.now);
  tx.split_primary = true;
  // write_mkfs wrote no superblock (it erased the old ones) and the commit
  // writes them all after the tree: until then no filesystem is visible, so
  // metadata goes out as the cache fills and memory stays bounded.
  tx.early_writes = true;
  opt_.cache_bytes = FSIO_TRY(test_size("FSIO_META_CACHE", opt_.cache_bytes));
  opt_.batch_bytes = FSIO_TRY(test_size("FSIO_DATA_BATCH", opt_.batch_bytes));
  ext::Inode root = FSIO_TRY(fs->read_inode(ext::EXT2_ROOT_INO));
  ext::TreeFill fill(tx, tree_, opt_);
  if (auto st = fill.plan(root, false); !st) {
    if (st.error().code == Errc::interrupted) return interrupted_fill();
    if (st.error().sys_errno != ENOSPC) return std::move(st).error();
    return std::move(st).error().wrap("the tree (" + format_count(count_.inodes) + " inodes, at least " +
                                      format_count(count_.min_blocks) + " blocks) does not fit the " +
                                      format_count(free_blocks_) + " blocks free after formatting");
  }
  FSIO_TRY(tx.prepare());  // every refusal before the first byte of data
  if (auto st = fill.write_data(*src_); !st)
    return st.error().code == Errc::interrupted ? interrupted_fill() : std::move(st).error();
  FSIO_TRY(tx.commit());  // the links, then the superblocks: the primary last
  done_ = fill.report();
  return fs->queue().stats();
}

std::string Mkext4Tree::summary(bool dry_run) const {
  std::string s = std::string(dry_run ? "would fill it from " : "filled from ") + source_ + " with " +
                  plural(count_.files, "file", "files") + ", " + plural(count_.dirs, "directory", "directories") +
                  ", " + plural(count_.symlinks, "symbolic link", "symbolic links");
  if (count_.specials) s += ", " + plural(count_.specials, "device, FIFO or socket", "devices, FIFOs or sockets");
  s += " (" + format_size(count_.bytes) + ", " + plural(count_.inodes, "inode", "inodes");
  if (count_.hard_links) s += ", " + plural(count_.hard_links, "hard link", "hard links");
  s += ")";
  if (chosen_mib_) s += " in the " + format_count(chosen_mib_) + " MiB chosen for it";
  if (done_)
    s += ": " + format_count(done_->data_blocks) + " data blocks in " + format_count(done_->extents) + " extents";
  return s;
}

nlohmann::json Mkext4Tree::json(bool written) const {
  nlohmann::json out = {{"source", source_},           {"files", count_.files},
                        {"directories", count_.dirs},  {"symlinks", count_.symlinks},
                        {"specials", count_.specials}, {"hard_links", count_.hard_links},
                        {"bytes", count_.bytes},       {"data_bytes", count_.data_bytes},
                        {"inodes", count_.inodes},     {"min_blocks", count_.min_blocks}};
  out["size_auto"] = chosen_mib_ != 0;
  if (chosen_mib_) out["size_bytes"] = chosen_mib_ << 20;
  if (written && done_) {
    out["data_blocks"] = done_->data_blocks;
    out["extent_tree_blocks"] = done_->tree_blocks;
    out["xattr_blocks"] = done_->xattr_blocks;
    out["extents"] = done_->extents;
    out["data_bytes_written"] = done_->bytes_written;
  }
  return out;
}

}  // namespace fsio::cli
