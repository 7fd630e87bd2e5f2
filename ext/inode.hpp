// Inodes: s_inode_size bytes in the inode table of their group; the first
// 128 are the original ext2 inode, then i_extra_isize bytes of ext4 fields
// (32 normally), then in-inode extended attributes (inodes.rst).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ext/layout.hpp"

namespace ext {

struct Ext4Inode {
  le16 i_mode;             // 0x00
  le16 i_uid;              // 0x02
  le32 i_size_lo;          // 0x04
  le32 i_atime;            // 0x08
  le32 i_ctime;            // 0x0C
  le32 i_mtime;            // 0x10
  le32 i_dtime;            // 0x14
  le16 i_gid;              // 0x18
  le16 i_links_count;      // 0x1A
  le32 i_blocks_lo;        // 0x1C: 512-byte units (fs blocks with HUGE_FILE_FL)
  le32 i_flags;            // 0x20
  le32 l_i_version;        // 0x24
  le32 i_block[15];        // 0x28: extent root, block map, or symlink target
  le32 i_generation;       // 0x64
  le32 i_file_acl_lo;      // 0x68
  le32 i_size_high;        // 0x6C
  le32 i_obso_faddr;       // 0x70
  le16 l_i_blocks_high;    // 0x74
  le16 l_i_file_acl_high;  // 0x76
  le16 l_i_uid_high;       // 0x78
  le16 l_i_gid_high;       // 0x7A
  le16 l_i_checksum_lo;    // 0x7C
  le16 l_i_reserved;       // 0x7E
  // Large inodes (s_inode_size > 128) only:
  le16 i_extra_isize;   // 0x80
  le16 i_checksum_hi;   // 0x82
  le32 i_ctime_extra;   // 0x84: (nsec << 2) | epoch bits
  le32 i_mtime_extra;   // 0x88
  le32 i_atime_extra;   // 0x8C
  le32 i_crtime;        // 0x90
  le32 i_crtime_extra;  // 0x94
  le32 i_version_hi;    // 0x98
  le32 i_projid;        // 0x9C
};
static_assert(sizeof(Ext4Inode) == 160 && alignof(Ext4Inode) == 1);
static_assert(offsetof(Ext4Inode, i_blocks_lo) == 0x1C);
static_assert(offsetof(Ext4Inode, i_flags) == 0x20);
static_assert(offsetof(Ext4Inode, i_block) == 0x28);
static_assert(offsetof(Ext4Inode, i_generation) == 0x64);
static_assert(offsetof(Ext4Inode, i_size_high) == 0x6C);
static_assert(offsetof(Ext4Inode, l_i_blocks_high) == 0x74);
static_assert(offsetof(Ext4Inode, l_i_checksum_lo) == 0x7C);
static_assert(offsetof(Ext4Inode, i_extra_isize) == 0x80);
static_assert(offsetof(Ext4Inode, i_checksum_hi) == 0x82);
static_assert(offsetof(Ext4Inode, i_crtime) == 0x90);
static_assert(offsetof(Ext4Inode, i_projid) == 0x9C);

inline constexpr std::uint32_t kGoodOldInodeSize = 128;
inline constexpr std::uint32_t EXT2_ROOT_INO = 2;
inline constexpr std::uint32_t EXT2_RESIZE_INO = 7;
inline constexpr std::uint32_t EXT4_JOURNAL_INO = 8;

// i_mode file types (S_IF*).
inline constexpr std::uint16_t S_IFMT_ = 0xF000;
inline constexpr std::uint16_t S_IFREG_ = 0x8000;
inline constexpr std::uint16_t S_IFDIR_ = 0x4000;
inline constexpr std::uint16_t S_IFLNK_ = 0xA000;

// An i_mode's file type in the two forms fsio says it, both from one table
// (inode.cpp): the word of extwb's JSON ("file", "dir", "symlink",
// "chardev", "blockdev", "fifo", "socket"; "unknown" for another S_IFMT)
// and the words of a message ("a regular file", "a directory", ...; "an
// inode of unknown type 0x3000").
std::string file_type_word(std::uint16_t mode);
std::string file_type_prose(std::uint16_t mode);

// i_flags
inline constexpr std::uint32_t EXT4_SECRM_FL = 0x00000001;
inline constexpr std::uint32_t EXT4_COMPR_FL = 0x00000004;
inline constexpr std::uint32_t EXT4_IMMUTABLE_FL = 0x00000010;
inline constexpr std::uint32_t EXT4_APPEND_FL = 0x00000020;
inline constexpr std::uint32_t EXT4_ENCRYPT_FL = 0x00000800;
inline constexpr std::uint32_t EXT4_INDEX_FL = 0x00001000;
inline constexpr std::uint32_t EXT4_HUGE_FILE_FL = 0x00040000;
inline constexpr std::uint32_t EXT4_EXTENTS_FL = 0x00080000;
inline constexpr std::uint32_t EXT4_VERITY_FL = 0x00100000;
inline constexpr std::uint32_t EXT4_EA_INODE_FL = 0x00200000;
inline constexpr std::uint32_t EXT4_INLINE_DATA_FL = 0x10000000;
inline constexpr std::uint32_t EXT4_CASEFOLD_FL = 0x40000000;

// An inode as read from its table: its number, the whole s_inode_size bytes
// (so in-inode xattrs survive a rewrite) and accessors for the fields.
struct Inode {
  std::uint32_t ino = 0;
  std::vector<std::byte> raw;  // s_inode_size bytes

  Ext4Inode fields() const;             // first 160 bytes; missing ones read as 0
  void set_fields(const Ext4Inode& f);  // writes back the bytes that exist
  // The fields read most (every directory add asks the mode, flags and
  // generation of its directory), loaded alone rather than through fields().
  std::uint16_t mode() const { return field<le16>(offsetof(Ext4Inode, i_mode)); }
  bool is_dir() const { return (mode() & S_IFMT_) == S_IFDIR_; }
  bool is_reg() const { return (mode() & S_IFMT_) == S_IFREG_; }
  bool is_symlink() const { return (mode() & S_IFMT_) == S_IFLNK_; }
  std::uint32_t flags() const { return field<le32>(offsetof(Ext4Inode, i_flags)); }
  std::uint64_t size() const;
  std::uint32_t uid() const;
  std::uint32_t gid() const;
  std::uint32_t generation() const { return field<le32>(offsetof(Ext4Inode, i_generation)); }
  std::uint64_t file_acl(const Layout& l) const;
  // i_blocks in 512-byte units, resolving huge_file's block units.
  std::uint64_t blocks_512(const Layout& l) const;
  std::uint32_t extra_isize() const;  // 0 for 128-byte inodes
  template <typename T>
  decltype(T{}.get()) field(std::size_t off) const {  // 0 where raw is short, as fields() reads it
    return raw.size() >= off + sizeof(T) ? fsio::load<T>(raw, off).get() : 0;
  }
  std::span<const std::byte, 60> i_block() const {
    return std::span<const std::byte, 60>(raw.data() + offsetof(Ext4Inode, i_block), 60);
  }
};

// The inode checksum (inodes.rst, csum.c ext2fs_inode_csum): crc32c of the
// seed, le32 ino, le32 generation, and the whole inode with l_i_checksum_lo
// and (when i_extra_isize reaches it) i_checksum_hi zeroed. 32 bits when the
// hi half exists, else the low 16.
std::uint32_t inode_checksum(const Inode& inode, const Layout& l);
// Does the stored checksum match? (true without metadata_csum)
bool inode_checksum_ok(const Inode& inode, const Layout& l);
// Stores the checksum in the inode.
void set_inode_checksum(Inode& inode, const Layout& l);

// Sanity of what the rest of the code relies on: i_extra_isize fits,
// checksum (metadata_csum), size of a directory fits 32 bits without
// large_dir. Errc::corrupt names the inode, field and value.
fsio::Status check_inode(const Inode& inode, const Layout& l);

// Seconds and nanoseconds of a timestamp with its _extra word (inodes.rst
// "Inode Timestamps": low 2 bits extend the epoch, the rest are ns << 2).
struct Timestamp {
  std::int64_t sec = 0;
  std::uint32_t nsec = 0;
};
Timestamp decode_time(std::uint32_t seconds, std::uint32_t extra, bool has_extra);
std::uint32_t encode_time_extra(std::int64_t sec, std::uint32_t nsec);

// The seconds the inodes of a filesystem can hold. i_*time is signed
// 32-bit; the two epoch bits of the _extra word add 0..3 times 2^32 to it
// (the kernel's ext4_decode_extra_time: sec = (s32)i_time + (epoch << 32)).
// So inodes with room for the _extra words (s_inode_size >= 256, the
// i_extra_isize we give new inodes) hold -2^31 .. 3 * 2^32 + 2^31 - 1 =
// 0x37FFFFFFF (1901-12-13 .. 2446-05-10 UTC); 128-byte inodes hold
// -2^31 .. 2^31 - 1 (1901-12-13 .. 2038-01-19). Past the end a time wraps
// round: 0x380000000 would read back as 1901.
struct TimeLimits {
  std::int64_t min = 0, max = 0;
};
TimeLimits time_limits(const Layout& l);
// Errc::invalid_argument naming `what` (e.g. "--mtime 15032385536") and the
// limits when `sec` does not fit the filesystem's inodes.
fsio::Status check_time(const Layout& l, std::int64_t sec, const std::string& what);

}  // namespace ext
