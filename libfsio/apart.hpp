// A tool never writes to storage it reads from.
//
// `fsimg restore raw.fsimg /dev/loop3`, where loop3 is a loop device over
// raw.fsimg, writes over the stream it is reading; `fsimg save --force
// /dev/loop3 e.img` truncates the file the source device reads. Comparing
// paths, or st_dev/st_ino, sees neither: the two names meet only at the
// bottom of the block stack. So every tool, before its first write (and
// under --dry-run, where it would make it), resolves what it writes and
// what it reads down their stacks (stack.hpp) and refuses when they share
// bytes. No option overrides this.
//
// What is read: an input stream (a file, or standard input when it is a
// regular file or a block device), a source device or file, the files
// named by options (mkfat -m/-l, fio job files and their includes), every
// regular file of a source tree (extwb put DIR, which may hold the target
// image itself). Pipes, terminals and character devices share no storage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libfsio/result.hpp"
#include "libfsio/stack.hpp"

namespace fsio {

// One end of a tool's I/O: a path (stat follows symlinks), or an open
// descriptor (standard input or output), and the bytes of it concerned.
struct StorageRef {
  std::string role;  // how messages call it: "the input", "the source", "the -m file"
  std::string name;  // as the user gave it, or "standard input"
  int fd = -1;       // >= 0: what fstat(fd) finds, not what name is now
  std::uint64_t begin = 0;
  std::uint64_t end = kToEnd;
  bool tree = false;  // name is a directory: every regular file under it,
                      // symbolic links not followed (O(files) lstat calls)
  // One of several targets of a run (ddbench jobs): the same file or device
  // again, by any path, is fine (fio runs several jobs on one target); only
  // another way to its storage (a loop device over it, a partition of it)
  // is refused.
  bool same_is_fine = false;
  // A regular file the caller has just stat'ed (a tree source lists every
  // file with statx): its device and inode, so that a tree of 5,000 files
  // costs no second stat each. 0/0: stat it.
  std::uint64_t known_dev = 0, known_ino = 0;
};

// Errc::busy when what `target` writes shares storage with any of `reads`:
// "/dev/loop3: shares storage with the input e.img (/dev/loop3 is a loop
// device over e.img); refusing to write to it". The explanation is "the
// same file" (another path or a hard link to it), "the same device", "A is
// a loop device over B[, which is stacked on C]" (or a partition of, a dm
// or md device over), or "both use C". A target or read that does not exist
// yet (a file about to be created) shares nothing. Errors from stat other
// than ENOENT are returned.
Status check_apart(const StorageRef& target, const std::vector<StorageRef>& reads);

}  // namespace fsio
