// Building an extent tree from a file's extent list (held in memory while
// the file is written): up to 4 extents live in the inode's i_block; more
// are split into leaf blocks of eh_max entries, and leaves into index
// blocks, until the top level fits the root. Each tree block is allocated
// near `goal`, filled and checksummed once, and cached as a fresh block for
// the commit to write before anything points at it.
#pragma once

#include <cstdint>
#include <vector>

#include "ext/alloc.hpp"
#include "ext/extent.hpp"

namespace ext {

// Splits extents longer than 32768 blocks and merges neighbours that are
// contiguous both logically and physically.
std::vector<Extent> normalize_extents(const std::vector<Extent>& in);

// Writes the tree into inode.i_block (EXTENTS_FL set) and returns the
// physical blocks of the index and leaf blocks it allocated.
fsio::Result<std::vector<std::uint64_t>> build_extent_tree(Filesystem& fs, Allocator& alloc, Inode& inode,
                                                           const std::vector<Extent>& extents, std::uint64_t goal);

// Every index/leaf block of an existing extent tree (to free it when the tree is rebuilt).
fsio::Result<std::vector<std::uint64_t>> extent_tree_blocks(Filesystem& fs, const Inode& inode);

// i_blocks (512-byte units, huge_file-aware) for `blocks` filesystem blocks;
// Errc::unsupported past what the inode can count.
fsio::Status set_inode_blocks(Inode& inode, std::uint64_t blocks, const Layout& l);

}  // namespace ext
