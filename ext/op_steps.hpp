// The steps put, mkdir and rm (ops.hpp) share, internal to ext/:
//   new_inode.cpp  a fresh inode in memory; a regular file (its data
//                  written back, then the inode) and a symlink
//   mkdir.cpp      a directory made in its parent; a path's parent
//                  resolved, missing directories made on the way (-p)
//   remove.cpp     one link of an inode dropped, the inode and its blocks
//                  freed at the last
//   op_inputs.cpp  the times an operation stores, checked
// None of them commits: each operation owns its Transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ext/ops.hpp"

namespace ext {

// ---- new_inode.cpp ----

// A fresh inode in memory: zeroed slot, ext4 fields sized by i_extra_isize.
Inode new_inode(const Layout& l, std::uint32_t ino, std::uint16_t mode, const Owner& o);
void set_size(Inode& inode, std::uint64_t size);
void set_links(Inode& inode, std::uint16_t n);

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
                                  std::uint32_t ino = 0);

// A symlink: the target in i_block when under 60 bytes (a "fast" symlink,
// no blocks), else in a data block.
fsio::Result<std::uint32_t> create_symlink(Transaction& tx, const Inode& parent, const std::string& target,
                                           const Owner& owner, const Timestamp* mtime, const PutOptions& o);

// ---- mkdir.cpp ----

// "/a/b/c" -> {"/a/b", "c"}; "/c" -> {"/", "c"}.
std::pair<std::string, std::string> split_parent(const std::string& path);

// Inode `ino`, which must be a directory (`path` names it in the refusal).
fsio::Result<Inode> read_dir(Filesystem& fs, std::uint32_t ino, const std::string& path);

// Makes directory `name` in `parent` (both inodes updated in memory and written).
fsio::Result<std::uint32_t> create_dir(Transaction& tx, Inode& parent, const std::string& name, const Owner& owner);

// The parent directory of `path` and the last name, creating missing
// directories when `parents` (their paths appended to `created`).
fsio::Result<std::pair<Inode, std::string>> resolve_parent(Transaction& tx, Filesystem& fs, const std::string& path,
                                                           bool parents, const Owner& dir_owner,
                                                           std::vector<std::string>& created);

// ---- remove.cpp ----

// Drops one link of `inode`; at zero, its blocks and the inode itself are freed (deferred).
fsio::Result<std::uint64_t> unlink_inode(Transaction& tx, Inode& inode);

// ---- op_inputs.cpp ----

// The times an operation stores, against what the inodes can hold (the
// caller names their sources; this is the library's own guard).
fsio::Status check_op_times(const Layout& l, const Timestamp& now, const std::optional<Timestamp>& mtime);
fsio::Status check_op_times(const Layout& l, const PutOptions& o);

}  // namespace ext
