// A regular file of a directory tree as list() saw it, and opening it again
// for its bytes with a check that it is still that file (dir_source.cpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libfsio/result.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::tree {

struct FileRef {
  std::string path;  // as it is opened (through any symbolic links the tree follows)
  dev_t dev = 0;
  ino_t ino = 0;
  std::uint64_t size = 0;
  bool sparse = false;            // read only `data` (SourceOptions::holes)
  std::vector<DataRange> data{};  // where its data is, when sparse
};

// The data ranges of the open file `fd` of `size` bytes by SEEK_DATA and
// SEEK_HOLE; std::nullopt when its filesystem cannot say (EINVAL: read it
// whole). Errno errors name `path`.
Result<std::optional<std::vector<DataRange>>> data_ranges(int fd, std::uint64_t size, const std::string& path);

// A sparse file's data ranges from `fd` into `sink` as content `content`
// (pread at each range's offsets).
Status read_ranges(const FileRef& file, std::uint32_t content, int fd, ContentSink& sink);

// Opens `file` read-only and checks that it is the file listed (same
// device, inode and size): Errc::corrupt "PATH: changed while it was read
// (...)" otherwise; errno errors name the path.
Result<int> open_listed(const FileRef& file);

}  // namespace fsio::tree
