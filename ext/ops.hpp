// The writing operations extwb offers: put a file, make a directory, remove
// a name. Each is one transaction: checks and refusals first, then the data,
// then one ordered commit (ext/commit.hpp). A failure or interruption before
// the commit leaves the filesystem as it was (data blocks written into free
// space are simply not referenced). put_file is in put.cpp, put_tree in
// put_tree.cpp, make_dirs in mkdir.cpp, remove_path in remove.cpp, FdSource
// and the time checks in op_inputs.cpp; the steps they share in op_steps.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ext/commit.hpp"
#include "ext/id_map.hpp"
#include "ext/writeback.hpp"
#include "libfsio/pipe.hpp"
#include "libfsio/tree_source.hpp"

namespace ext {

// A file descriptor (a file, a pipe or a socket). A pipe is widened to
// 1 MiB so the writer and we wake each other less often; a read that waits
// on a pipe or socket notices cancel() within 100 ms (libfsio/pipe.hpp).
class FdSource : public Source {
 public:
  FdSource(int fd, std::string name);
  fsio::Result<std::size_t> read(std::span<std::byte> buf) override;
  std::optional<std::uint64_t> size() const override { return size_; }
  void cancel() override { cancelled_ = true; }

 private:
  int fd_;
  fsio::FdKind kind_;
  std::string name_;
  std::optional<std::uint64_t> size_;  // a regular file's, at open
  std::uint64_t offset_ = 0;           // bytes read so far, for messages
  std::atomic<bool> cancelled_{false};
};

struct Owner {
  std::uint16_t mode = 0644;  // permission bits
  std::uint32_t uid = 0, gid = 0;
};

struct PutOptions {
  bool parents = false;  // create missing parent directories (0755)
  bool force = false;    // replace an existing file
  bool dry_run = false;
  Owner owner;
  // put_tree with either map: every node's owner and group are the
  // source's, through the map where one is given (id_map.hpp), not `owner`.
  std::optional<IdMap> uid_map, gid_map;
  std::optional<Timestamp> mtime;
  std::optional<std::int64_t> clamp;  // put_tree: SOURCE_DATE_EPOCH, the source's later times become it
  Timestamp now;
  WritebackOptions writeback;
  // put_tree: metadata cached at most before what no structure on the device
  // refers to yet is written out early (Filesystem::spill_unseen); not in a dry run.
  std::uint64_t meta_cache = 8u << 20;
  std::function<bool()> interrupted;
  fsio::Progress* progress = nullptr;
};

struct PutReport {
  std::string path;
  std::uint32_t ino = 0;
  std::uint64_t size = 0;
  std::uint64_t data_blocks = 0, tree_blocks = 0;
  std::size_t extents = 0;
  bool replaced = false;
  std::vector<std::string> created_dirs;
  WritebackStats writeback;
  std::uint64_t files = 0, dirs = 0, symlinks = 0;  // put_tree's counts
};

fsio::Result<PutReport> put_file(Filesystem& fs, const std::string& dest, Source& src, const PutOptions& o);

// Copies a listed tree (`tree` from src.list(): files with their hard
// links, directories, symlinks, devices, FIFOs, sockets; mode and times
// from the source, owner from `o`: o.owner, or the source's through
// o.uid_map / o.gid_map) into the new directory `dest`, all in
// one transaction like mke2fs -d (tree_fill.hpp).
fsio::Result<PutReport> put_tree(Filesystem& fs, const std::string& dest, const fsio::Tree& tree, fsio::TreeSource& src,
                                 const PutOptions& o);

struct MkdirReport {
  std::vector<std::string> created;  // paths, outermost first
};
fsio::Result<MkdirReport> make_dirs(Filesystem& fs, const std::string& path, bool parents, const Owner& owner,
                                    const Timestamp& now, bool dry_run);

struct RmReport {
  std::uint32_t ino = 0;
  bool inode_freed = false;  // false when other hard links remain
  std::uint64_t blocks_freed = 0;
};
fsio::Result<RmReport> remove_path(Filesystem& fs, const std::string& path, const Timestamp& now, bool dry_run);

}  // namespace ext
