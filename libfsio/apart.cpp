// check_apart (see apart.hpp): both ends resolved down their stacks and
// compared at the bottom, as the in-use check compares a target with what
// is mounted.
#include "libfsio/apart.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

namespace fsio {
namespace {

// One thing read or written, resolved.
struct Resolved {
  std::string name;  // the user's name for it, or a file's path in a tree
  struct stat st {};
  std::vector<StorageExtent> extents;
  bool by_fd = false;  // name is "standard input", not a path
};

// nullopt: the path does not exist (yet), so it shares nothing.
Result<std::optional<struct stat>> stat_of(const StorageRef& r) {
  struct stat st {};
  if (r.known_ino) {  // a regular file the caller knows (StorageRef::known_dev/ino)
    st.st_mode = S_IFREG;
    st.st_dev = dev_t(r.known_dev);
    st.st_ino = ino_t(r.known_ino);
    return std::optional<struct stat>(st);
  }
  if ((r.fd >= 0 ? ::fstat(r.fd, &st) : ::stat(r.name.c_str(), &st)) == 0) return std::optional<struct stat>(st);
  if (r.fd < 0 && errno == ENOENT) return std::optional<struct stat>{};
  return errno_error(r.name + ": stat");
}

std::vector<StorageExtent> extents_of(const struct stat& st, const std::string& name, std::uint64_t begin,
                                      std::uint64_t end) {
  if (S_ISBLK(st.st_mode)) return resolve_block_storage(st.st_rdev, begin, end);
  if (S_ISREG(st.st_mode) && begin < end) return {{true, st.st_dev, st.st_ino, begin, end, name, {}}};
  return {};
}

Result<std::optional<Resolved>> resolve(const StorageRef& r) {
  auto st = FSIO_TRY(stat_of(r));
  if (!st) return std::optional<Resolved>{};
  // A descriptor's device is named, so that "standard input" says which.
  const std::string name =
      r.fd >= 0 && S_ISBLK(st->st_mode) ? r.name + " (" + block_device_name(st->st_rdev) + ")" : r.name;
  return std::optional<Resolved>(Resolved{name, *st, extents_of(*st, r.name, r.begin, r.end), r.fd >= 0});
}

// The same file (by inode) or the same block device, by whatever path.
bool same_object(const struct stat& a, const struct stat& b) {
  if (S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode)) return a.st_rdev == b.st_rdev;
  return S_ISREG(a.st_mode) && S_ISREG(b.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string link_words(const StackLink& l) {
  switch (l.kind) {
    case LinkKind::partition: return "a partition of";
    case LinkKind::loop: return "a loop device over";
    case LinkKind::members: return l.device_mapper ? "a dm device over" : "an md device over";
  }
  return "stacked on";
}

// "/dev/loop4 is a loop device over /dev/loop3, which is stacked on e.img":
// how `name` (whose stack `e` is) reaches its bottom, called `bottom`.
std::string stacked(const std::string& name, const StorageExtent& e, const std::string& bottom) {
  const bool deep = e.links.size() > 1;
  std::string text =
      name + " is " + link_words(e.links.front()) + " " + (deep ? block_device_name(e.links[1].dev) : bottom);
  if (deep) text += ", which is stacked on " + bottom;
  return text;
}

// The bottom by the user's name for it; a file given as a descriptor by
// the path the stack above it names ("/var/tmp/e.img, which is standard
// input").
std::string bottom_name(const Resolved& bottom, const StorageExtent& above) {
  return bottom.by_fd && S_ISREG(bottom.st.st_mode) ? above.name + ", which is " + bottom.name : bottom.name;
}

std::string explain(const Resolved& t, const StorageExtent& te, const Resolved& r, const StorageExtent& re) {
  if (same_object(t.st, r.st)) return S_ISBLK(t.st.st_mode) ? "the same device" : "the same file";
  if (re.links.empty() && !te.links.empty()) return stacked(t.name, te, bottom_name(r, te));
  if (te.links.empty() && !re.links.empty()) return stacked(r.name, re, bottom_name(t, re));
  return "both use " + te.name;
}

// The first pair of extents that share bytes, explained; nullopt if none.
std::optional<std::string> sharing(const Resolved& t, const Resolved& r) {
  for (const StorageExtent& te : t.extents)
    for (const StorageExtent& re : r.extents)
      if (shares_storage(te, re)) return explain(t, te, r, re);
  return std::nullopt;
}

Error refusal(const StorageRef& target, const std::string& what, const std::string& why) {
  return make_error(Errc::busy,
                    target.name + ": shares storage with " + what + " (" + why + "); refusing to write to it");
}

// A tree: only regular files are read, and only a file can share storage
// with a target whose bottom is a file; a target on a disk needs no walk.
Status check_tree(const StorageRef& target, const Resolved& t, const StorageRef& tree) {
  std::set<std::pair<dev_t, ino_t>> files;
  for (const StorageExtent& e : t.extents)
    if (e.is_file) files.insert({e.dev, e.ino});
  if (files.empty()) return {};
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tree.name, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    struct stat st {};
    const std::string path = it->path().string();
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !files.count({st.st_dev, st.st_ino})) continue;
    const Resolved r{path, st, extents_of(st, path, 0, kToEnd)};
    if (auto why = sharing(t, r)) return refusal(target, path + ", a file of " + tree.role + " " + tree.name, *why);
  }
  return {};
}

}  // namespace

Status check_apart(const StorageRef& target, const std::vector<StorageRef>& reads) {
  const auto t = FSIO_TRY(resolve(target));
  if (!t || t->extents.empty()) return {};
  for (const StorageRef& read : reads) {
    if (read.tree) {
      FSIO_TRY(check_tree(target, *t, read));
      continue;
    }
    const auto r = FSIO_TRY(resolve(read));
    if (!r || (read.same_is_fine && same_object(t->st, r->st))) continue;
    if (auto why = sharing(*t, *r)) return refusal(target, read.role + " " + read.name, *why);
  }
  return {};
}

}  // namespace fsio
