// ext4's xattr encoding (see xattr.hpp).
#include "ext/xattr.hpp"

#include <algorithm>
#include <cstring>

#include "ext/crc.hpp"
#include "ext/inode.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint32_t kEntryEnd = 4;  // the le32 0 after the last entry
constexpr std::size_t kMaxNameLen = 255;

struct Prefix {
  std::string_view prefix;
  std::uint8_t index;
};
// The kernel's handlers (fs/ext4/xattr.c ext4_xattr_handler_map); the two
// ACLs are whole names with an empty suffix.
constexpr Prefix kPrefixes[] = {
    {"user.", EXT4_XATTR_INDEX_USER},
    {"trusted.", EXT4_XATTR_INDEX_TRUSTED},
    {"security.", EXT4_XATTR_INDEX_SECURITY},
    {"system.", EXT4_XATTR_INDEX_SYSTEM},
};

// Total bytes entries and values take.
std::uint64_t need(const XattrEntry& e) { return xattr_entry_len(e.name.size()) + xattr_value_len(e.value.size()); }

// Entries from `first` (past a header or the magic), values from the end
// of `area` down; offsets counted from `base` bytes into `area`.
void lay_out(std::span<std::byte> area, std::size_t first, std::size_t base, const std::vector<XattrEntry>& entries,
             bool hashes) {
  std::size_t at = first, end = area.size();
  for (const XattrEntry& e : entries) {
    Ext4XattrEntry raw{};
    raw.e_name_len = std::uint8_t(e.name.size());
    raw.e_name_index = e.index;
    raw.e_value_size = std::uint32_t(e.value.size());
    if (!e.value.empty()) {
      end -= xattr_value_len(e.value.size());
      std::memcpy(area.data() + end, e.value.data(), e.value.size());
      raw.e_value_offs = std::uint16_t(end - base);
    }
    raw.e_hash = hashes ? xattr_entry_hash(e) : 0;
    fsio::store(area, raw, at);
    std::memcpy(area.data() + at + sizeof raw, e.name.data(), e.name.size());
    at += xattr_entry_len(e.name.size());
  }
}

}  // namespace

fsio::Result<XattrEntry> split_xattr_name(std::string_view full) {
  XattrEntry e;
  if (full == "system.posix_acl_access") e.index = EXT4_XATTR_INDEX_POSIX_ACL_ACCESS;
  else if (full == "system.posix_acl_default") e.index = EXT4_XATTR_INDEX_POSIX_ACL_DEFAULT;
  if (e.index != 0) return e;
  for (const Prefix& p : kPrefixes) {
    if (!full.starts_with(p.prefix)) continue;
    e.index = p.index;
    e.name = std::string(full.substr(p.prefix.size()));
    break;
  }
  const std::string quoted = "xattr '" + std::string(full) + "'";
  if (e.index == 0) return make_error(Errc::unsupported, quoted + ": a namespace ext4 has no index for");
  if (e.index == EXT4_XATTR_INDEX_SYSTEM)
    return make_error(Errc::unsupported, quoted + ": of the system namespace ext4 holds only the POSIX ACLs");
  if (e.name.empty() || e.name.size() > kMaxNameLen || e.name.find('\0') != std::string::npos)
    return make_error(Errc::unsupported, quoted + ": a name of " + std::to_string(e.name.size()) +
                                             " bytes past its prefix (ext4 holds 1 to 255, no NUL)");
  return e;
}

bool xattr_before(const XattrEntry& a, const XattrEntry& b) {
  if (a.index != b.index) return a.index < b.index;
  if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
  return std::memcmp(a.name.data(), b.name.data(), a.name.size()) < 0;
}

std::uint32_t xattr_entry_hash(const XattrEntry& e) {
  std::uint32_t h = 0;
  for (const char c : e.name) h = (h << 5) ^ (h >> 27) ^ std::uint8_t(c);
  for (std::size_t i = 0; i < e.value.size(); i += 4) {
    std::uint32_t w = 0;
    for (std::size_t k = 0; k < 4 && i + k < e.value.size(); ++k)
      w |= std::uint32_t(std::uint8_t(e.value[i + k])) << (8 * k);
    h = (h << 16) ^ (h >> 16) ^ w;
  }
  return h;
}

std::uint32_t xattr_block_hash(std::span<const XattrEntry> entries) {
  std::uint32_t h = 0;
  for (const XattrEntry& e : entries) {
    const std::uint32_t eh = xattr_entry_hash(e);
    if (eh == 0) return 0;
    h = (h << 16) ^ (h >> 16) ^ eh;
  }
  return h;
}

std::uint32_t ibody_xattr_room(const Layout& l, std::uint32_t extra_isize) {
  const std::uint64_t used = std::uint64_t(kGoodOldInodeSize) + extra_isize + 4;
  if (l.inode_size <= used + kEntryEnd) return 0;
  return std::uint32_t(l.inode_size - used);
}

fsio::Result<XattrPlacement> place_xattrs(std::vector<XattrEntry> entries, std::uint32_t ibody_room,
                                          std::uint32_t block_size) {
  std::sort(entries.begin(), entries.end(), xattr_before);
  XattrPlacement out;
  std::uint64_t inode_used = kEntryEnd, block_used = sizeof(Ext4XattrHeader) + kEntryEnd, total = 0;
  for (XattrEntry& e : entries) {
    total += need(e);
    if (inode_used + need(e) <= ibody_room) {
      inode_used += need(e);
      out.ibody.push_back(std::move(e));
    } else {
      block_used += need(e);
      out.block.push_back(std::move(e));
    }
  }
  if (block_used > block_size)
    return make_error(Errc::unsupported,
                      "xattrs of " + std::to_string(total) + " bytes (entries and values, padded): " +
                          std::to_string(inode_used - kEntryEnd) + " fit the inode's " + std::to_string(ibody_room) +
                          " bytes, and the other " + std::to_string(block_used - sizeof(Ext4XattrHeader) - kEntryEnd) +
                          " do not fit the " + std::to_string(block_size - sizeof(Ext4XattrHeader) - kEntryEnd) +
                          " of one xattr block (ext4 holds one block per inode; ea_inode is not supported)");
  return out;
}

void write_ibody_xattrs(std::span<std::byte> room, const std::vector<XattrEntry>& entries) {
  std::fill(room.begin(), room.end(), std::byte{0});
  if (entries.empty()) return;
  fsio::store(room, le32(EXT4_XATTR_MAGIC), 0);
  lay_out(room, 4, 4, entries, false);
}

std::vector<std::byte> encode_xattr_block(const std::vector<XattrEntry>& entries, std::uint32_t block_size) {
  std::vector<std::byte> block(block_size, std::byte{0});
  Ext4XattrHeader h{};
  h.h_magic = EXT4_XATTR_MAGIC;
  h.h_refcount = 1;
  h.h_blocks = 1;
  h.h_hash = xattr_block_hash(entries);
  fsio::store(std::span<std::byte>(block), h, 0);
  lay_out(block, sizeof h, 0, entries, true);
  return block;
}

std::uint32_t xattr_block_checksum(std::span<const std::byte> block, std::uint64_t blocknr, std::uint32_t seed) {
  const le64 nr(blocknr);
  std::uint32_t crc = crc32c_raw(seed, std::as_bytes(std::span(&nr, 1)));
  crc = crc32c_raw(crc, block.first(offsetof(Ext4XattrHeader, h_checksum)));
  const std::byte zero[4] = {};
  crc = crc32c_raw(crc, zero);
  return crc32c_raw(crc, block.subspan(offsetof(Ext4XattrHeader, h_checksum) + 4));
}

}  // namespace ext
