// Adding names to htree-indexed directories (directory.rst "Hash Tree
// Directories"), keeping the index valid: the name goes into the leaf its
// hash selects; a full leaf is split in two by hash, the upper half moving
// to a new block whose first hash (with the low "continued" bit when a run
// of equal hashes straddles the split) is inserted into the index; a full
// index node is split, and a full root gains a level (indirect_levels 1).
// Every changed dx block gets its dx_tail checksum, every leaf its tail.
// A third level (large_dir) is refused.
#pragma once

#include <cstdint>
#include <string_view>

#include "ext/alloc.hpp"

namespace ext {

fsio::Status htree_add(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                       std::uint8_t file_type);

// ext4's make_indexed_dir: a full one-block linear directory becomes a
// dx_root and two leaves holding its names and the new one. All three are
// new blocks (the old block is freed after the commit), so the inode write
// switches the directory from linear to indexed in one step.
fsio::Status htree_convert(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                           std::uint8_t file_type);

}  // namespace ext
