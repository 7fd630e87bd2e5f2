// Filling a directory of an open filesystem from a listed tree
// (libfsio/tree_source.hpp): the one tree copy behind mkext4 -d and extwb's
// put of a directory. In two steps, so that no byte is written before every
// allocation is made:
//   1. plan(): every node of the tree made in the metadata cache, in the
//      tree's order (children sorted by name, so the same tree gives the
//      same inode numbers, blocks and entries whatever the readdir or the
//      archive order): its inode, its entry, a regular file's blocks
//      allocated whole (as fallocate would, near its inode's group) and its
//      extent tree built; nodes sharing a content (hard links) linked to
//      the first one's inode. A refusal or a lack of space here leaves the
//      device untouched.
//   2. write_data(): the source's contents, in whatever order the source
//      reads them, copied into the blocks planned for them and submitted in
//      large plugged batches; the caller then flushes nothing itself, the
//      batch is finished here, and the transaction's commit links it all.
// Extended attributes and ACLs (tree_xattr.cpp): each node's, in its inode
// while they fit and the rest in one xattr block near it, identical blocks
// shared; the id of an ACL's named user or group through the maps (kept
// as it is with `owner`, --all-root). Flags: those chattr sets
// (flags_in_image), on the files the kernel allows them on.
// Times: each node's atime, mtime and ctime (and crtime where the source
// has one, else `now`) to the nanosecond; with `clamp` (SOURCE_DATE_EPOCH)
// every later time becomes the clamp, earlier ones stay.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ext/commit.hpp"
#include "ext/id_map.hpp"
#include "ext/ops.hpp"
#include "ext/xattr.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/tree_source.hpp"

namespace ext {

struct TreeFillOptions {
  std::optional<Owner> owner;             // uid and gid of every node (mode ignored); unset: the source's
  std::optional<IdMap> uid_map, gid_map;  // without `owner`: the source's ids mapped (id_map.hpp); unset: kept
  std::optional<Timestamp> mtime;         // the modification time of every node; unset: the source's
  std::optional<std::int64_t> clamp;      // SOURCE_DATE_EPOCH: times after it become it
  Timestamp now;                          // crtime of nodes the source gives none, and the top directory's times
  std::uint64_t batch_bytes = 16u << 20;  // data plugged before a submission (and held in memory at most)
  // Metadata cached while planning before what may go out early is written
  // (Transaction::spill_if_over: all of it for mkext4 -d, what the device's
  // filesystem cannot see yet for extwb put); the rest stays until the commit.
  std::uint64_t cache_bytes = 8u << 20;
  bool use_reserved = false;  // fill the root-reserved blocks too (a new filesystem, as mke2fs -d does)
  std::function<bool()> interrupted;
  fsio::Progress* progress = nullptr;
};

// A run of a file's logical blocks that hold data.
struct BlockSpan {
  std::uint64_t first = 0, count = 0;
};
// The blocks a content's data takes: all of [0, size) rounded up to a
// block, or for a sparse one every block a data range touches (a range
// starting or ending inside a block takes that block whole), in order,
// spans that touch joined.
std::vector<BlockSpan> data_blocks(const fsio::Content& c, std::uint32_t block_size);
// Bytes of data a content holds (its size, or its data ranges' sum).
inline std::uint64_t data_bytes(const fsio::Content& c) {
  if (!c.sparse) return c.size;
  std::uint64_t sum = 0;
  for (const fsio::DataRange& r : c.data) sum += r.length;
  return sum;
}

// What a tree holds, counted from its listing alone (before any filesystem is open).
struct TreeCount {
  std::uint64_t files = 0, dirs = 0, symlinks = 0, specials = 0;  // nodes below the root
  std::uint64_t hard_links = 0;                                   // file nodes past the first of their content
  std::uint64_t bytes = 0;                                        // the regular files' sizes, each content once
  std::uint64_t data_bytes = 0;  // of those, the bytes in data ranges (all but a sparse file's holes)
  std::uint64_t inodes = 0;      // new inodes it takes
  // Blocks it takes at least: file data, a block per directory and per
  // symlink of 60 bytes or more. Extent tree blocks, the blocks directories
  // grow by and htree index blocks come on top.
  std::uint64_t min_blocks = 0;
};
TreeCount count_tree(const fsio::Tree& tree, std::uint32_t block_size);

// The mode bits, owner and group node `node` gets in the image: `owner`
// when set, else the source's ids through the maps. Errc::invalid_argument
// naming the node and the id when a map has no range for it.
fsio::Result<Owner> owner_in_image(const fsio::Tree& tree, std::uint32_t node, const TreeFillOptions& o);

// Every refusal the tree itself causes, before anything is allocated: a
// name ext4 cannot hold, a symlink target of more than a block, a time or
// owner no map covers (the root's
// too when `root_owner`). Each names the node (Tree::where).
fsio::Status check_tree(const Layout& l, const fsio::Tree& tree, const TreeFillOptions& o, bool root_owner = false);

// The inode flags a node of `kind` keeps of the source's `flags`
// (FS_*_FL, ext4's i_flags bits): secrm, unrm, sync, immutable, append,
// nodump, noatime, journal_data, notail, dirsync, topdir, projinherit,
// masked as the kernel's ext4_mask_flags does (dirsync, topdir and
// projinherit for directories only; nodump and noatime only on symlinks
// and special files).
std::uint32_t flags_in_image(fsio::NodeKind kind, std::uint32_t flags);
// A node's xattrs as ext4 stores them (xattr.hpp): names split into their
// index, ACLs in ext4's encoding with their ids mapped. Errors name the
// node and the attribute: a namespace ext4 has no index for, a malformed
// ACL, a default ACL on a non-directory, an ACL id no map covers.
fsio::Result<std::vector<XattrEntry>> xattrs_in_image(const fsio::Tree& tree, std::uint32_t node,
                                                      const TreeFillOptions& o);
// xattrs_in_image, and Errc::unsupported naming the node and the sizes when
// they do not fit a new inode and one block.
fsio::Status check_xattrs(const Layout& l, const fsio::Tree& tree, std::uint32_t node, const TreeFillOptions& o);

struct TreeFillReport {
  TreeCount count;
  std::uint64_t data_blocks = 0, tree_blocks = 0, extents = 0;
  std::uint64_t xattr_blocks = 0;   // after sharing
  std::uint64_t bytes_written = 0;  // data, whole blocks
};

class TreeFill {
 public:
  TreeFill(Transaction& tx, const fsio::Tree& tree, const TreeFillOptions& o);
  // Step 1: the nodes below the tree's root made in `top` (an existing
  // directory; its inode is written to the cache with its new links, and
  // the times of the tree's root when `top_from_tree`, else `now`).
  fsio::Status plan(Inode& top, bool top_from_tree);
  // Step 2: every content read from `src` into its blocks, all submitted.
  fsio::Status write_data(fsio::TreeSource& src);
  const TreeFillReport& report() const { return rep_; }

  // Where a content's bytes go: its extents, in logical order.
  struct Placement {
    std::vector<Extent> extents;
    std::uint64_t size = 0;
    bool sparse = false;  // only `data` arrives; the rest is holes
    std::vector<fsio::DataRange> data{};
  };

 private:
  std::vector<std::vector<bool>> share_contents(unsigned max_readers) const;
  fsio::Status make_children(std::uint32_t node, Inode& dir);
  fsio::Result<std::uint32_t> make_node(std::uint32_t node, const Inode& dir);
  fsio::Result<std::uint32_t> make_file(std::uint32_t node, const Inode& dir);
  fsio::Result<std::uint32_t> make_symlink(std::uint32_t node, const Inode& dir);
  fsio::Result<std::uint32_t> make_special(std::uint32_t node, const Inode& dir);
  Owner owner_of(std::uint32_t node) const;
  void stamp(Inode& inode, const fsio::TreeNode& n) const;
  fsio::Status attach_attrs(Inode& inode, std::uint32_t node);
  void write_xattr_blocks();
  fsio::Result<std::vector<Extent>> allocate(std::uint32_t ino, const std::vector<BlockSpan>& spans);

  Transaction& tx_;
  const fsio::Tree& tree_;
  TreeFillOptions o_;
  std::vector<std::uint32_t> ino_of_content_;
  std::vector<Placement> places_;     // per content
  std::vector<std::uint32_t> links_;  // per content: the nodes holding it
  std::vector<std::uint32_t> end_;    // per node: the index past its subtree
  struct Pending {
    std::uint64_t block;
    fsio::AlignedBuffer data;
  };
  std::vector<Pending> symlink_blocks_;  // slow symlinks' targets, written with the data
  struct XattrBlock {
    std::uint64_t block;
    const std::vector<std::byte>* bytes;  // xattr_block_of_'s key (one copy); h_refcount and h_checksum
                                          // set by write_xattr_blocks in the cached block
    std::uint32_t refcount;
  };
  std::vector<XattrBlock> xattr_blocks_;
  std::map<std::vector<std::byte>, std::size_t> xattr_block_of_;  // a block's bytes -> its index, to share it
  std::uint64_t goal_ = 0;  // after the last file's blocks, while in the same group
  std::uint32_t goal_group_ = ~0u;
  TreeFillReport rep_;
};

}  // namespace ext
