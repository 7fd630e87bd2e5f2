// TreeFill's first step (see tree_fill.hpp): the tree checked and counted,
// then every node made in the cache in the tree's order. The data step is
// in tree_data.cpp.
#include "ext/tree_fill.hpp"

#include <algorithm>
#include <sys/sysmacros.h>

#include <cstring>

#include "ext/dir_write.hpp"
#include "ext/extent_build.hpp"
#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;
using fsio::NodeKind;

constexpr std::uint32_t kLinkMax = 65000;    // EXT4_LINK_MAX
constexpr std::size_t kFastSymlinkMax = 59;  // targets that fit i_block (60 bytes) with room for the NUL
constexpr std::uint16_t S_IFCHR_ = 0x2000;   // i_mode types besides inode.hpp's three
constexpr std::uint16_t S_IFBLK_ = 0x6000;
constexpr std::uint16_t S_IFIFO_ = 0x1000;
constexpr std::uint16_t S_IFSOCK_ = 0xC000;

std::uint16_t type_bits(NodeKind k) {
  switch (k) {
    case NodeKind::directory: return S_IFDIR_;
    case NodeKind::file: return S_IFREG_;
    case NodeKind::symlink: return S_IFLNK_;
    case NodeKind::char_device: return S_IFCHR_;
    case NodeKind::block_device: return S_IFBLK_;
    case NodeKind::fifo: return S_IFIFO_;
    case NodeKind::socket: return S_IFSOCK_;
  }
  return 0;
}

std::uint64_t blocks_for(std::uint64_t bytes, std::uint32_t bs) { return (bytes + bs - 1) / bs; }

}  // namespace

std::vector<BlockSpan> data_blocks(const fsio::Content& c, std::uint32_t bs) {
  std::vector<BlockSpan> out;
  if (!c.sparse) {
    if (c.size > 0) out.push_back({0, blocks_for(c.size, bs)});
    return out;
  }
  for (const fsio::DataRange& r : c.data) {
    if (r.length == 0) continue;
    const std::uint64_t first = r.offset / bs, end = (r.offset + r.length - 1) / bs + 1;
    if (!out.empty() && first <= out.back().first + out.back().count)
      out.back().count = std::max(out.back().count, end - out.back().first);
    else out.push_back({first, end - first});
  }
  return out;
}

namespace {

// Nodes per content: a file's link count.
std::vector<std::uint32_t> links_per_content(const fsio::Tree& tree) {
  std::vector<std::uint32_t> links(tree.contents.size(), 0);
  for (const fsio::TreeNode& n : tree.nodes)
    if (n.kind == NodeKind::file && n.content != fsio::kNoContent) ++links[n.content];
  return links;
}

// A device number as the kernel's ext4 stores it in i_block: the old
// 16-bit form (major << 8 | minor) in i_block[0] when both fit a byte,
// else the new form in i_block[1]:
//   bits 31..20 minor >> 8 | bits 19..8 major | bits 7..0 minor & 0xFF
void put_rdev(Inode& inode, std::uint64_t rdev) {
  const std::uint32_t major = ::gnu_dev_major(rdev), minor = ::gnu_dev_minor(rdev);
  auto f = inode.fields();
  if (major < 256 && minor < 256) f.i_block[0] = major << 8 | minor;
  else f.i_block[1] = (minor & 0xFF) | (major & 0xFFF) << 8 | (minor & ~0xFFu) << 12;
  inode.set_fields(f);
}

// For each node, the index just past its subtree (the tree is in pre-order:
// a directory's subtree follows it at once).
std::vector<std::uint32_t> subtree_ends(const fsio::Tree& tree) {
  const auto count = std::uint32_t(tree.nodes.size());
  std::vector<std::uint32_t> end(count, count);
  std::vector<std::uint32_t> open;
  for (std::uint32_t j = 0; j < count; ++j) {
    while (!open.empty() && open.back() != tree.nodes[j].parent) end[open.back()] = j, open.pop_back();
    open.push_back(j);
  }
  return end;
}

}  // namespace

TreeCount count_tree(const fsio::Tree& tree, std::uint32_t block_size) {
  TreeCount c;
  std::vector<bool> seen(tree.contents.size(), false);
  for (std::size_t i = 1; i < tree.nodes.size(); ++i) {
    const fsio::TreeNode& n = tree.nodes[i];
    switch (n.kind) {
      case NodeKind::directory: ++c.dirs, ++c.inodes, ++c.min_blocks; break;
      case NodeKind::symlink:
        ++c.symlinks, ++c.inodes;
        if (n.link_target.size() > kFastSymlinkMax) ++c.min_blocks;
        break;
      case NodeKind::file:
        ++c.files;
        if (n.content != fsio::kNoContent && seen[n.content]) {
          ++c.hard_links;
          break;
        }
        if (n.content != fsio::kNoContent) seen[n.content] = true;
        ++c.inodes;
        c.bytes += n.size;
        if (n.content == fsio::kNoContent) {
          c.data_bytes += n.size;
          c.min_blocks += blocks_for(n.size, block_size);
          break;
        }
        for (const BlockSpan& b : data_blocks(tree.contents[n.content], block_size)) c.min_blocks += b.count;
        c.data_bytes += data_bytes(tree.contents[n.content]);
        break;
      default: ++c.specials, ++c.inodes; break;
    }
  }
  return c;
}

fsio::Result<Owner> owner_in_image(const fsio::Tree& tree, std::uint32_t node, const TreeFillOptions& o) {
  const fsio::TreeNode& n = tree.nodes[node];
  const std::uint16_t mode = std::uint16_t(n.mode & 07777);
  if (o.owner) return Owner{mode, o.owner->uid, o.owner->gid};
  auto mapped = [&](const std::optional<IdMap>& m, std::uint32_t id, const char* what) -> fsio::Result<std::uint32_t> {
    if (!m) return id;
    if (auto to = m->map(id)) return *to;
    return make_error(Errc::invalid_argument, tree.where(node) + ": " + what + " " + std::to_string(id) +
                                                  " is in no range of --" + what + "-map (add one for it)");
  };
  const std::uint32_t uid = FSIO_TRY(mapped(o.uid_map, n.uid, "uid"));
  const std::uint32_t gid = FSIO_TRY(mapped(o.gid_map, n.gid, "gid"));
  return Owner{mode, uid, gid};
}

fsio::Status check_tree(const Layout& l, const fsio::Tree& tree, const TreeFillOptions& o, bool root_owner) {
  auto check_at = [&](std::uint32_t i, const fsio::TimeSpec& t, const char* what) -> fsio::Status {
    const std::int64_t sec = o.clamp ? std::min(t.sec, *o.clamp) : t.sec;
    if (check_time(l, sec, {})) return {};  // the message (a path) is built only for a refusal
    return check_time(l, sec, tree.where(i) + ": " + what + " " + std::to_string(sec));
  };
  const std::vector<std::uint32_t> links = links_per_content(tree);
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    const fsio::TreeNode& n = tree.nodes[i];
    if (i > 0) FSIO_TRY_CTX(check_name(n.name), tree.where(i));
    if (i > 0 || root_owner) FSIO_TRY(owner_in_image(tree, i, o));
    FSIO_TRY(check_xattrs(l, tree, i, o));
    if (!o.mtime) FSIO_TRY(check_at(i, n.mtime, "modification time"));
    FSIO_TRY(check_at(i, n.atime, "access time"));
    FSIO_TRY(check_at(i, n.ctime, "change time"));
    if (n.btime) FSIO_TRY(check_at(i, *n.btime, "creation time"));
    if (n.kind == NodeKind::symlink && (n.link_target.empty() || n.link_target.size() >= l.block_size))
      return make_error(Errc::unsupported, tree.where(i) + ": a symlink target of " +
                                               std::to_string(n.link_target.size()) + " bytes (ext4 holds 1 to " +
                                               std::to_string(l.block_size - 1) + ")");
    if (n.kind == NodeKind::file && blocks_for(n.size, l.block_size) >= (std::uint64_t(1) << 32))
      return make_error(Errc::unsupported, tree.where(i) + ": " + std::to_string(n.size) +
                                               " bytes, more than an ext4 file holds in " +
                                               std::to_string(l.block_size) + "-byte blocks");
    if (n.kind == NodeKind::file && n.content != fsio::kNoContent && links[n.content] > kLinkMax)
      return make_error(Errc::unsupported, tree.where(i) + ": " + std::to_string(links[n.content]) +
                                               " hard links; an ext4 inode holds at most 65000");
  }
  return {};
}

TreeFill::TreeFill(Transaction& tx, const fsio::Tree& tree, const TreeFillOptions& o)
    : tx_(tx),
      tree_(tree),
      o_(o),
      ino_of_content_(tree.contents.size(), 0),
      places_(tree.contents.size()),
      links_(links_per_content(tree)),
      end_(subtree_ends(tree)) {}

// check_tree refused every owner no map covers.
Owner TreeFill::owner_of(std::uint32_t node) const { return owner_in_image(tree_, node, o_).value(); }

// Sets every time the inode has room for: atime, mtime, ctime and crtime
// with their _extra words (nanoseconds and epoch bits).
void TreeFill::stamp(Inode& inode, const fsio::TreeNode& n) const {
  auto clamped = [&](const fsio::TimeSpec& t) {
    return o_.clamp && t.sec > *o_.clamp ? Timestamp{*o_.clamp, 0} : Timestamp{t.sec, t.nsec};
  };
  const Timestamp a = clamped(n.atime), c = clamped(n.ctime);
  const Timestamp m = o_.mtime ? *o_.mtime : clamped(n.mtime);
  const Timestamp cr = n.btime ? clamped(*n.btime) : o_.now;
  auto f = inode.fields();
  const bool extra = inode.raw.size() > kGoodOldInodeSize;
  auto has = [&](std::size_t end) { return extra && kGoodOldInodeSize + inode.extra_isize() >= end; };
  f.i_atime = std::uint32_t(a.sec);
  f.i_ctime = std::uint32_t(c.sec);
  f.i_mtime = std::uint32_t(m.sec);
  if (has(offsetof(Ext4Inode, i_ctime_extra) + 4)) f.i_ctime_extra = encode_time_extra(c.sec, c.nsec);
  if (has(offsetof(Ext4Inode, i_mtime_extra) + 4)) f.i_mtime_extra = encode_time_extra(m.sec, m.nsec);
  if (has(offsetof(Ext4Inode, i_atime_extra) + 4)) f.i_atime_extra = encode_time_extra(a.sec, a.nsec);
  if (has(offsetof(Ext4Inode, i_crtime) + 4)) f.i_crtime = std::uint32_t(cr.sec);
  if (has(offsetof(Ext4Inode, i_crtime_extra) + 4)) f.i_crtime_extra = encode_time_extra(cr.sec, cr.nsec);
  inode.set_fields(f);
}

fsio::Status TreeFill::plan(Inode& top, bool top_from_tree) {
  tx_.alloc().use_reserved = o_.use_reserved;
  rep_.count = count_tree(tree_, tx_.fs().layout().block_size);
  FSIO_TRY(make_children(0, top));
  if (top_from_tree) stamp(top, tree_.nodes.front());
  else set_inode_times(top, o_.now);
  FSIO_TRY(attach_attrs(top, 0));
  write_xattr_blocks();
  return tx_.fs().write_inode(top, MetaKind::directory);
}

// The children of tree node `node`, made in `dir` in the tree's order (a
// subdirectory's whole subtree before its next sibling).
fsio::Status TreeFill::make_children(std::uint32_t node, Inode& dir) {
  Filesystem& fs = tx_.fs();
  const Layout& l = fs.layout();
  for (std::uint32_t i = node + 1; i < end_[node]; i = end_[i]) {
    const fsio::TreeNode& n = tree_.nodes[i];
    if (o_.interrupted && o_.interrupted())
      return make_error(Errc::interrupted, "interrupted before the commit; the filesystem is unchanged");
    FSIO_TRY(tx_.spill_if_over(o_.cache_bytes));  // between nodes: no cached block is held here
    if (n.kind == NodeKind::directory) {
      const std::uint32_t ino = FSIO_TRY_CTX(create_dir(tx_, dir, n.name, owner_of(i)), tree_.where(i));
      Inode child = FSIO_TRY(fs.read_inode(ino));
      FSIO_TRY(make_children(i, child));
      stamp(child, n);
      FSIO_TRY(attach_attrs(child, i));
      FSIO_TRY(fs.write_inode(child));
      continue;
    }
    const bool link = n.kind == NodeKind::file && n.content != fsio::kNoContent && ino_of_content_[n.content] != 0;
    const std::uint32_t ino = link ? ino_of_content_[n.content] : FSIO_TRY_CTX(make_node(i, dir), tree_.where(i));
    FSIO_TRY_CTX(add_entry(fs, tx_.alloc(), dir, n.name, ino, file_type_for(type_bits(n.kind), l)), tree_.where(i));
  }
  return {};
}

fsio::Result<std::uint32_t> TreeFill::make_node(std::uint32_t node, const Inode& dir) {
  switch (tree_.nodes[node].kind) {
    case NodeKind::file: return make_file(node, dir);
    case NodeKind::symlink: return make_symlink(node, dir);
    default: return make_special(node, dir);
  }
}

// Blocks for inode `ino` at the logical spans `spans`, in runs near its
// group (after the previous file's, while in the same group), as extents.
fsio::Result<std::vector<Extent>> TreeFill::allocate(std::uint32_t ino, const std::vector<BlockSpan>& spans) {
  const Layout& l = tx_.fs().layout();
  const std::uint32_t g = l.group_of_inode(ino);
  if (g != goal_group_) goal_group_ = g, goal_ = l.group_first_block(g);
  std::vector<Extent> out;
  for (const BlockSpan& span : spans) {
    for (std::uint64_t logical = span.first, end = span.first + span.count; logical < end;) {
      const BlockRun run =
          FSIO_TRY(tx_.alloc().alloc_blocks(goal_, std::uint32_t(std::min<std::uint64_t>(end - logical, 1u << 30))));
      out.push_back(Extent{std::uint32_t(logical), run.len, run.start, false});
      goal_ = run.start + run.len;
      logical += run.len;
    }
  }
  return normalize_extents(out);
}

fsio::Result<std::uint32_t> TreeFill::make_file(std::uint32_t node, const Inode& dir) {
  Filesystem& fs = tx_.fs();
  const Layout& l = fs.layout();
  const fsio::TreeNode& n = tree_.nodes[node];
  const std::uint32_t ino = FSIO_TRY(tx_.alloc().alloc_inode(l.group_of_inode(dir.ino), false));
  Inode inode = new_inode(l, ino, std::uint16_t(S_IFREG_ | (n.mode & 07777)), owner_of(node));
  const fsio::Content dense{n.size, node};
  const fsio::Content& content = n.content != fsio::kNoContent ? tree_.contents[n.content] : dense;
  const std::vector<BlockSpan> spans = data_blocks(content, l.block_size);
  std::uint64_t blocks = 0;
  for (const BlockSpan& b : spans) blocks += b.count;
  std::vector<Extent> extents = FSIO_TRY(allocate(ino, spans));
  const std::uint64_t goal = extents.empty() ? goal_ : extents.back().physical + extents.back().len;
  const auto tree_blocks = FSIO_TRY(build_extent_tree(fs, tx_.alloc(), inode, extents, goal));
  FSIO_TRY(set_inode_blocks(inode, blocks + tree_blocks.size(), l));
  set_size(inode, n.size);
  const std::uint32_t links = n.content != fsio::kNoContent ? links_[n.content] : 1;
  set_links(inode, std::uint16_t(std::max<std::uint32_t>(links, 1)));
  stamp(inode, n);
  FSIO_TRY(attach_attrs(inode, node));
  if (n.size >= (std::uint64_t(1) << 31) && !l.has_ro_compat(EXT2_FEATURE_RO_COMPAT_LARGE_FILE))
    fs.super_mut().s_feature_ro_compat = fs.super().s_feature_ro_compat | EXT2_FEATURE_RO_COMPAT_LARGE_FILE;
  FSIO_TRY(fs.write_inode(inode));
  rep_.data_blocks += blocks;
  rep_.tree_blocks += tree_blocks.size();
  rep_.extents += extents.size();
  if (n.content != fsio::kNoContent) {
    ino_of_content_[n.content] = ino;
    places_[n.content] = Placement{std::move(extents), n.size, content.sparse, content.data};
  }
  return ino;
}

// A symlink: the target in i_block when it fits (a "fast" symlink, no
// blocks, no extent flag, as the kernel makes it), else in one block.
fsio::Result<std::uint32_t> TreeFill::make_symlink(std::uint32_t node, const Inode& dir) {
  Filesystem& fs = tx_.fs();
  const Layout& l = fs.layout();
  const fsio::TreeNode& n = tree_.nodes[node];
  const std::uint32_t ino = FSIO_TRY(tx_.alloc().alloc_inode(l.group_of_inode(dir.ino), false));
  Inode inode = new_inode(l, ino, std::uint16_t(S_IFLNK_ | 0777), owner_of(node));
  const std::string& target = n.link_target;
  if (target.size() <= kFastSymlinkMax) {
    std::memcpy(inode.raw.data() + offsetof(Ext4Inode, i_block), target.data(), target.size());
  } else {
    std::vector<Extent> extents = FSIO_TRY(allocate(ino, {BlockSpan{0, 1}}));
    FSIO_TRY(build_extent_tree(fs, tx_.alloc(), inode, extents, goal_));
    FSIO_TRY(set_inode_blocks(inode, 1, l));
    fsio::AlignedBuffer block(l.block_size);
    std::memset(block.data(), 0, block.size());
    std::memcpy(block.data(), target.data(), target.size());
    symlink_blocks_.push_back({extents.front().physical, std::move(block)});
    ++rep_.data_blocks;
  }
  set_size(inode, target.size());
  set_links(inode, 1);
  stamp(inode, n);
  FSIO_TRY(attach_attrs(inode, node));
  FSIO_TRY(fs.write_inode(inode));
  return ino;
}

// A device, FIFO or socket: an inode without blocks; a device's number in i_block.
fsio::Result<std::uint32_t> TreeFill::make_special(std::uint32_t node, const Inode& dir) {
  Filesystem& fs = tx_.fs();
  const Layout& l = fs.layout();
  const fsio::TreeNode& n = tree_.nodes[node];
  const std::uint32_t ino = FSIO_TRY(tx_.alloc().alloc_inode(l.group_of_inode(dir.ino), false));
  Inode inode = new_inode(l, ino, std::uint16_t(type_bits(n.kind) | (n.mode & 07777)), owner_of(node));
  if (n.kind == NodeKind::char_device || n.kind == NodeKind::block_device) put_rdev(inode, n.rdev);
  set_links(inode, 1);
  stamp(inode, n);
  FSIO_TRY(attach_attrs(inode, node));
  FSIO_TRY(fs.write_inode(inode));
  return ino;
}

}  // namespace ext
