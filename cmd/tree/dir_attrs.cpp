// Xattrs and inode flags of a host file (see dir_attrs.hpp). Through an
// open descriptor where there is one: the directory source opens each
// file and directory once for both, rather than resolve its path three
// times (llistxattr, open, ioctl), which doubled the time of a tree of
// small files.
#include "cmd/tree/dir_attrs.hpp"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <functional>

namespace fsio::tree {

namespace {

using Lister = std::function<ssize_t(char*, std::size_t)>;
using Getter = std::function<ssize_t(const char*, char*, std::size_t)>;

// A list or a value whose size the kernel says first; the buffer is
// sized by that answer and asked again while it grows (a race with
// setfattr: ERANGE).
Result<std::string> sized(const std::function<ssize_t(char*, std::size_t)>& call, const std::string& what) {
  for (;;) {
    const ssize_t want = call(nullptr, 0);
    if (want < 0) return errno_error(what);
    std::string out(std::size_t(want), '\0');
    const ssize_t got = want == 0 ? 0 : call(out.data(), out.size());
    if (got < 0 && errno == ERANGE) continue;
    if (got < 0) return errno_error(what);
    out.resize(std::size_t(got));
    return out;
  }
}

// Every xattr, sorted by name; one that went away between the list and
// the read (ENODATA) is left out, a filesystem without xattrs has none.
Result<std::vector<Xattr>> read_xattrs(const Lister& list, const Getter& get, const std::string& path) {
  auto names = sized(list, "list xattrs of " + path);
  if (!names && (names.error().sys_errno == ENOTSUP || names.error().sys_errno == ENOSYS)) return std::vector<Xattr>{};
  if (!names) return std::move(names).error();
  std::vector<Xattr> out;
  for (std::size_t at = 0; at < names->size();) {
    const std::size_t end = std::min(names->find('\0', at), names->size());
    std::string name = names->substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    auto value = sized([&](char* buf, std::size_t n) { return get(name.c_str(), buf, n); },
                       "read xattr " + name + " of " + path);
    if (!value && value.error().sys_errno == ENODATA) continue;
    if (!value) return std::move(value).error();
    out.push_back({std::move(name), std::move(*value)});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Status attrs_of_fd(int fd, const std::string& path, TreeNode& node) {
  node.xattrs =
      FSIO_TRY(read_xattrs([fd](char* b, std::size_t n) { return ::flistxattr(fd, b, n); },
                           [fd](const char* x, char* b, std::size_t n) { return ::fgetxattr(fd, x, b, n); }, path));
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
    node.flags = std::uint32_t(flags);
    return {};
  }
  if (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL) return {};  // no flags here
  return errno_error("read the inode flags of " + path);
}

Status attrs_of_path(const std::string& path, bool follow, TreeNode& node) {
  const char* p = path.c_str();
  if (follow)
    node.xattrs =
        FSIO_TRY(read_xattrs([p](char* b, std::size_t n) { return ::listxattr(p, b, n); },
                             [p](const char* x, char* b, std::size_t n) { return ::getxattr(p, x, b, n); }, path));
  else
    node.xattrs =
        FSIO_TRY(read_xattrs([p](char* b, std::size_t n) { return ::llistxattr(p, b, n); },
                             [p](const char* x, char* b, std::size_t n) { return ::lgetxattr(p, x, b, n); }, path));
  return {};
}

}  // namespace fsio::tree
