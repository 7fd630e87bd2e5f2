// Directory blocks (directory.rst): linear entries, the metadata_csum tail,
// and the htree (dir_index) root and node blocks.
//
//   ext4_dir_entry_2: | inode (le32) | rec_len (le16) | name_len (u8) | file_type (u8) | name ... |
//   rec_len spans to the next entry (4-byte aligned, >= 8 + name_len); the
//   last entry of a block reaches its end, or the 12-byte tail with
//   metadata_csum: inode 0, rec_len 12, name_len 0, file_type 0xDE, crc32c.
//
// An htree directory's block 0 is the dx_root: "." (rec_len 12), ".."
// (rec_len block_size - 12, hiding everything after it from a linear
// reader), dx_root_info at 0x18, then limit/count and dx_entries at 0x20.
// Interior dx_node blocks start with a fake entry (inode 0, rec_len
// block_size) followed by limit/count at 0x8. A linear reader therefore sees
// no names in either, which is how htree stays readable by ext2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "ext/layout.hpp"

namespace ext {

struct Ext4DirEntryHead {
  le32 inode;              // 0x0: 0 = unused
  le16 rec_len;            // 0x4
  std::uint8_t name_len;   // 0x6
  std::uint8_t file_type;  // 0x7: EXT4_FT_* with the filetype feature
};
static_assert(sizeof(Ext4DirEntryHead) == 8 && alignof(Ext4DirEntryHead) == 1);

struct Ext4DirEntryTail {
  le32 det_reserved_zero1;          // 0x0: 0 (looks like an unused entry)
  le16 det_rec_len;                 // 0x4: 12
  std::uint8_t det_reserved_zero2;  // 0x6: 0
  std::uint8_t det_reserved_ft;     // 0x7: 0xDE
  le32 det_checksum;                // 0x8
};
static_assert(sizeof(Ext4DirEntryTail) == 12);

struct DxRootInfo {  // at 0x18 of block 0
  le32 reserved_zero;
  std::uint8_t hash_version;
  std::uint8_t info_length;  // 8
  std::uint8_t indirect_levels;
  std::uint8_t unused_flags;
};
static_assert(sizeof(DxRootInfo) == 8);

struct DxCountLimit {  // overlays the first dx_entry's hash
  le16 limit;
  le16 count;
};
struct DxEntry {
  le32 hash;
  le32 block;  // logical block of the directory
};
struct DxTail {
  le32 dt_reserved;
  le32 dt_checksum;
};
static_assert(sizeof(DxEntry) == 8 && sizeof(DxTail) == 8 && sizeof(DxCountLimit) == 4);

inline constexpr std::size_t kDxRootInfoOffset = 0x18;
inline constexpr std::size_t kDxRootCountOffset = 0x20;
inline constexpr std::size_t kDxNodeCountOffset = 0x08;
inline constexpr std::uint8_t kDirTailFileType = 0xDE;
inline constexpr std::size_t kDirTailSize = 12;

// file_type values
inline constexpr std::uint8_t EXT4_FT_UNKNOWN = 0, EXT4_FT_REG_FILE = 1, EXT4_FT_DIR = 2, EXT4_FT_CHRDEV = 3,
                              EXT4_FT_BLKDEV = 4, EXT4_FT_FIFO = 5, EXT4_FT_SOCK = 6, EXT4_FT_SYMLINK = 7;

// Size an entry with a name of n bytes needs: 8 + n rounded up to 4.
inline std::uint32_t dirent_size(std::uint32_t name_len) { return (8 + name_len + 3) & ~3u; }

// rec_len as stored <-> as meant (64 KiB blocks store 65536 as 65535 or 0).
std::uint32_t rec_len_from_disk(std::uint16_t stored, std::uint32_t block_size);
std::uint16_t rec_len_to_disk(std::uint32_t len, std::uint32_t block_size);

struct DirEntry {
  std::uint32_t inode = 0;
  std::uint8_t file_type = 0;
  std::string_view name;     // points into the block
  std::uint32_t offset = 0;  // of the entry in its block
  std::uint32_t rec_len = 0;
};

// Directory block checksums; `ino`/`gen` are the directory's.
std::uint32_t dir_leaf_checksum(std::span<const std::byte> block, std::uint32_t ino, std::uint32_t gen,
                                const Layout& l);
// count_offset: 0x20 for the root, 0x8 for a node.
std::uint32_t dx_checksum(std::span<const std::byte> block, std::size_t count_offset, std::uint32_t ino,
                          std::uint32_t gen, const Layout& l);

// The kind of a directory block as a linear reader meets it.
enum class DirBlockKind { leaf, dx_root, dx_node };

// Is this an htree block? Block 0 of an INDEX_FL directory is the root; a
// block whose first entry is unused and spans the whole block is a node.
DirBlockKind classify_dir_block(std::span<const std::byte> block, std::uint32_t logical, bool indexed, const Layout& l);

// Parses one directory block and calls `fn` for every entry in use
// (inode != 0), "." and ".." included. Checks rec_len and name_len of every
// entry and, with metadata_csum, the tail (leaf) or dx_tail (htree blocks).
// Errc::corrupt names the directory, logical block, offset and field.
fsio::Status for_each_dirent(std::span<const std::byte> block, std::uint32_t dir_ino, std::uint32_t dir_gen,
                             std::uint32_t logical, bool indexed, const Layout& l,
                             const std::function<fsio::Status(const DirEntry&)>& fn);

}  // namespace ext
