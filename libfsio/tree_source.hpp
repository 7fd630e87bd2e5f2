// TreeSource: a tree of files to put into a filesystem image, read from
// wherever it lives (a host directory, a tar archive), in one fixed order.
//
// Every filler that builds a filesystem from a tree (mkfat -d now; mkext4 -d
// and extwb's tree put later) plans the whole image before its first write,
// then streams the data in. So a source does two things, in this order:
//
//   1. list(): the whole tree's metadata as a Tree, every node in one order
//      that does not depend on the host (readdir order, archive order):
//      depth-first pre-order from the root, the children of a directory
//      sorted bytewise by name (strcmp on the name's bytes), each directory
//      followed at once by everything below it:
//        ""  a  a/x  a/y  a-b  b
//      (a's subtree comes before a-b although '/' > '-': siblings are
//      compared, never whole paths). Two sources holding the same tree give
//      equal Trees (up to the content numbering), whatever order their
//      files were made or archived in.
//   2. read_contents(sink): the bytes of every content (a regular file's
//      data; hard links and symbolic links followed to one file share one
//      content), each exactly once and in order from its first byte to its
//      last (of a sparse content, only its data ranges' bytes, in order),
//      one content at a time, in whatever order is cheapest for the
//      source (archive order; the tree's order with read-ahead). The filler
//      knows from the plan where each content goes, so the order the bytes
//      arrive in cannot change the image.
//
// Neither step writes anything, so a filler can refuse a tree (a name it
// cannot hold, a file too large) after list() without having touched its
// target. Sources are not thread-safe, but for read_picked; a source may use
// threads inside read_contents, but calls the sink from the calling thread
// only.
//
// This header is libfsio's, but not installed: the interface is shared by
// fat/, ext/ and the sources in cmd/tree/, not yet a promise to other
// programs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libfsio/apart.hpp"
#include "libfsio/result.hpp"

namespace fsio {

enum class NodeKind : std::uint8_t { directory, file, symlink, char_device, block_device, fifo, socket };

inline const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::directory: return "directory";
    case NodeKind::file: return "file";
    case NodeKind::symlink: return "symbolic link";
    case NodeKind::char_device: return "character device";
    case NodeKind::block_device: return "block device";
    case NodeKind::fifo: return "FIFO";
    case NodeKind::socket: return "socket";
  }
  return "node";
}

// Seconds since 1970 UTC and nanoseconds, as struct statx_timestamp holds
// them (negative seconds are before 1970).
struct TimeSpec {
  std::int64_t sec = 0;
  std::uint32_t nsec = 0;
  bool operator==(const TimeSpec&) const = default;
};

// One extended attribute: the full name with its namespace ("user.mime",
// "security.selinux", "system.posix_acl_access") and the value's bytes as
// getxattr(2) gives them; a POSIX ACL in the xattr format version 2
// (acl(5), the kernel's posix_acl_xattr.h: le32 version 2, then 8-byte
// entries le16 tag, le16 perm, le32 id).
struct Xattr {
  std::string name;
  std::string value;
  bool operator==(const Xattr&) const = default;
  auto operator<=>(const Xattr&) const = default;
};

inline constexpr std::uint32_t kNoContent = 0xFFFFFFFF;
inline constexpr std::uint32_t kNoParent = 0xFFFFFFFF;

// One file, directory, link or special file of the tree.
struct TreeNode {
  std::string name;                  // last component, the source's bytes; "" for the root
  std::uint32_t parent = kNoParent;  // index in Tree::nodes of its directory; kNoParent for the root
  NodeKind kind = NodeKind::file;
  std::uint64_t size = 0;  // a file's bytes (its content's size); 0 otherwise
  std::uint32_t mode = 0;  // permission bits (st_mode & 07777)
  std::uint32_t uid = 0, gid = 0;
  TimeSpec mtime, atime, ctime;
  std::optional<TimeSpec> btime;       // creation time, where the source has one
  std::uint64_t rdev = 0;              // devices: makedev(major, minor)
  std::string link_target;             // symlinks kept as links: the target as stored
  std::uint32_t content = kNoContent;  // files: index in Tree::contents
  std::vector<Xattr> xattrs{};         // sorted by name (bytewise), each name once
  // Inode flags as FS_IOC_GETFLAGS gives them (linux/fs.h FS_*_FL, the same
  // bits as ext4's i_flags), what the source holds: the filler keeps only
  // those a user may set (chattr), see ext/tree_fill.hpp.
  std::uint32_t flags = 0;
};

// A run of a file's bytes that holds data (what SEEK_DATA finds, a tar's
// sparse map entry); the rest of a sparse file reads as zeros.
struct DataRange {
  std::uint64_t offset = 0, length = 0;
  bool operator==(const DataRange&) const = default;
};

// The bytes of one regular file; several nodes may share one.
struct Content {
  std::uint64_t size = 0;
  std::uint32_t node = 0;  // the first node (in tree order) that holds it, for messages
  // A file with holes, where the source was asked for them and knows them:
  // `data` its data ranges (ascending, not overlapping or touching, within
  // size; none for a file that is one hole), and read_contents gives only
  // their bytes. Otherwise every byte of [0, size) is given.
  bool sparse = false;
  std::vector<DataRange> data{};
};

struct Tree {
  std::vector<TreeNode> nodes;  // nodes[0] is the root directory; the order is list()'s
  std::vector<Content> contents;
  std::string label;            // how messages name the source: "/srv/esp", "esp.tar.zst"
  std::string separator = "/";  // between label and a path: "/" for a directory, ": " for an archive

  // "a/b/c" relative to the root; "" for the root itself.
  std::string path(std::uint32_t node) const {
    std::string out;
    for (std::uint32_t n = node; n != kNoParent && nodes[n].parent != kNoParent; n = nodes[n].parent)
      out = nodes[n].name + (out.empty() ? "" : "/" + out);
    return out;
  }
  // "/srv/esp/EFI/BOOT/BOOTX64.EFI", "esp.tar: EFI/BOOT": what an error names.
  std::string where(std::uint32_t node) const {
    const std::string p = path(node);
    return p.empty() ? label : label + separator + p;
  }
};

// Where read_contents puts the bytes. The filler implements it; every call
// comes from the thread that called read_contents.
class ContentSink {
 public:
  virtual ~ContentSink() = default;
  // Room for bytes [offset, offset + n) of `content`, 0 < n <= want. The
  // source fills a prefix of it and calls commit with the length it wrote
  // (possibly less than the span, never more), before the next reserve.
  // `offset` is where the previous commit of this content ended, or for a
  // sparse content where one of its later data ranges starts.
  virtual Result<std::span<std::byte>> reserve(std::uint32_t content, std::uint64_t offset, std::uint64_t want) = 0;
  virtual Status commit(std::uint32_t content, std::uint64_t offset, std::size_t n) = 0;
};

class TreeSource {
 public:
  virtual ~TreeSource() = default;
  // The tree, in the order described at the top. Called once, first.
  virtual Result<Tree> list() = 0;
  // Every content of the listed tree of size > 0 (with data: a sparse one of
  // no data ranges gets no call), as described at the top;
  // a sink error stops it and is returned as is. A file whose size or
  // identity changed since list() is Errc::corrupt naming it ("changed
  // while mkfat read it"): the image would not be the tree that was planned.
  virtual Status read_contents(ContentSink& sink) = 0;
  // How many threads may read at once with read_picked: 1 for a source that
  // reads one stream (an archive), which has no read_picked.
  virtual unsigned max_readers() const { return 1; }
  // The contents `picked` (indexed by content) marks, as read_contents reads
  // them all. Up to max_readers() calls may run at once, on threads of
  // their own, each with its own sink and its own contents.
  virtual Status read_picked(ContentSink&, const std::vector<bool>&) {
    return make_error(Errc::unsupported, "this source reads its contents in one stream");
  }
  // What the source reads, for check_apart against the target: the
  // archive, standard input, or each file of a tree (by the path it is read
  // through, so files reached through symbolic links count). Valid after list().
  virtual std::vector<StorageRef> storage() const = 0;
};

// How a source treats a symbolic link.
enum class SymlinkPolicy {
  follow,  // the node is what the link points to (mcopy, FAT): a file's bytes, a whole directory;
           // a dangling link or a loop is an error naming the link
  keep,    // the node is the link itself (ext4): NodeKind::symlink with its target text
};

}  // namespace fsio
