// TreeFill's extended attributes and inode flags (see tree_fill.hpp): each
// node's xattrs split into ext4's name indexes (ACLs re-encoded), placed in
// its inode and one xattr block, identical blocks shared as the kernel
// shares them (h_refcount), and its chattr flags.
#include <algorithm>
#include <cstring>

#include "ext/acl.hpp"
#include "ext/extent_build.hpp"
#include "ext/tree_fill.hpp"
#include "ext/xattr.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;
using fsio::NodeKind;

constexpr std::uint32_t EXT4_SECRM_FL_ = 0x00000001;
constexpr std::uint32_t EXT4_UNRM_FL = 0x00000002;
constexpr std::uint32_t EXT4_SYNC_FL = 0x00000008;
constexpr std::uint32_t EXT4_NODUMP_FL = 0x00000040;
constexpr std::uint32_t EXT4_NOATIME_FL = 0x00000080;
constexpr std::uint32_t EXT4_JOURNAL_DATA_FL = 0x00004000;
constexpr std::uint32_t EXT4_NOTAIL_FL = 0x00008000;
constexpr std::uint32_t EXT4_DIRSYNC_FL = 0x00010000;
constexpr std::uint32_t EXT4_TOPDIR_FL = 0x00020000;
constexpr std::uint32_t EXT4_PROJINHERIT_FL = 0x20000000;

// What chattr sets and we copy; extents, index, inline data, encryption,
// casefold, verity, huge_file and the like describe our own layout, so the
// source's say nothing about them.
constexpr std::uint32_t kCopiedFlags = EXT4_SECRM_FL_ | EXT4_UNRM_FL | EXT4_SYNC_FL | EXT4_IMMUTABLE_FL |
                                       EXT4_APPEND_FL | EXT4_NODUMP_FL | EXT4_NOATIME_FL | EXT4_JOURNAL_DATA_FL |
                                       EXT4_NOTAIL_FL | EXT4_DIRSYNC_FL | EXT4_TOPDIR_FL | EXT4_PROJINHERIT_FL;
// The kernel's ext4_mask_flags: directory-only flags off other files, and
// of special files and symlinks only nodump and noatime.
constexpr std::uint32_t kDirOnlyFlags = EXT4_DIRSYNC_FL | EXT4_TOPDIR_FL | EXT4_PROJINHERIT_FL;
constexpr std::uint32_t kOtherFlags = EXT4_NODUMP_FL | EXT4_NOATIME_FL;

}  // namespace

std::uint32_t flags_in_image(NodeKind kind, std::uint32_t flags) {
  flags &= kCopiedFlags;
  if (kind == NodeKind::directory) return flags;
  if (kind == NodeKind::file) return flags & ~kDirOnlyFlags;
  return flags & kOtherFlags;
}

fsio::Result<std::vector<XattrEntry>> xattrs_in_image(const fsio::Tree& tree, std::uint32_t node,
                                                      const TreeFillOptions& o) {
  const fsio::TreeNode& n = tree.nodes[node];
  std::vector<XattrEntry> out;
  for (const fsio::Xattr& x : n.xattrs) {
    XattrEntry e = FSIO_TRY_CTX(split_xattr_name(x.name), tree.where(node));
    const bool acl = e.index == EXT4_XATTR_INDEX_POSIX_ACL_ACCESS || e.index == EXT4_XATTR_INDEX_POSIX_ACL_DEFAULT;
    if (e.index == EXT4_XATTR_INDEX_POSIX_ACL_DEFAULT && n.kind != NodeKind::directory)
      return make_error(Errc::unsupported, tree.where(node) + ": a default ACL on a " + node_kind_name(n.kind) +
                                               " (only a directory has one)");
    if (!acl) {
      e.value = x.value;
    } else {
      // --all-root gives every node one owner; the users and groups an ACL
      // names are other people, kept as they are. Maps map them.
      const std::optional<IdMap> none;
      auto v = acl_to_ext4(x.value, o.owner ? none : o.uid_map, o.owner ? none : o.gid_map);
      if (!v) return std::move(v).error().wrap(tree.where(node) + ": " + x.name);
      e.value = std::move(*v);
    }
    out.push_back(std::move(e));
  }
  return out;
}

fsio::Status check_xattrs(const Layout& l, const fsio::Tree& tree, std::uint32_t node, const TreeFillOptions& o) {
  if (tree.nodes[node].xattrs.empty()) return {};
  std::vector<XattrEntry> entries = FSIO_TRY(xattrs_in_image(tree, node, o));
  const std::uint32_t extra = l.inode_size > kGoodOldInodeSize ? std::min<std::uint32_t>(32, l.inode_size - 128) : 0;
  FSIO_TRY_CTX(place_xattrs(std::move(entries), ibody_xattr_room(l, extra), l.block_size), tree.where(node));
  return {};
}

// Flags and xattrs of tree node `node` into `inode` (not written yet); the
// block, when one is needed, allocated near the inode or shared with an
// identical one made before.
fsio::Status TreeFill::attach_attrs(Inode& inode, std::uint32_t node) {
  const fsio::TreeNode& n = tree_.nodes[node];
  const Layout& l = tx_.fs().layout();
  auto f = inode.fields();
  f.i_flags = f.i_flags | flags_in_image(n.kind, n.flags);
  inode.set_fields(f);
  if (n.xattrs.empty()) return {};
  std::vector<XattrEntry> entries = FSIO_TRY(xattrs_in_image(tree_, node, o_));
  const std::uint32_t extra = inode.raw.size() > kGoodOldInodeSize ? inode.extra_isize() : 0;
  XattrPlacement p =
      FSIO_TRY_CTX(place_xattrs(std::move(entries), ibody_xattr_room(l, extra), l.block_size), tree_.where(node));
  Filesystem& fs = tx_.fs();
  if (!l.has_compat(EXT2_FEATURE_COMPAT_EXT_ATTR))
    fs.super_mut().s_feature_compat = fs.super().s_feature_compat | EXT2_FEATURE_COMPAT_EXT_ATTR;
  if (!p.ibody.empty()) write_ibody_xattrs(std::span(inode.raw).subspan(kGoodOldInodeSize + extra), p.ibody);
  if (p.block.empty()) return {};
  std::vector<std::byte> bytes = encode_xattr_block(p.block, l.block_size);
  auto it = xattr_block_of_.find(bytes);
  if (it == xattr_block_of_.end() || xattr_blocks_[it->second].refcount >= EXT4_XATTR_REFCOUNT_MAX) {
    const std::uint32_t g = l.group_of_inode(inode.ino);
    if (g != goal_group_) goal_group_ = g, goal_ = l.group_first_block(g);
    const BlockRun run = FSIO_TRY(tx_.alloc().alloc_blocks(goal_, 1));
    goal_ = run.start + 1;
    it = xattr_block_of_.insert_or_assign(std::move(bytes), xattr_blocks_.size()).first;
    xattr_blocks_.push_back({run.start, &it->first, 0});
  }
  XattrBlock& b = xattr_blocks_[it->second];
  ++b.refcount;
  f = inode.fields();
  f.i_file_acl_lo = std::uint32_t(b.block);
  if (l.is_64bit()) f.l_i_file_acl_high = std::uint16_t(b.block >> 32);
  inode.set_fields(f);
  return set_inode_blocks(inode, inode.blocks_512(l) / (l.block_size / 512) + 1, l);
}

// Every xattr block into the cache with its final refcount and checksum.
void TreeFill::write_xattr_blocks() {
  Filesystem& fs = tx_.fs();
  const Layout& l = fs.layout();
  for (const XattrBlock& b : xattr_blocks_) {
    auto dst = fs.meta_new(b.block, MetaKind::fresh);
    std::memcpy(dst.data(), b.bytes->data(), b.bytes->size());
    fsio::store(dst, le32(b.refcount), offsetof(Ext4XattrHeader, h_refcount));
    if (l.metadata_csum())
      fsio::store(dst, le32(xattr_block_checksum(dst, b.block, l.csum_seed)), offsetof(Ext4XattrHeader, h_checksum));
  }
  rep_.xattr_blocks = xattr_blocks_.size();
  xattr_blocks_.clear();
  xattr_block_of_.clear();
}

}  // namespace ext
