// Changing directories: adding a name (to a linear directory, growing it by
// a block when no block has room, or through the htree index: htree.hpp),
// removing a name, and laying out a new directory's first block. Every
// changed leaf block gets its checksum tail recomputed (metadata_csum). Like
// the kernel, a one-block linear directory that fills up is converted to an
// htree when the filesystem has dir_index.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ext/alloc.hpp"
#include "ext/dirent.hpp"

namespace ext {

// Refuses empty names, "." and "..", names over 255 bytes, and names with '/' or NUL.
fsio::Status check_name(std::string_view name);

// The file_type byte for i_mode (0 without the filetype feature).
std::uint8_t file_type_for(std::uint16_t mode, const Layout& l);

// Recomputes the checksum tail of a linear leaf block (no-op without metadata_csum).
void seal_leaf_block(std::span<std::byte> block, const Inode& dir, const Layout& l);

// "." and ".." (and the tail) in a new directory's first block.
void init_dir_block(std::span<std::byte> block, const Inode& dir, std::uint32_t parent, const Layout& l);

// Size of the entries area of a leaf block (the block less the csum tail).
std::uint32_t leaf_end(const Layout& l);
// Writes one entry header and name at `off`.
void put_entry(std::span<std::byte> block, std::uint32_t off, std::uint32_t ino, std::uint32_t rec,
               std::string_view name, std::uint8_t type, const Layout& l);
// Puts the entry into a leaf block with room; false when there is none.
bool insert_in_block(std::span<std::byte> block, std::string_view name, std::uint32_t ino, std::uint8_t type,
                     const Layout& l);

// Appends a block to a directory (extent tree rebuilt, size and i_blocks
// updated in `dir`); returns its physical number and cached contents.
struct NewDirBlock {
  std::uint64_t physical = 0;
  std::uint32_t logical = 0;
  std::span<std::byte> data;
};
fsio::Result<NewDirBlock> grow_dir(Filesystem& fs, Allocator& alloc, Inode& dir);
// Copy-on-write: moves logical block `logical` to a new block holding the
// same bytes (the old one is freed after the commit), so changes to it only
// become visible with the inode write that remaps it. A block allocated in
// this transaction is returned as it is: nothing links it on the device yet.
// Either way the block returned is marked dirty, for the caller to change.
fsio::Result<NewDirBlock> copy_dir_block(Filesystem& fs, Allocator& alloc, Inode& dir, std::uint32_t logical);
// Rebuilds the directory's extent tree for `extents` (old tree blocks freed).
fsio::Status rebuild_dir_tree(Filesystem& fs, Allocator& alloc, Inode& dir, std::vector<Extent> extents,
                              std::uint64_t goal);

// Adds `name` -> `ino`. `dir` is updated in memory (size, i_blocks, extent
// tree when it grows); the caller writes the inode.
fsio::Status add_entry(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                       std::uint8_t file_type);

// Removes `name`; returns the inode it named.
fsio::Result<std::uint32_t> remove_entry(Filesystem& fs, const Inode& dir, std::string_view name);

}  // namespace ext
