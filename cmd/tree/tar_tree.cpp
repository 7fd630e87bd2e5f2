// TarTreeBuilder (see tar_tree.hpp).
#include "cmd/tree/tar_tree.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>

namespace fsio::tree {

namespace {

constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS: a 41st link is ELOOP

NodeKind archive_kind_of(unsigned type) {
  switch (type) {
    case AE_IFDIR: return NodeKind::directory;
    case AE_IFLNK: return NodeKind::symlink;
    case AE_IFCHR: return NodeKind::char_device;
    case AE_IFBLK: return NodeKind::block_device;
    case AE_IFIFO: return NodeKind::fifo;
    case AE_IFSOCK: return NodeKind::socket;
    default: return NodeKind::file;
  }
}

// "./a//b/" -> {"a", "b"}; "" for ".", "./", "/".
Result<std::vector<std::string>> split(const std::string& path, const std::string& where) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t slash = std::min(path.find('/', pos), path.size());
    std::string part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..")
      return make_error(Errc::unsupported, where + ": '" + path + "' climbs out of the archive with '..'");
    parts.push_back(std::move(part));
  }
  return parts;
}

TimeSpec time_of(std::int64_t sec, long nsec) { return {sec, std::uint32_t(nsec)}; }

}  // namespace

std::string member_path(archive_entry* e) {
  const char* utf8 = archive_entry_pathname_utf8(e);
  const char* raw = utf8 ? utf8 : archive_entry_pathname(e);
  return raw ? raw : "";
}

// libarchive's sparse map of a member of `size` bytes, if it has one: the
// ranges in order, empty ones (the GNU map's end marker) left out,
// touching ones joined, each cut at `size`.
void sparse_map(archive_entry* e, std::uint64_t size, MemberInfo& m) {
  if (archive_entry_sparse_reset(e) <= 0) return;
  la_int64_t offset = 0, length = 0;
  while (archive_entry_sparse_next(e, &offset, &length) == ARCHIVE_OK) {
    if (offset < 0 || length <= 0 || std::uint64_t(offset) >= size) continue;
    const std::uint64_t from = std::uint64_t(offset);
    const std::uint64_t to = std::min<std::uint64_t>(size, from + std::uint64_t(length));
    if (!m.data.empty() && from < m.data.back().offset + m.data.back().length) return m.data.clear();  // unordered
    if (!m.data.empty() && from == m.data.back().offset + m.data.back().length)
      m.data.back().length = to - m.data.back().offset;
    else m.data.push_back({from, to - from});
  }
  m.sparse = true;
}

MemberInfo member_info(archive_entry* e) {
  MemberInfo m;
  m.path = member_path(e);
  TreeNode& n = m.attrs;
  n.kind = archive_kind_of(archive_entry_filetype(e));
  n.size = archive_entry_size_is_set(e) && archive_entry_size(e) > 0 ? std::uint64_t(archive_entry_size(e)) : 0;
  n.mode = archive_entry_perm(e) & 07777;
  n.uid = std::uint32_t(archive_entry_uid(e));
  n.gid = std::uint32_t(archive_entry_gid(e));
  n.mtime = time_of(archive_entry_mtime(e), archive_entry_mtime_nsec(e));
  n.atime = archive_entry_atime_is_set(e) ? time_of(archive_entry_atime(e), archive_entry_atime_nsec(e)) : n.mtime;
  n.ctime = archive_entry_ctime_is_set(e) ? time_of(archive_entry_ctime(e), archive_entry_ctime_nsec(e)) : n.mtime;
  if (archive_entry_birthtime_is_set(e)) n.btime = time_of(archive_entry_birthtime(e), archive_entry_birthtime_nsec(e));
  n.rdev = archive_entry_rdev(e);
  if (const char* h = archive_entry_hardlink_utf8(e) ? archive_entry_hardlink_utf8(e) : archive_entry_hardlink(e)) {
    m.hardlink = h;
    n.kind = NodeKind::file;
  }
  if (n.kind == NodeKind::symlink) {
    const char* s = archive_entry_symlink_utf8(e) ? archive_entry_symlink_utf8(e) : archive_entry_symlink(e);
    n.link_target = s ? s : "";
  }
  if (n.kind != NodeKind::file) n.size = 0;
  m.has_data = n.kind == NodeKind::file && n.size > 0;
  if (m.has_data && m.hardlink.empty()) sparse_map(e, n.size, m);
  return m;
}

TarTreeBuilder::TarTreeBuilder(std::string archive_name, SymlinkPolicy symlinks, bool attrs)
    : archive_(std::move(archive_name)), symlinks_(symlinks), attrs_(attrs) {
  Node root;
  root.attrs.kind = NodeKind::directory;
  root.attrs.mode = 0755;
  nodes_.push_back(std::move(root));
}

std::string TarTreeBuilder::where(std::uint32_t node) const {
  std::string path;
  for (std::uint32_t n = node; n != 0; n = nodes_[n].parent) path = nodes_[n].name + (path.empty() ? "" : "/" + path);
  return archive_ + ": " + (path.empty() ? "." : path);
}

// The directory a member goes in, made (mode 0755, time 0) where missing.
Result<std::uint32_t> TarTreeBuilder::parent_of(const std::vector<std::string>& parts, const std::string& path) {
  std::uint32_t dir = 0;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    auto it = nodes_[dir].children.find(parts[i]);
    if (it == nodes_[dir].children.end()) {
      Node n;
      n.name = parts[i];
      n.parent = dir;
      n.attrs.kind = NodeKind::directory;
      n.attrs.mode = 0755;
      const auto index = std::uint32_t(nodes_.size());
      nodes_.push_back(std::move(n));
      nodes_[dir].children.emplace(parts[i], index);
      dir = index;
    } else if (nodes_[it->second].attrs.kind != NodeKind::directory) {
      return make_error(Errc::unsupported,
                        archive_ + ": '" + path + "': '" + parts[i] + "' on its way is not a directory in the archive");
    } else {
      dir = it->second;
    }
  }
  return dir;
}

Result<std::uint32_t> TarTreeBuilder::find(const std::string& path) const {
  const auto parts = FSIO_TRY(split(path, archive_));
  std::uint32_t n = 0;
  for (const std::string& p : parts) {
    auto it = nodes_[n].children.find(p);
    if (it == nodes_[n].children.end()) return make_error(Errc::not_found, "not found");
    n = it->second;
  }
  return n;
}

Status TarTreeBuilder::add(archive_entry* e) {
  MemberInfo m = member_info(e);
  if (attrs_) FSIO_TRY(member_attrs(e, archive_ + ": " + m.path, m.attrs));
  return add(m);
}

Status TarTreeBuilder::add(const MemberInfo& m) {
  const auto index = std::int64_t(shape_.members.size());
  shape_.members.push_back({m.path, m.attrs.size, kNoContent, m.sparse, m.data});
  const std::string here = archive_ + ": " + m.path;
  const auto parts = FSIO_TRY(split(m.path, here));
  TreeNode attrs = m.attrs;
  std::int64_t data = m.has_data ? index : -1;
  if (!m.hardlink.empty()) {
    auto target = find(m.hardlink);
    if (!target || nodes_[*target].attrs.kind != NodeKind::file)
      return make_error(Errc::corrupt, here + ": a hard link to '" + m.hardlink + "', which is not a file before it");
    if (!m.has_data) {
      data = nodes_[*target].data_member;
      attrs.size = nodes_[*target].attrs.size;
    }
    // One inode: an archiver that stores a link's xattrs with its first
    // name only (GNU tar) leaves the link's header without them.
    if (attrs.xattrs.empty() && attrs.flags == 0) {
      attrs.xattrs = nodes_[*target].attrs.xattrs;
      attrs.flags = nodes_[*target].attrs.flags;
    }
  }
  if (parts.empty()) {  // the root itself ("./")
    if (attrs.kind != NodeKind::directory) return make_error(Errc::unsupported, here + ": the root is not a directory");
    nodes_[0].attrs = attrs;
    return {};
  }
  const std::uint32_t dir = FSIO_TRY(parent_of(parts, m.path));
  auto it = nodes_[dir].children.find(parts.back());
  if (it != nodes_[dir].children.end()) {
    Node& old = nodes_[it->second];
    const bool was_dir = old.attrs.kind == NodeKind::directory, is_dir = attrs.kind == NodeKind::directory;
    if (was_dir != is_dir)
      return make_error(Errc::unsupported, here + ": appears both as a directory and as a " +
                                               node_kind_name(was_dir ? attrs.kind : old.attrs.kind));
    old.attrs = attrs;  // tar -x: the later member wins
    old.data_member = data;
    return {};
  }
  Node n;
  n.name = parts.back();
  n.parent = dir;
  n.attrs = attrs;
  n.data_member = data;
  const auto node = std::uint32_t(nodes_.size());
  nodes_.push_back(std::move(n));
  nodes_[dir].children.emplace(parts.back(), node);
  return {};
}

// The node `target` names, seen from directory `dir`, following links on the way.
Result<std::uint32_t> TarTreeBuilder::walk(std::uint32_t dir, const std::string& target, int& hops,
                                           std::uint32_t link) const {
  auto dangling = [&] {
    return make_error(Errc::not_found, where(link) + ": a dangling symbolic link (to '" +
                                           nodes_[link].attrs.link_target + "'); it is copied as what it points to");
  };
  std::uint32_t cur = target.starts_with('/') ? 0 : dir;
  std::vector<std::string> parts;
  for (std::size_t pos = 0; pos <= target.size();) {
    const std::size_t slash = std::min(target.find('/', pos), target.size());
    parts.push_back(target.substr(pos, slash - pos));
    pos = slash + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty() || p == ".") continue;
    if (nodes_[cur].attrs.kind == NodeKind::symlink) cur = FSIO_TRY(resolve(cur, hops));
    if (nodes_[cur].attrs.kind != NodeKind::directory) return dangling();
    if (p == "..") {
      cur = nodes_[cur].parent;
      continue;
    }
    auto it = nodes_[cur].children.find(p);
    if (it == nodes_[cur].children.end()) return dangling();
    cur = it->second;
  }
  return cur;
}

Result<std::uint32_t> TarTreeBuilder::resolve(std::uint32_t link, int& hops) const {
  std::uint32_t cur = link;
  while (nodes_[cur].attrs.kind == NodeKind::symlink) {
    if (++hops > kMaxLinks)
      return make_error(Errc::unsupported,
                        where(link) + ": a symbolic link loop (to '" + nodes_[link].attrs.link_target + "')");
    cur = FSIO_TRY(walk(nodes_[cur].parent, nodes_[cur].attrs.link_target, hops, cur));
  }
  return cur;
}

Status TarTreeBuilder::emit(std::uint32_t dir, std::uint32_t out, std::vector<std::uint32_t>& up, Tree& tree,
                            TarTree& shape) const {
  for (const auto& [name, child] : nodes_[dir].children) {
    std::uint32_t node = child;
    if (symlinks_ == SymlinkPolicy::follow && nodes_[child].attrs.kind == NodeKind::symlink) {
      int hops = 0;
      node = FSIO_TRY(resolve(child, hops));
    }
    TreeNode n = nodes_[node].attrs;
    n.name = name;
    n.parent = out;
    const auto index = std::uint32_t(tree.nodes.size());
    if (n.kind == NodeKind::file && nodes_[node].data_member >= 0) {
      MemberShape& m = shape.members[std::size_t(nodes_[node].data_member)];
      if (m.content == kNoContent) {
        m.content = std::uint32_t(tree.contents.size());
        tree.contents.push_back({m.size, index});
        ++shape.contents;
      }
      n.content = m.content;
    }
    tree.nodes.push_back(std::move(n));
    if (tree.nodes.back().kind != NodeKind::directory) continue;
    if (std::find(up.begin(), up.end(), node) != up.end())
      return make_error(Errc::unsupported, where(child) + ": a symbolic link loop (to '" +
                                               nodes_[child].attrs.link_target + "', a directory that contains it)");
    up.push_back(node);
    FSIO_TRY(emit(node, index, up, tree, shape));
    up.pop_back();
  }
  return {};
}

Result<Tree> TarTreeBuilder::finish(TarTree& shape) {
  shape = shape_;
  Tree tree;
  TreeNode root = nodes_[0].attrs;
  root.name.clear();
  root.parent = kNoParent;
  tree.nodes.push_back(std::move(root));
  std::vector<std::uint32_t> up{0};
  FSIO_TRY(emit(0, 0, up, tree, shape));
  return tree;
}

}  // namespace fsio::tree
