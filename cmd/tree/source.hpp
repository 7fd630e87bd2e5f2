// The two TreeSources (libfsio/tree_source.hpp) the tools read a tree from:
// a host directory (dir_source.cpp) and a tar archive (tar_source.cpp), and
// open_source, which picks one for what the user named.
//
//   auto src = FSIO_TRY(fsio::tree::open_source("/srv/esp", {}));
//   fsio::Tree tree = FSIO_TRY(src->list());
//   ... plan the image ...
//   FSIO_TRY(src->read_contents(sink));
//
// Both refuse, in list(), with Errc::unsupported (not_found for a dangling
// link, corrupt for a damaged archive), what no filler could copy faithfully: a name with
// a '/' or NUL inside (an archive's), a path that climbs out of the tree
// ("../x" in an archive), a file that cannot be read (EACCES), and with
// SymlinkPolicy::follow a dangling link or a loop, each naming the path.
// Special files (devices, FIFOs, sockets) are listed as they are: the filler
// decides whether it can hold them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "libfsio/result.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::tree {

struct SourceOptions {
  SymlinkPolicy symlinks = SymlinkPolicy::follow;
  // Directories: files are read in tree order by the calling thread, while
  // the next ones (up to read_ahead_files files and read_ahead_bytes, the
  // first always) are open with their data asked for ahead
  // (POSIX_FADV_WILLNEED): on many small files the source costs more than
  // the target (an open, a read and a close each, and on a cold cache a
  // seek each), and so the kernel reads many at once.
  unsigned read_ahead_files = 64;
  std::uint64_t read_ahead_bytes = 64u << 20;
  // Archives read from standard input are kept in an unnamed temporary file
  // in this directory for the second pass (read_contents); "" is $TMPDIR,
  // else /var/tmp. A seekable standard input (a file) is read twice instead.
  std::string spool_dir;
  // List files' holes (Content::sparse) and read only their data: a
  // directory's files through SEEK_DATA/SEEK_HOLE, those whose blocks hold
  // less than their size (as cp --sparse=auto decides; a file of all its
  // blocks is read whole), an archive's members from their sparse maps
  // (GNU, pax 0.0, 0.1, 1.0). Off, every file is read whole, holes as zeros.
  bool holes = false;
  // List each node's extended attributes (TreeNode::xattrs) and inode
  // flags (TreeNode::flags): a directory's through llistxattr/lgetxattr
  // and FS_IOC_GETFLAGS, an archive's from its pax xattr and ACL records
  // and its file flags. Off, none are listed (FAT holds none).
  bool attrs = false;
};

// A directory at `path` (a symbolic link to one is followed, as by cp -r),
// else a tar archive (plain, gzip, zstd or xz; "-" reads standard input).
// Errc::not_found when the path does not exist; Errc::invalid_argument for
// anything else (a device, a FIFO named as SRC). Opens and checks; lists
// nothing yet.
Result<std::unique_ptr<TreeSource>> open_source(const std::string& path, const SourceOptions& options);

// The two kinds directly (tests).
Result<std::unique_ptr<TreeSource>> open_directory(const std::string& path, const SourceOptions& options);
Result<std::unique_ptr<TreeSource>> open_archive(const std::string& path, const SourceOptions& options);

}  // namespace fsio::tree
