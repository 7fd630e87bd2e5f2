// A regular file of a directory tree as list() saw it, and opening it again
// for its bytes with a check that it is still that file (dir_source.cpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "libfsio/result.hpp"

namespace fsio::tree {

struct FileRef {
  std::string path;  // as it is opened (through any symbolic links the tree follows)
  dev_t dev = 0;
  ino_t ino = 0;
  std::uint64_t size = 0;
};

// Opens `file` read-only and checks that it is the file listed (same
// device, inode and size): Errc::corrupt "PATH: changed while it was read
// (...)" otherwise; errno errors name the path.
Result<int> open_listed(const FileRef& file);

}  // namespace fsio::tree
