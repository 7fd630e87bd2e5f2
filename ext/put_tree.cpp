// put of a directory tree: the host tree scanned for everything that would
// be refused, then copied in name order (mke2fs -d's job) in one transaction
// whose file data goes out in batches.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "ext/dir_write.hpp"
#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// The names in the host directory `src`, a put's source (list_dir in
// inspect.hpp lists an ext directory), but . and .., sorted bytewise, so
// that the same tree gives the same image whatever readdir's order.
fsio::Result<std::vector<std::string>> source_names(const std::string& src) {
  std::vector<std::string> names;
  DIR* d = ::opendir(src.c_str());
  if (!d) return fsio::errno_error("open directory " + src);
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Everything copy_tree would refuse, found before anything is written: a
// name ext4 cannot hold, a device, fifo or socket, a symlink target that
// does not fit a block, a modification time the inodes cannot store.
// `bytes` grows by each file's blocks and a block per entry (an upper bound
// on the data the copy queues).
fsio::Status scan_tree(const Layout& l, const std::string& src, const PutOptions& o, std::uint64_t& bytes) {
  const std::vector<std::string> names = FSIO_TRY(source_names(src));
  for (const std::string& name : names) {
    if (o.interrupted && o.interrupted())
      return make_error(Errc::interrupted, "ext: interrupted; nothing was written, the filesystem is unchanged");
    const std::string path = src + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return fsio::errno_error("stat " + path);
    FSIO_TRY_CTX(check_name(name), path);
    const std::uint64_t data = S_ISREG(st.st_mode) ? std::uint64_t(st.st_size) : 0;
    bytes += l.block_size + (data + l.block_size - 1) / l.block_size * l.block_size;
    if (!o.mtime)
      FSIO_TRY(check_time(l, st.st_mtim.tv_sec, path + ": modification time " + std::to_string(st.st_mtim.tv_sec)));
    if (S_ISDIR(st.st_mode)) {
      FSIO_TRY(scan_tree(l, path, o, bytes));
    } else if (S_ISLNK(st.st_mode)) {
      if (st.st_size <= 0 || std::uint64_t(st.st_size) >= l.block_size)
        return make_error(Errc::unsupported, path + ": a symlink target of " + std::to_string(st.st_size) +
                                                 " bytes (ext4 holds 1 to " + std::to_string(l.block_size - 1) + ")");
    } else if (!S_ISREG(st.st_mode)) {
      return make_error(Errc::unsupported, path + ": device, fifo or socket files are not copied");
    }
  }
  return {};
}

// Copies the directory `src` (already made as `dir`) and everything below
// it, in name order so that the same tree gives the same image.
fsio::Status copy_tree(Transaction& tx, Inode& dir, const std::string& src, const PutOptions& o, PutReport& rep) {
  Filesystem& fs = tx.fs();
  const Layout& l = fs.layout();
  const std::vector<std::string> names = FSIO_TRY(source_names(src));
  for (const std::string& name : names) {
    if (o.interrupted && o.interrupted())
      return make_error(Errc::interrupted, "ext: interrupted; nothing was linked, the filesystem is unchanged");
    const std::string path = src + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return fsio::errno_error("stat " + path);
    const Owner owner{std::uint16_t(st.st_mode & 07777), o.owner.uid, o.owner.gid};
    const Timestamp m{st.st_mtim.tv_sec, std::uint32_t(st.st_mtim.tv_nsec)};
    const Timestamp* mtime = o.mtime ? &*o.mtime : &m;
    if (S_ISDIR(st.st_mode)) {
      const std::uint32_t ino = FSIO_TRY(create_dir(tx, dir, name, owner));
      Inode child = FSIO_TRY(fs.read_inode(ino));
      FSIO_TRY(copy_tree(tx, child, path, o, rep));
      ++rep.dirs;
      continue;
    }
    std::uint32_t ino = 0;
    std::uint16_t mode = 0;
    if (S_ISREG(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return fsio::errno_error("open " + path);
      FdSource in(fd, path);
      auto nf = create_file(tx, dir, std::uint16_t(S_IFREG_ | owner.mode), in, owner, mtime, o);
      ::close(fd);
      if (!nf) return std::move(nf).error();
      ino = nf->ino;
      mode = S_IFREG_;
      rep.size += nf->size;
      rep.data_blocks += nf->data_blocks;
      rep.tree_blocks += nf->tree_blocks;
      rep.extents += nf->extents;
      rep.writeback.segments += nf->writeback.segments;
      rep.writeback.blocks_committed += nf->writeback.blocks_committed;
      rep.writeback.passes += nf->writeback.passes;
      rep.writeback.runs += nf->writeback.runs;
      ++rep.files;
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(std::size_t(st.st_size) + 1, '\0');
      const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
      if (n < 0) return fsio::errno_error("readlink " + path);
      target.resize(std::size_t(n));
      ino = FSIO_TRY(create_symlink(tx, dir, target, owner, mtime, o));
      mode = S_IFLNK_;
      ++rep.symlinks;
    } else {
      return make_error(Errc::unsupported, path + ": device, fifo or socket files are not copied");
    }
    FSIO_TRY(add_entry(fs, tx.alloc(), dir, name, ino, file_type_for(mode, l)));
  }
  set_inode_times(dir, tx.now());
  return fs.write_inode(dir, MetaKind::directory);
}

}  // namespace

fsio::Result<PutReport> put_tree(Filesystem& fs, const std::string& dest, const std::string& src_dir,
                                 const PutOptions& o) {
  PutReport rep;
  rep.path = dest;
  const Owner dir_owner{0755, o.owner.uid, o.owner.gid};
  struct stat st {};
  if (::stat(src_dir.c_str(), &st) != 0) return fsio::errno_error("stat " + src_dir);
  if (o.dry_run) FSIO_TRY(fs.write_gate());
  Transaction tx(fs, o.now);
  // A dry run makes the directories in the cache only (the device is open
  // read-only) and stops before the first file's data.
  auto [parent, name] = FSIO_TRY(resolve_parent(tx, fs, dest, o.parents, dir_owner, rep.created_dirs));
  const std::uint32_t existing = FSIO_TRY(fs.find_entry(parent, name));
  if (existing != 0) return make_error(Errc::busy, "ext: " + dest + " exists; a tree is copied into a new directory");
  FSIO_TRY(check_name(name));
  FSIO_TRY(check_op_times(fs.layout(), o));
  std::uint64_t bytes = 0;
  FSIO_TRY(scan_tree(fs.layout(), src_dir, o, bytes));
  // The data goes out in batches of `chunk` bytes while files are still
  // being allocated: when there is more than one batch, every bitmap an
  // allocation could reach is checked before the first.
  if (bytes >= o.writeback.chunk) FSIO_TRY(tx.alloc().check_all_bitmaps());
  const std::uint32_t ino =
      FSIO_TRY(create_dir(tx, parent, name, Owner{std::uint16_t(st.st_mode & 07777), o.owner.uid, o.owner.gid}));
  if (o.dry_run) {
    FSIO_TRY(tx.prepare());
    return rep;
  }
  Inode top = FSIO_TRY(fs.read_inode(ino));
  DataBatch batch(fs.queue(), o.writeback.chunk);
  PutOptions batched = o;
  batched.writeback.batch = &batch;
  FSIO_TRY(tx.prepare());  // before the first file's data
  FSIO_TRY(copy_tree(tx, top, src_dir, batched, rep));
  FSIO_TRY(batch.flush());  // the data before any metadata that points at it
  ++rep.dirs;
  FSIO_TRY(tx.commit());
  rep.ino = ino;
  return rep;
}

}  // namespace ext
