// Changing directories: adding a name to a linear directory (growing it by
// a block when no block has room), removing a name, and laying out a new
// directory's first block. Every changed leaf block gets its checksum tail
// recomputed (metadata_csum). Names cannot be added to an htree-indexed
// directory yet: appending them linearly would hide them from the kernel's
// hashed lookup, so that is refused (Errc::unsupported).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

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

// Adds `name` -> `ino`. `dir` is updated in memory (size, i_blocks, extent
// tree when it grows); the caller writes the inode.
fsio::Status add_entry(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                       std::uint8_t file_type);

// Removes `name`; returns the inode it named.
fsio::Result<std::uint32_t> remove_entry(Filesystem& fs, const Inode& dir, std::string_view name);

}  // namespace ext
