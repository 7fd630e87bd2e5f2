// What extwb ls/stat/df report, as plain structs built from a Filesystem:
// one struct per fact, formatted by the tool as text or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ext/fs.hpp"

namespace ext {

struct InodeInfo {
  std::uint32_t ino = 0;
  std::string type;        // "file", "dir", "symlink", "chardev", "blockdev", "fifo", "socket", "unknown"
  std::uint16_t mode = 0;  // permission bits and type, as i_mode
  std::uint32_t uid = 0, gid = 0;
  std::uint32_t links = 0;
  std::uint64_t size = 0;
  std::uint64_t blocks_512 = 0;
  std::uint32_t flags = 0;
  std::uint32_t generation = 0;
  Timestamp atime, ctime, mtime, crtime;
  bool has_crtime = false;
  std::string symlink_target;  // for symlinks
};

struct EntryInfo {
  std::string name;
  std::uint32_t ino = 0;
  std::uint8_t file_type = 0;  // from the directory entry
  InodeInfo inode;             // filled when asked for (ls -l)
};

struct StatInfo {
  std::string path;
  InodeInfo inode;
  std::vector<Extent> extents;
  bool extent_mapped = false;
  std::uint32_t tree_blocks = 0;  // extent index/leaf or indirect blocks
};

struct DfInfo {
  std::uint32_t block_size = 0;
  std::uint64_t blocks_count = 0, free_blocks = 0, reserved_blocks = 0;
  std::uint32_t inodes_count = 0, free_inodes = 0;
  std::uint32_t group_count = 0, inode_size = 0;
  std::string uuid, label, features, state;
  bool writable = false;      // passes the write gate
  std::string write_refusal;  // why not, when not
};

fsio::Result<InodeInfo> describe_inode(Filesystem& fs, const Inode& inode);
// Entries of the directory at `path`, "." and ".." left out, in directory order.
fsio::Result<std::vector<EntryInfo>> list_dir(Filesystem& fs, const std::string& path, bool with_inodes);
fsio::Result<StatInfo> stat_path(Filesystem& fs, const std::string& path);
DfInfo describe_fs(Filesystem& fs);

// "-rw-r--r--" / "drwxr-xr-x" from i_mode.
std::string mode_string(std::uint16_t mode);
std::string format_uuid(const std::uint8_t (&uuid)[16]);

}  // namespace ext
