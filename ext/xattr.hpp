// Extended attributes as ext4 stores them (attributes.rst; the kernel's
// fs/ext4/xattr.h, e2fsprogs' lib/ext2fs/ext2_ext_attr.h): first in the
// inode's extra space, the rest in one xattr block.
//
// In the inode, after the 128 ext2 bytes and i_extra_isize:
//   [le32 magic 0xEA020000][entries ...][le32 0][free][values, last first]
//   value offsets count from the first entry (just past the magic).
// In the block (i_file_acl):
//   [32-byte header][entries ...][le32 0][free][values, last first]
//   value offsets count from the block's first byte.
// An entry is 16 bytes and the name's bytes, padded to 4:
//   +0 e_name_len  +1 e_name_index  +2 le16 e_value_offs  +4 le32 e_value_inum
//   +8 le32 e_value_size  +12 le32 e_hash  +16 e_name[e_name_len]
// Values are padded to 4 bytes and placed from the end of the area down,
// the first entry's value last; an empty value has offset 0.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ext/layout.hpp"
#include "libfsio/result.hpp"

namespace ext {

struct Ext4XattrHeader {
  le32 h_magic;        // 0x00: EXT4_XATTR_MAGIC
  le32 h_refcount;     // 0x04: inodes sharing the block
  le32 h_blocks;       // 0x08: always 1
  le32 h_hash;         // 0x0C: xattr_block_hash of the entries
  le32 h_checksum;     // 0x10: metadata_csum: xattr_block_checksum
  le32 h_reserved[3];  // 0x14
};
static_assert(sizeof(Ext4XattrHeader) == 32 && alignof(Ext4XattrHeader) == 1);
static_assert(offsetof(Ext4XattrHeader, h_checksum) == 0x10);

struct Ext4XattrEntry {
  std::uint8_t e_name_len;    // 0x00
  std::uint8_t e_name_index;  // 0x01: EXT4_XATTR_INDEX_*
  le16 e_value_offs;          // 0x02
  le32 e_value_inum;          // 0x04: ea_inode only (never set here)
  le32 e_value_size;          // 0x08
  le32 e_hash;                // 0x0C: xattr_entry_hash (0 in the inode, as the kernel leaves it)
};
static_assert(sizeof(Ext4XattrEntry) == 16 && alignof(Ext4XattrEntry) == 1);
static_assert(offsetof(Ext4XattrEntry, e_hash) == 0x0C);

inline constexpr std::uint32_t EXT4_XATTR_MAGIC = 0xEA020000;
inline constexpr std::uint32_t EXT4_XATTR_REFCOUNT_MAX = 1024;  // the kernel's and e2fsprogs' limit
inline constexpr std::uint8_t EXT4_XATTR_INDEX_USER = 1;
inline constexpr std::uint8_t EXT4_XATTR_INDEX_POSIX_ACL_ACCESS = 2;
inline constexpr std::uint8_t EXT4_XATTR_INDEX_POSIX_ACL_DEFAULT = 3;
inline constexpr std::uint8_t EXT4_XATTR_INDEX_TRUSTED = 4;
inline constexpr std::uint8_t EXT4_XATTR_INDEX_SECURITY = 6;
inline constexpr std::uint8_t EXT4_XATTR_INDEX_SYSTEM = 7;

// One attribute as stored: the name index, the name past its prefix
// ("" for the two ACLs) and the value's bytes (an ACL in ext4's encoding).
struct XattrEntry {
  std::uint8_t index = 0;
  std::string name;
  std::string value;
  bool operator==(const XattrEntry&) const = default;
};

// A full name split as the kernel's handlers do ("user.a" -> 1, "a").
// Errc::unsupported for a name no index covers, a system.* name but the
// two ACLs (system.data is inline data, which we never make), an empty
// suffix or one longer than 255 bytes.
fsio::Result<XattrEntry> split_xattr_name(std::string_view full);

// The order the kernel keeps a block's entries in, and looks them up by
// (xattr_find_entry with `sorted`): index, then name length, then bytes.
bool xattr_before(const XattrEntry& a, const XattrEntry& b);

// Bytes an entry and a value take (EXT4_XATTR_LEN, EXT4_XATTR_SIZE).
inline std::uint32_t xattr_entry_len(std::size_t name_len) {
  return std::uint32_t((16 + name_len + 3) & ~std::size_t(3));
}
inline std::uint32_t xattr_value_len(std::size_t size) { return std::uint32_t((size + 3) & ~std::size_t(3)); }

// ext4_xattr_hash_entry: over the name's bytes (unsigned, as kernels since
// 6.2 and e2fsprogs 1.47 compute it) h = h<<5 ^ h>>27 ^ byte, then over
// the value padded with zeros to 4 bytes, each le32 word w:
// h = h<<16 ^ h>>16 ^ w.
std::uint32_t xattr_entry_hash(const XattrEntry& e);
// ext4_xattr_rehash: h = h<<16 ^ h>>16 ^ e_hash over the entries in order
// (0 when an entry's hash is 0).
std::uint32_t xattr_block_hash(std::span<const XattrEntry> entries);

// Room for entries and values in a new inode's extra space: s_inode_size
// less 128, less i_extra_isize, less the magic; 0 when no entry could fit.
std::uint32_t ibody_xattr_room(const Layout& l, std::uint32_t extra_isize);

// Which entries go where: `entries` sorted (xattr_before) and taken in
// that order, each into the inode while it still fits there (with the
// 4-byte end mark), the rest into the block in the same order.
struct XattrPlacement {
  std::vector<XattrEntry> ibody, block;
};
// Errc::unsupported when the rest does not fit one block ("xattrs of N
// bytes ..."; the kernel's limit without ea_inode); the caller names the file.
fsio::Result<XattrPlacement> place_xattrs(std::vector<XattrEntry> entries, std::uint32_t ibody_room,
                                          std::uint32_t block_size);

// `room`: the inode's bytes from 128 + i_extra_isize to its end. Writes
// the magic, the entries and their values; the rest is zeroed.
void write_ibody_xattrs(std::span<std::byte> room, const std::vector<XattrEntry>& entries);
// A whole xattr block (h_checksum 0: set it with xattr_block_checksum
// once the block's number and refcount are final).
std::vector<std::byte> encode_xattr_block(const std::vector<XattrEntry>& entries, std::uint32_t block_size);
// ext2fs_ext_attr_block_csum: crc32c of the seed, the le64 block number and
// the whole block with h_checksum taken as 0.
std::uint32_t xattr_block_checksum(std::span<const std::byte> block, std::uint64_t blocknr, std::uint32_t seed);

}  // namespace ext
