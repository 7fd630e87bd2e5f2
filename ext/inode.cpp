// Inode accessors, checksum and sanity checks.
#include "ext/inode.hpp"

#include <algorithm>
#include <cstring>

#include "ext/crc.hpp"
#include "libfsio/size.hpp"

namespace ext {

namespace {

// S_IFMT values from Linux's include/uapi/linux/stat.h.
struct FileType {
  std::uint16_t ifmt;
  const char* word;
  const char* prose;
};
constexpr FileType kFileTypes[] = {
    {S_IFREG_, "file", "a regular file"},     {S_IFDIR_, "dir", "a directory"},
    {S_IFLNK_, "symlink", "a symbolic link"}, {0x2000, "chardev", "a character device"},
    {0x6000, "blockdev", "a block device"},   {0x1000, "fifo", "a fifo"},
    {0xC000, "socket", "a socket"},
};

const FileType* file_type(std::uint16_t mode) {
  for (const FileType& t : kFileTypes)
    if ((mode & S_IFMT_) == t.ifmt) return &t;
  return nullptr;
}

}  // namespace

std::string file_type_word(std::uint16_t mode) {
  const FileType* t = file_type(mode);
  return t ? t->word : "unknown";
}

std::string file_type_prose(std::uint16_t mode) {
  const FileType* t = file_type(mode);
  return t ? t->prose : "an inode of unknown type " + fsio::format_hex(mode & S_IFMT_, true);
}

Ext4Inode Inode::fields() const {
  Ext4Inode f{};
  std::memcpy(&f, raw.data(), std::min(raw.size(), sizeof f));
  return f;
}

void Inode::set_fields(const Ext4Inode& f) { std::memcpy(raw.data(), &f, std::min(raw.size(), sizeof f)); }

std::uint64_t Inode::size() const {
  const auto f = fields();
  return f.i_size_lo | std::uint64_t(f.i_size_high) << 32;
}

std::uint32_t Inode::uid() const {
  const auto f = fields();
  return f.i_uid | std::uint32_t(f.l_i_uid_high) << 16;
}

std::uint32_t Inode::gid() const {
  const auto f = fields();
  return f.i_gid | std::uint32_t(f.l_i_gid_high) << 16;
}

std::uint64_t Inode::file_acl(const Layout& l) const {
  const auto f = fields();
  return f.i_file_acl_lo | (l.is_64bit() ? std::uint64_t(f.l_i_file_acl_high) << 32 : 0);
}

std::uint64_t Inode::blocks_512(const Layout& l) const {
  const auto f = fields();
  std::uint64_t n = f.i_blocks_lo;
  if (l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_HUGE_FILE)) {
    n |= std::uint64_t(f.l_i_blocks_high) << 32;
    if (f.i_flags & EXT4_HUGE_FILE_FL) n *= l.block_size / 512;
  }
  return n;
}

std::uint32_t Inode::extra_isize() const {
  if (raw.size() <= kGoodOldInodeSize) return 0;
  return fields().i_extra_isize;
}

namespace {

// Does the inode have room for i_checksum_hi (i_extra_isize covers 0x82..0x84)?
bool has_csum_hi(const Inode& inode) {
  return inode.raw.size() > kGoodOldInodeSize &&
         inode.extra_isize() >= offsetof(Ext4Inode, i_checksum_hi) + 2 - kGoodOldInodeSize;
}

}  // namespace

std::uint32_t inode_checksum(const Inode& inode, const Layout& l) {
  const std::byte zero[2] = {};
  const std::span<const std::byte> raw(inode.raw);
  constexpr std::size_t lo = offsetof(Ext4Inode, l_i_checksum_lo);
  constexpr std::size_t hi = offsetof(Ext4Inode, i_checksum_hi);
  std::uint32_t c = crc32c_raw_le32(l.csum_seed, inode.ino);
  c = crc32c_raw_le32(c, inode.generation());
  c = crc32c_raw(c, raw.first(lo));
  c = crc32c_raw(c, zero, 2);
  if (raw.size() <= kGoodOldInodeSize) {
    c = crc32c_raw(c, raw.subspan(lo + 2));
    return c & 0xFFFF;
  }
  c = crc32c_raw(c, raw.subspan(lo + 2, hi - lo - 2));
  if (has_csum_hi(inode)) {
    c = crc32c_raw(c, zero, 2);
    c = crc32c_raw(c, raw.subspan(hi + 2));
    return c;
  }
  c = crc32c_raw(c, raw.subspan(hi));
  return c & 0xFFFF;
}

bool inode_checksum_ok(const Inode& inode, const Layout& l) {
  if (!l.metadata_csum()) return true;
  const auto f = inode.fields();
  std::uint32_t stored = f.l_i_checksum_lo;
  if (has_csum_hi(inode)) stored |= std::uint32_t(f.i_checksum_hi) << 16;
  return stored == inode_checksum(inode, l);
}

void set_inode_checksum(Inode& inode, const Layout& l) {
  if (!l.metadata_csum()) return;
  const std::uint32_t c = inode_checksum(inode, l);
  auto f = inode.fields();
  f.l_i_checksum_lo = std::uint16_t(c);
  if (has_csum_hi(inode)) f.i_checksum_hi = std::uint16_t(c >> 16);
  inode.set_fields(f);
}

fsio::Status check_inode(const Inode& inode, const Layout& l) {
  const std::string where = "ext inode " + std::to_string(inode.ino) + ": ";
  if (inode.raw.size() > kGoodOldInodeSize) {
    const std::uint32_t extra = inode.extra_isize();
    if (extra % 4 != 0 || kGoodOldInodeSize + extra > inode.raw.size())
      return fsio::make_error(fsio::Errc::corrupt, where + "i_extra_isize " + std::to_string(extra) +
                                                       " does not fit a " + std::to_string(inode.raw.size()) +
                                                       "-byte inode");
  }
  if (!inode_checksum_ok(inode, l)) {
    const auto f = inode.fields();
    std::uint32_t stored = f.l_i_checksum_lo;
    if (has_csum_hi(inode)) stored |= std::uint32_t(f.i_checksum_hi) << 16;
    return fsio::make_error(fsio::Errc::corrupt, where + "checksum " + std::to_string(stored) +
                                                     " does not match the contents (" +
                                                     std::to_string(inode_checksum(inode, l)) + ")");
  }
  return {};
}

Timestamp decode_time(std::uint32_t seconds, std::uint32_t extra, bool has_extra) {
  Timestamp t;
  t.sec = std::int32_t(seconds);  // signed 32-bit before the epoch bits
  if (has_extra) {
    t.sec += std::int64_t(extra & 3) << 32;
    t.nsec = extra >> 2;
  }
  return t;
}

std::uint32_t encode_time_extra(std::int64_t sec, std::uint32_t nsec) {
  // The epoch bits count how many 2^32 the signed 32-bit seconds are off.
  const std::int64_t epoch = (sec - std::int32_t(std::uint32_t(sec))) >> 32;
  return (nsec << 2) | std::uint32_t(epoch & 3);
}

TimeLimits time_limits(const Layout& l) {
  constexpr std::int64_t lo = -(std::int64_t(1) << 31), hi32 = (std::int64_t(1) << 31) - 1;
  if (l.inode_size <= kGoodOldInodeSize) return {lo, hi32};
  return {lo, hi32 + 3 * (std::int64_t(1) << 32)};
}

fsio::Status check_time(const Layout& l, std::int64_t sec, const std::string& what) {
  const TimeLimits t = time_limits(l);
  if (sec >= t.min && sec <= t.max) return {};
  const bool extra = l.inode_size > kGoodOldInodeSize;
  return fsio::make_error(
      fsio::Errc::invalid_argument,
      what + ": out of the range this filesystem's " + std::to_string(l.inode_size) + "-byte inodes can store, " +
          std::to_string(t.min) + " to " + std::to_string(t.max) +
          (extra ? " (1901-12-13 to 2446-05-10 UTC)" : " (1901-12-13 to 2038-01-19 UTC; no room for the epoch bits)") +
          "; it would wrap round to another date");
}

}  // namespace ext
