// The extent tree (inodes.rst "The Contents of inode.i_block", ifork.rst).
//
// A node is a 12-byte header and eh_entries 12-byte entries: ext4_extent in
// leaves (depth 0), ext4_extent_idx above. The root sits in i_block (60
// bytes: header + 4 entries); nodes below it fill a block, with eh_max =
// (block_size - 12) / 12 and a crc32c tail right after the last possible
// entry (metadata_csum).
//
//   ext4_extent:  | ee_block (le32) | ee_len (le16) | ee_start_hi (le16) | ee_start_lo (le32) |
//   ee_len <= 32768 is an initialized extent of that many blocks; above
//   32768 it is unwritten (reads as zeros) and holds ee_len - 32768 blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ext/inode.hpp"

namespace ext {

struct Ext4ExtentHeader {
  le16 eh_magic;       // 0x0: 0xF30A
  le16 eh_entries;     // 0x2
  le16 eh_max;         // 0x4
  le16 eh_depth;       // 0x6: 0 = leaf
  le32 eh_generation;  // 0x8
};
static_assert(sizeof(Ext4ExtentHeader) == 12 && alignof(Ext4ExtentHeader) == 1);

struct Ext4Extent {
  le32 ee_block;     // 0x0: first logical block
  le16 ee_len;       // 0x4
  le16 ee_start_hi;  // 0x6
  le32 ee_start_lo;  // 0x8
};
static_assert(sizeof(Ext4Extent) == 12 && offsetof(Ext4Extent, ee_start_lo) == 8);

struct Ext4ExtentIdx {
  le32 ei_block;    // 0x0: first logical block covered
  le32 ei_leaf_lo;  // 0x4
  le16 ei_leaf_hi;  // 0x8
  le16 ei_unused;   // 0xA
};
static_assert(sizeof(Ext4ExtentIdx) == 12 && offsetof(Ext4ExtentIdx, ei_leaf_hi) == 8);

inline constexpr std::uint16_t kExtentMagic = 0xF30A;
inline constexpr std::uint32_t kMaxInitExtentLen = 32768;
inline constexpr std::uint32_t kMaxUnwrittenExtentLen = 32767;
inline constexpr std::uint32_t kExtentRootMax = 4;   // (60 - 12) / 12
inline constexpr std::uint32_t kMaxExtentDepth = 5;  // EXT4_MAX_EXTENT_DEPTH

// One mapping of logical to physical blocks.
struct Extent {
  std::uint32_t logical = 0;
  std::uint32_t len = 0;
  std::uint64_t physical = 0;
  bool unwritten = false;
};

// eh_max of a node that fills a block: (block_size - 12) / 12.
inline std::uint32_t extent_node_max(std::uint32_t block_size) { return (block_size - 12) / 12; }

// The crc32c tail of an index or leaf block (csum.c ext2fs_extent_block_csum):
// seed, le32 ino, le32 generation, block[0 : 12 + 12 * eh_max].
std::uint32_t extent_block_checksum(std::span<const std::byte> block, std::uint32_t ino, std::uint32_t generation,
                                    const Layout& l);

// Reads a block of the filesystem (the whole block_size bytes).
using BlockReader = std::function<fsio::Result<std::span<const std::byte>>(std::uint64_t block)>;

// Visits every extent of an extent-mapped inode in logical order, reading
// index and leaf blocks through `read` and checking each: magic, eh_max,
// eh_entries, eh_depth one less than its parent, logical order, the tail
// checksum, and that every block lies inside the filesystem. `on_tree_block`
// (optional) sees the physical number of every index/leaf block.
fsio::Status walk_extents(const Inode& inode, const Layout& l, const BlockReader& read,
                          const std::function<fsio::Status(const Extent&)>& on_extent,
                          const std::function<void(std::uint64_t)>& on_tree_block = {});

// The same for an ext2/ext3 block-mapped inode (i_block: 12 direct, then
// single, double and triple indirect). Runs of physically contiguous blocks
// come out as one Extent; holes are skipped.
fsio::Status walk_block_map(const Inode& inode, const Layout& l, const BlockReader& read,
                            const std::function<fsio::Status(const Extent&)>& on_extent,
                            const std::function<void(std::uint64_t)>& on_tree_block = {});

// Either of the above, as the inode's flags say; Errc::unsupported for
// inline data, encrypted or verity-protected inodes.
fsio::Status walk_mapping(const Inode& inode, const Layout& l, const BlockReader& read,
                          const std::function<fsio::Status(const Extent&)>& on_extent,
                          const std::function<void(std::uint64_t)>& on_tree_block = {});

}  // namespace ext
