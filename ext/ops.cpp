// put, mkdir, rm.
#include "ext/ops.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>

#include "ext/dir_write.hpp"
#include "ext/extent_build.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint16_t kLinkMax = 65000;  // EXT4_LINK_MAX

std::pair<std::string, std::string> split_parent(const std::string& path) {
  const auto parts = split_path(path);
  std::string parent;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) parent += "/" + std::string(parts[i]);
  return {parent.empty() ? "/" : parent, parts.empty() ? std::string() : std::string(parts.back())};
}

// A fresh inode in memory: zeroed slot, ext4 fields sized by i_extra_isize.
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
  if (l.inode_size > kGoodOldInodeSize) f.i_extra_isize = std::uint16_t(std::min<std::uint32_t>(32, l.inode_size - 128));
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

fsio::Result<Inode> read_dir(Filesystem& fs, std::uint32_t ino, const std::string& path) {
  Inode d = FSIO_TRY(fs.read_inode(ino));
  if (!d.is_dir()) return make_error(Errc::invalid_argument, "ext: " + path + " is not a directory");
  return d;
}

// Makes directory `name` in `parent` (both inodes updated in memory and written).
fsio::Result<std::uint32_t> create_dir(Transaction& tx, Inode& parent, const std::string& name, const Owner& owner) {
  Filesystem& fs = tx.fs();
  const Layout& l = fs.layout();
  FSIO_TRY(check_name(name));
  if (parent.fields().i_links_count >= kLinkMax - 1 && !l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_DIR_NLINK))
    return fsio::errno_error(EMLINK, "ext: directory inode " + std::to_string(parent.ino) + " has too many subdirectories");
  const std::uint32_t ino = FSIO_TRY(tx.alloc().alloc_inode(l.group_of_inode(parent.ino), true));
  Inode dir = new_inode(l, ino, std::uint16_t(S_IFDIR_ | (owner.mode & 07777)), owner);
  const BlockRun run = FSIO_TRY(tx.alloc().alloc_blocks(l.group_first_block(l.group_of_inode(ino)), 1));
  init_dir_block(fs.meta_new(run.start, MetaKind::fresh), dir, parent.ino, l);
  FSIO_TRY(build_extent_tree(fs, tx.alloc(), dir, {Extent{0, 1, run.start, false}}, run.start));
  FSIO_TRY(set_inode_blocks(dir, 1, l));
  set_size(dir, l.block_size);
  set_links(dir, 2);
  set_inode_times(dir, tx.now(), nullptr, true);
  FSIO_TRY(fs.write_inode(dir));
  FSIO_TRY(add_entry(fs, tx.alloc(), parent, name, ino, file_type_for(S_IFDIR_, l)));
  const std::uint16_t links = parent.fields().i_links_count;
  // dir_nlink: past EXT4_LINK_MAX a directory's count stays at 1 ("many").
  set_links(parent, links >= kLinkMax - 1 || links == 1 ? 1 : std::uint16_t(links + 1));
  set_inode_times(parent, tx.now());
  FSIO_TRY(fs.write_inode(parent, MetaKind::directory));
  return ino;
}

// The parent directory of `path` and the last name, creating missing
// directories when `parents` (their paths appended to `created`).
fsio::Result<std::pair<Inode, std::string>> resolve_parent(Transaction& tx, Filesystem& fs, const std::string& path,
                                                           bool parents, const Owner& dir_owner,
                                                           std::vector<std::string>& created) {
  const auto parts = split_path(path);
  if (parts.empty()) return make_error(Errc::invalid_argument, "ext: '" + path + "' names no file");
  Inode dir = FSIO_TRY(read_dir(fs, EXT2_ROOT_INO, "/"));
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    walked += "/" + name;
    const std::uint32_t next = FSIO_TRY(fs.find_entry(dir, name));
    if (next != 0) {
      dir = FSIO_TRY(read_dir(fs, next, walked));
      continue;
    }
    if (!parents) return make_error(Errc::not_found, "ext: " + walked + ": no such directory (-p creates it)");
    created.push_back(walked);
    const std::uint32_t ino = FSIO_TRY(create_dir(tx, dir, name, dir_owner));
    dir = FSIO_TRY(fs.read_inode(ino));
  }
  return std::pair<Inode, std::string>(std::move(dir), std::string(parts.back()));
}

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

// Drops one link of `inode`; at zero, its blocks and the inode itself are freed (deferred).
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

// The times an operation stores, against what the inodes can hold (the
// caller names their sources; this is the library's own guard).
fsio::Status check_op_times(const Layout& l, const Timestamp& now, const std::optional<Timestamp>& mtime) {
  FSIO_TRY(check_time(l, now.sec, "the time " + std::to_string(now.sec)));
  if (mtime) FSIO_TRY(check_time(l, mtime->sec, "the modification time " + std::to_string(mtime->sec)));
  return {};
}
fsio::Status check_op_times(const Layout& l, const PutOptions& o) { return check_op_times(l, o.now, o.mtime); }

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
      return make_error(Errc::unsupported, "ext: '" + name + "' has an extended attribute block; replacing it is not supported");
  } else if (parent.flags() & (EXT4_ENCRYPT_FL | EXT4_CASEFOLD_FL | EXT4_INLINE_DATA_FL)) {
    return make_error(Errc::unsupported, "ext: the directory holding '" + name +
                                             "' is encrypted, casefolded or inline; adding names to it is not supported");
  }
  return {};
}

}  // namespace

FdSource::FdSource(int fd, std::string name) : fd_(fd), kind_(fsio::fd_kind(fd)), name_(std::move(name)) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size_ = std::uint64_t(st.st_size);
  fsio::widen_pipe(fd);
}

fsio::Result<std::size_t> FdSource::read(std::span<std::byte> buf) {
  if (cancelled_) return std::size_t(0);
  auto n = fsio::read_some(fd_, kind_, buf, name_, offset_, [this] { return cancelled_.load(); });
  if (!n && cancelled_) return std::size_t(0);  // the writer gave up first; its error is the one said
  if (n) offset_ += *n;
  return n;
}

namespace {

// A regular file or symlink written and its inode stored (not yet linked).
struct NewFile {
  std::uint32_t ino = 0;
  std::uint64_t size = 0, data_blocks = 0, tree_blocks = 0;
  std::size_t extents = 0;
  WritebackStats writeback;
};

// The data of `src` written back, then its inode (mode is the whole i_mode).
// `ino`: the inode, already allocated (0: allocate one near `parent`).
fsio::Result<NewFile> create_file(Transaction& tx, const Inode& parent, std::uint16_t mode, Source& src,
                                  const Owner& owner, const Timestamp* mtime, const PutOptions& o,
                                  std::uint32_t ino = 0) {
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
  const std::uint64_t goal = extents.empty() ? l.group_first_block(l.group_of_inode(nf.ino))
                                             : extents.back().physical + extents.back().len;
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

// A symlink: the target in i_block when under 60 bytes (a "fast" symlink,
// no blocks), else in a data block.
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

// A dry run's stand-in for create_file: the blocks of `size` bytes for
// inode `ino` allocated in memory only, so the bitmaps they come from are
// checked and a lack of space is found.
fsio::Status rehearse_file(Transaction& tx, std::uint32_t ino, std::uint64_t size) {
  const Layout& l = tx.fs().layout();
  std::uint64_t goal = l.group_first_block(l.group_of_inode(ino));
  for (std::uint64_t left = (size + l.block_size - 1) / l.block_size; left > 0;) {
    const BlockRun run = FSIO_TRY(tx.alloc().alloc_blocks(goal, std::uint32_t(std::min<std::uint64_t>(left, 1u << 30))));
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

fsio::Result<MkdirReport> make_dirs(Filesystem& fs, const std::string& path, bool parents, const Owner& owner,
                                    const Timestamp& now, bool dry_run) {
  MkdirReport rep;
  FSIO_TRY(check_op_times(fs.layout(), now, std::nullopt));
  if (dry_run) FSIO_TRY(fs.write_gate());
  Transaction tx(fs, now);
  // A dry run makes the directories in the cache only (the device is open
  // read-only), so it meets the refusals of the allocation and the commit.
  auto finish = [&]() -> fsio::Status { return dry_run ? tx.prepare() : tx.commit(); };
  auto [parent, name] = FSIO_TRY(resolve_parent(tx, fs, path, parents, owner, rep.created));
  const std::uint32_t existing = FSIO_TRY(fs.find_entry(parent, name));
  if (existing != 0) {
    const Inode e = FSIO_TRY(fs.read_inode(existing));
    if (parents && e.is_dir()) {
      if (!rep.created.empty()) FSIO_TRY(finish());
      return rep;
    }
    return make_error(Errc::busy, "ext: " + path + " exists");
  }
  FSIO_TRY(check_name(name));
  rep.created.push_back(split_parent(path).first == "/" ? "/" + name : split_parent(path).first + "/" + name);
  FSIO_TRY(create_dir(tx, parent, name, owner));
  FSIO_TRY(finish());
  return rep;
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
    return make_error(Errc::unsupported, "ext: " + path + " has an extended attribute block; removing it is not supported");
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
