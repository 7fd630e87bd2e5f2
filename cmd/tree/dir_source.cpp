// The directory source: a host directory walked with openat and statx,
// each directory's names sorted bytewise, so the Tree does not depend on
// readdir's order; its files read back in that order straight into the
// sink's buffers, with the next files' data asked for ahead.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

#include "cmd/tree/dir_attrs.hpp"
#include "cmd/tree/file_ref.hpp"
#include "cmd/tree/source.hpp"
#include "libfsio/progress.hpp"

namespace fsio::tree {

namespace {

constexpr unsigned kStatMask = STATX_BASIC_STATS | STATX_BTIME;
constexpr int kMaxDepth = 4096;  // far beyond any path a filesystem resolves (PATH_MAX)

TimeSpec from_statx(const statx_timestamp& t) { return {t.tv_sec, t.tv_nsec}; }

NodeKind kind_of(std::uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return NodeKind::directory;
    case S_IFLNK: return NodeKind::symlink;
    case S_IFCHR: return NodeKind::char_device;
    case S_IFBLK: return NodeKind::block_device;
    case S_IFIFO: return NodeKind::fifo;
    case S_IFSOCK: return NodeKind::socket;
    default: return NodeKind::file;
  }
}

TreeNode node_of(const struct statx& sx, std::string name, std::uint32_t parent) {
  TreeNode n;
  n.name = std::move(name);
  n.parent = parent;
  n.kind = kind_of(sx.stx_mode);
  n.size = n.kind == NodeKind::file ? sx.stx_size : 0;
  n.mode = sx.stx_mode & 07777;
  n.uid = sx.stx_uid;
  n.gid = sx.stx_gid;
  n.mtime = from_statx(sx.stx_mtime);
  n.atime = from_statx(sx.stx_atime);
  n.ctime = from_statx(sx.stx_ctime);
  if (sx.stx_mask & STATX_BTIME) n.btime = from_statx(sx.stx_btime);
  n.rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
  return n;
}

// The names in an open directory but . and .., sorted bytewise.
Result<std::vector<std::string>> sorted_names(int dirfd, const std::string& path) {
  const int fd = ::dup(dirfd);
  if (fd < 0) return errno_error("read directory " + path);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    const int e = errno;
    ::close(fd);
    return errno_error(e, "read directory " + path);
  }
  ::rewinddir(d);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err) return errno_error(err, "read directory " + path);
  std::sort(names.begin(), names.end());  // std::string compares bytes as unsigned char
  return names;
}

std::string link_text(int dirfd, const std::string& name) {
  char buf[4096];
  const ssize_t n = ::readlinkat(dirfd, name.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

Error changed(const FileRef& f, const std::string& how) {
  return make_error(Errc::corrupt, f.path + ": changed while it was read (" + how + ")");
}

// What one reading thread has seen of the page cache: whether it alone
// served each of the last 64 files' first read (asked with RWF_NOWAIT; bit
// 0 the latest, 1 = it did not). While at most 8 of them missed, the source
// is in memory and asking for the next files (POSIX_FADV_WILLNEED) would
// only walk their cached pages, a tenth of the reading of small files. (A
// cached page that marks where the kernel's next readahead starts is an
// EAGAIN too: about one file in a hundred of a tree read before; on a cold
// cache nearly all miss.)
struct CacheGuess {
  std::uint64_t missed = ~std::uint64_t{0};
  bool nowait = true;  // false once the source refused RWF_NOWAIT
  bool in_cache() const { return std::popcount(missed) <= 8; }
};

class DirSource final : public TreeSource {
 public:
  DirSource(std::string root, const SourceOptions& o) : root_(std::move(root)), opt_(o) {}
  Result<Tree> list() override;
  Status read_contents(ContentSink& sink) override { return read_these(sink, nullptr); }
  unsigned max_readers() const override { return 8; }
  Status read_picked(ContentSink& sink, const std::vector<bool>& picked) override { return read_these(sink, &picked); }
  std::vector<StorageRef> storage() const override;

 private:
  struct Walk {
    Tree tree;
    std::vector<std::pair<dev_t, ino_t>> up;  // the directories from the root to here
    std::map<std::pair<dev_t, ino_t>, std::uint32_t> content_of;
  };
  Status list_dir(int dirfd, std::uint32_t self, const std::string& path, Walk& w);
  Result<struct statx> stat_entry(int dirfd, const std::string& name, const std::string& path) const;
  Status add_entry(int dirfd, const std::string& name, std::uint32_t self, const std::string& path, Walk& w);
  Status add_attrs(TreeNode& node, int dirfd, const std::string& name, const std::string& path) const;
  Status find_holes(int dirfd, const std::string& name, Content& c);
  Status read_these(ContentSink& sink, const std::vector<bool>* picked) const;
  Status read_file(std::uint32_t content, int fd, ContentSink& sink, CacheGuess& cache) const;

  std::string root_;
  SourceOptions opt_;
  bool root_user_ = ::geteuid() == 0;
  std::vector<FileRef> files_;  // per content
};

// lstat, and with SymlinkPolicy::follow the link's target instead.
Result<struct statx> DirSource::stat_entry(int dirfd, const std::string& name, const std::string& path) const {
  struct statx sx {};
  if (::statx(dirfd, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, kStatMask, &sx) != 0)
    return errno_error("stat " + path);
  if (!S_ISLNK(sx.stx_mode) || opt_.symlinks == SymlinkPolicy::keep) return sx;
  if (::statx(dirfd, name.c_str(), AT_NO_AUTOMOUNT, kStatMask, &sx) == 0) return sx;
  const int e = errno;
  const std::string to = " (to '" + link_text(dirfd, name) + "')";
  if (e == ENOENT || e == ENOTDIR)
    return make_error(Errc::not_found,
                      path + ": a dangling symbolic link" + to + "; it is copied as what it points to");
  if (e == ELOOP) return make_error(Errc::unsupported, path + ": a symbolic link loop" + to);
  return errno_error(e, "stat " + path + to);
}

Status DirSource::add_entry(int dirfd, const std::string& name, std::uint32_t self, const std::string& path, Walk& w) {
  const struct statx sx = FSIO_TRY(stat_entry(dirfd, name, path));
  const auto index = std::uint32_t(w.tree.nodes.size());
  w.tree.nodes.push_back(node_of(sx, name, self));
  TreeNode& node = w.tree.nodes.back();
  const std::pair<dev_t, ino_t> id{makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino};
  if (node.kind == NodeKind::symlink) {
    node.link_target = link_text(dirfd, name);
  } else if (node.kind == NodeKind::file) {
    // EACCES here rather than mid-write (root reads anything: no call).
    if (!root_user_ && ::faccessat(dirfd, name.c_str(), R_OK, AT_EACCESS) != 0)
      return errno_error(path + ": cannot be read");
    FSIO_TRY(add_attrs(node, dirfd, name, path));
    auto [it, fresh] = w.content_of.try_emplace(id, std::uint32_t(w.tree.contents.size()));
    if (fresh) {
      w.tree.contents.push_back({node.size, index});
      files_.push_back({path, id.first, id.second, node.size});
      if (opt_.holes && sx.stx_blocks * 512 < node.size) FSIO_TRY(find_holes(dirfd, name, w.tree.contents.back()));
    }
    node.content = it->second;
  } else if (node.kind == NodeKind::directory) {
    if (std::find(w.up.begin(), w.up.end(), id) != w.up.end())
      return make_error(Errc::unsupported, path + ": a symbolic link loop (to '" + link_text(dirfd, name) +
                                               "', a directory that contains it)");
    if (w.up.size() >= kMaxDepth) return make_error(Errc::unsupported, path + ": nested too deep");
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (opt_.symlinks == SymlinkPolicy::keep ? O_NOFOLLOW : 0);
    const int fd = ::openat(dirfd, name.c_str(), flags);
    if (fd < 0) return errno_error("open directory " + path);
    w.up.push_back(id);
    auto st = opt_.attrs ? attrs_of_fd(fd, path, node) : Status{};
    if (st) st = list_dir(fd, index, path, w);  // `node` is not used after: the list grows
    w.up.pop_back();
    ::close(fd);
    return st;
  }
  if (node.kind != NodeKind::file) FSIO_TRY(add_attrs(node, dirfd, name, path));
  return {};
}

// With SourceOptions::attrs, a file's xattrs and inode flags through one
// descriptor (opened without following a link and without blocking, as
// lsattr opens), anything else's xattrs by path (a symlink's own); with
// SymlinkPolicy::follow the node is what a link points to, and so are its
// attributes. Directories: add_entry reads them through the descriptor it lists.
Status DirSource::add_attrs(TreeNode& node, int dirfd, const std::string& name, const std::string& path) const {
  if (!opt_.attrs) return {};
  const bool follow = opt_.symlinks == SymlinkPolicy::follow;
  if (node.kind != NodeKind::file) return attrs_of_path(path, follow, node);
  const int fd =
      ::openat(dirfd, name.c_str(), O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno_error("open " + path + " to read its xattrs and inode flags");
  auto st = attrs_of_fd(fd, path, node);
  ::close(fd);
  return st;
}

// A file whose blocks hold less than its size: its data ranges (SEEK_DATA)
// into `c` and its FileRef, unless its filesystem cannot say.
Status DirSource::find_holes(int dirfd, const std::string& name, Content& c) {
  FileRef& f = files_.back();
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno_error("open " + f.path);
  auto ranges = data_ranges(fd, f.size, f.path);
  ::close(fd);
  if (!ranges) return std::move(ranges).error();
  if (!*ranges) return {};
  c.sparse = f.sparse = true;
  c.data = **ranges;
  f.data = std::move(**ranges);
  return {};
}

Status DirSource::list_dir(int dirfd, std::uint32_t self, const std::string& path, Walk& w) {
  const std::vector<std::string> names = FSIO_TRY(sorted_names(dirfd, path));
  for (const std::string& name : names) {
    if (InterruptGuard::requested())
      return make_error(Errc::interrupted, "interrupted while reading " + root_ + "; nothing was written");
    FSIO_TRY(add_entry(dirfd, name, self, path + "/" + name, w));
  }
  return {};
}

Result<Tree> DirSource::list() {
  files_.clear();
  Walk w;
  w.tree.label = root_;
  w.tree.separator = "/";
  const int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error("open directory " + root_);
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, kStatMask, &sx) != 0) {
    const int e = errno;
    ::close(fd);
    return errno_error(e, "stat " + root_);
  }
  w.tree.nodes.push_back(node_of(sx, "", kNoParent));
  if (auto st = opt_.attrs ? attrs_of_fd(fd, root_, w.tree.nodes.back()) : Status{}; !st) {
    ::close(fd);
    return std::move(st).error();
  }
  w.up.push_back({makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino});
  auto st = list_dir(fd, 0, root_ == "/" ? "" : root_, w);
  ::close(fd);
  if (!st) return std::move(st).error();
  return std::move(w.tree);
}

// One read into `room`; a file's first one asked of the page cache alone
// first (see CacheGuess), then, if it had not all of it, of the file.
ssize_t read_some(int fd, std::span<std::byte> room, bool first, CacheGuess& cache) {
  if (first && cache.nowait) {
    iovec v{room.data(), room.size()};
    const ssize_t n = ::preadv2(fd, &v, 1, -1, RWF_NOWAIT);
    cache.missed = cache.missed << 1 | (n == ssize_t(room.size()) ? 0 : 1);
    if (n == ssize_t(room.size())) return n;
    if (n < 0 && errno != EAGAIN) cache.nowait = false;  // EOPNOTSUPP: not this filesystem; read says the rest
    if (n > 0) return n;
  }
  return ::read(fd, room.data(), room.size());
}

// One file, read by this thread straight into the sink's buffers.
Status DirSource::read_file(std::uint32_t content, int fd, ContentSink& sink, CacheGuess& cache) const {
  const FileRef& f = files_[content];
  if (f.sparse) return read_ranges(f, content, fd, sink);
  for (std::uint64_t off = 0; off < f.size;) {
    const std::span<std::byte> room = FSIO_TRY(sink.reserve(content, off, f.size - off));
    const std::size_t want = std::size_t(std::min<std::uint64_t>(room.size(), f.size - off));
    std::size_t got = 0;
    while (got < want) {
      const ssize_t n = read_some(fd, room.subspan(got, want - got), off + got == 0, cache);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_error("read " + f.path + " at byte " + std::to_string(off + got));
      if (n == 0)
        return make_error(Errc::corrupt,
                          f.path + ": changed while it was read (it ended at byte " + std::to_string(off + got) + ")");
      got += std::size_t(n);
    }
    FSIO_TRY(sink.commit(content, off, got));
    off += got;
  }
  return {};
}

// In tree order, a file at a time, while the next files (up to
// read_ahead_files of them and read_ahead_bytes) are open with their data
// asked for (POSIX_FADV_WILLNEED): on a cold cache the kernel reads them all
// at once while this thread copies the earlier ones, and no thread hands
// bytes to another. Only the `picked` contents, if given.
Status DirSource::read_these(ContentSink& sink, const std::vector<bool>* picked) const {
  CacheGuess cache;
  std::deque<std::pair<std::uint32_t, int>> ahead;  // content, descriptor
  std::uint64_t ahead_bytes = 0;
  std::uint32_t next = 0;
  auto close_all = [&] {
    for (auto& [c, fd] : ahead) ::close(fd);
    ahead.clear();
  };
  Status st;
  while (st && (next < files_.size() || !ahead.empty())) {
    while (next < files_.size()) {
      const std::uint32_t c = next;
      if (files_[c].size == 0 || (picked && !(*picked)[c])) {
        ++next;
        continue;
      }
      if (!ahead.empty() &&
          (ahead.size() >= opt_.read_ahead_files || ahead_bytes + files_[c].size > opt_.read_ahead_bytes))
        break;
      ++next;
      auto fd = open_listed(files_[c]);
      if (!fd) {
        st = std::move(fd).error();
        break;
      }
      if (!cache.in_cache()) ::posix_fadvise(*fd, 0, 0, POSIX_FADV_WILLNEED);
      ahead.emplace_back(c, *fd);
      ahead_bytes += files_[c].size;
    }
    if (!st || ahead.empty()) break;
    if (InterruptGuard::requested()) {
      st = make_error(Errc::interrupted, "interrupted while reading " + root_);
      break;
    }
    const auto [c, fd] = ahead.front();
    ahead.pop_front();
    ahead_bytes -= files_[c].size;
    st = read_file(c, fd, sink, cache);
    ::close(fd);
  }
  close_all();
  return st;
}

std::vector<StorageRef> DirSource::storage() const {
  std::vector<StorageRef> out;
  out.reserve(files_.size());
  for (const FileRef& f : files_) {
    StorageRef ref{"the source file", f.path};
    ref.known_dev = f.dev;
    ref.known_ino = f.ino;
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace

Result<int> open_listed(const FileRef& f) {
  const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno_error("open " + f.path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return errno_error(e, "stat " + f.path);
  }
  std::string how;
  if (!S_ISREG(st.st_mode)) how = "no longer a regular file";
  else if (st.st_dev != f.dev || st.st_ino != f.ino) how = "another file is there now";
  else if (std::uint64_t(st.st_size) != f.size)
    how = std::to_string(f.size) + " bytes when listed, " + std::to_string(st.st_size) + " now";
  if (!how.empty()) {
    ::close(fd);
    return changed(f, how);
  }
  return fd;
}

Result<std::unique_ptr<TreeSource>> open_directory(const std::string& path, const SourceOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error(path);
  if (!S_ISDIR(st.st_mode)) return make_error(Errc::invalid_argument, path + ": not a directory");
  std::string root = path;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return std::unique_ptr<TreeSource>(new DirSource(root, options));
}

}  // namespace fsio::tree
