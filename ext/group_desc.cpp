// Group descriptors: decode, encode, checksum, sanity.
#include "ext/group_desc.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ext/crc.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

// A full 64-byte view of a descriptor of any size: the missing _hi halves read as 0.
Ext4GroupDesc view(std::span<const std::byte> raw) {
  Ext4GroupDesc d{};
  std::memcpy(&d, raw.data(), std::min(raw.size(), sizeof d));
  return d;
}

}  // namespace

GroupDesc decode_group_desc(std::span<const std::byte> raw, const Layout& l) {
  const Ext4GroupDesc d = view(raw.first(l.desc_size));
  const bool wide = l.desc_size >= 64;
  auto hi32 = [&](const le32& h) { return wide ? std::uint64_t(h) << 32 : 0; };
  auto hi16 = [&](const le16& h) { return wide ? std::uint32_t(h) << 16 : 0u; };
  GroupDesc g;
  g.block_bitmap = d.bg_block_bitmap_lo | hi32(d.bg_block_bitmap_hi);
  g.inode_bitmap = d.bg_inode_bitmap_lo | hi32(d.bg_inode_bitmap_hi);
  g.inode_table = d.bg_inode_table_lo | hi32(d.bg_inode_table_hi);
  g.free_blocks = d.bg_free_blocks_count_lo | hi16(d.bg_free_blocks_count_hi);
  g.free_inodes = d.bg_free_inodes_count_lo | hi16(d.bg_free_inodes_count_hi);
  g.used_dirs = d.bg_used_dirs_count_lo | hi16(d.bg_used_dirs_count_hi);
  g.itable_unused = d.bg_itable_unused_lo | hi16(d.bg_itable_unused_hi);
  g.flags = d.bg_flags;
  g.block_bitmap_csum = d.bg_block_bitmap_csum_lo | hi16(d.bg_block_bitmap_csum_hi);
  g.inode_bitmap_csum = d.bg_inode_bitmap_csum_lo | hi16(d.bg_inode_bitmap_csum_hi);
  g.checksum = d.bg_checksum;
  return g;
}

void encode_group_desc(const GroupDesc& g, std::span<std::byte> raw, const Layout& l) {
  Ext4GroupDesc d = view(raw.first(l.desc_size));
  d.bg_block_bitmap_lo = std::uint32_t(g.block_bitmap);
  d.bg_inode_bitmap_lo = std::uint32_t(g.inode_bitmap);
  d.bg_inode_table_lo = std::uint32_t(g.inode_table);
  d.bg_free_blocks_count_lo = std::uint16_t(g.free_blocks);
  d.bg_free_inodes_count_lo = std::uint16_t(g.free_inodes);
  d.bg_used_dirs_count_lo = std::uint16_t(g.used_dirs);
  d.bg_itable_unused_lo = std::uint16_t(g.itable_unused);
  d.bg_flags = g.flags;
  d.bg_block_bitmap_csum_lo = std::uint16_t(g.block_bitmap_csum);
  d.bg_inode_bitmap_csum_lo = std::uint16_t(g.inode_bitmap_csum);
  d.bg_checksum = g.checksum;
  if (l.desc_size >= 64) {
    d.bg_block_bitmap_hi = std::uint32_t(g.block_bitmap >> 32);
    d.bg_inode_bitmap_hi = std::uint32_t(g.inode_bitmap >> 32);
    d.bg_inode_table_hi = std::uint32_t(g.inode_table >> 32);
    d.bg_free_blocks_count_hi = std::uint16_t(g.free_blocks >> 16);
    d.bg_free_inodes_count_hi = std::uint16_t(g.free_inodes >> 16);
    d.bg_used_dirs_count_hi = std::uint16_t(g.used_dirs >> 16);
    d.bg_itable_unused_hi = std::uint16_t(g.itable_unused >> 16);
    d.bg_block_bitmap_csum_hi = std::uint16_t(g.block_bitmap_csum >> 16);
    d.bg_inode_bitmap_csum_hi = std::uint16_t(g.inode_bitmap_csum >> 16);
  }
  std::memcpy(raw.data(), &d, std::min<std::size_t>(l.desc_size, sizeof d));
}

std::uint16_t group_desc_checksum(std::span<const std::byte> raw, std::uint32_t g, const Layout& l,
                                  const std::uint8_t (&uuid)[16]) {
  constexpr std::size_t at = offsetof(Ext4GroupDesc, bg_checksum);
  raw = raw.first(l.desc_size);
  if (l.metadata_csum()) {
    const std::byte zero[2] = {};
    std::uint32_t c = crc32c_raw_le32(l.csum_seed, g);
    c = crc32c_raw(c, raw.first(at));
    c = crc32c_raw(c, zero, 2);
    c = crc32c_raw(c, raw.subspan(at + 2));
    return std::uint16_t(c & 0xFFFF);
  }
  if (l.gdt_csum()) {
    std::byte group[4];
    for (int i = 0; i < 4; ++i) group[i] = std::byte(g >> (8 * i));
    std::uint16_t c = crc16(0xFFFF, std::as_bytes(std::span(uuid)));
    c = crc16(c, group);
    c = crc16(c, raw.first(at));
    if (raw.size() > at + 2) c = crc16(c, raw.subspan(at + 2));
    return c;
  }
  return 0;
}

fsio::Status check_group_desc(const GroupDesc& d, std::uint32_t g, const Layout& l) {
  auto bad = [&](const char* field, std::uint64_t v, const char* why) {
    return fsio::make_error(fsio::Errc::corrupt, "ext group descriptor " + std::to_string(g) + ": " + field + " " +
                                                     fsio::format_hex(v, true) + " " + why);
  };
  if (d.block_bitmap < l.first_data_block || d.block_bitmap >= l.blocks_count)
    return bad("bg_block_bitmap", d.block_bitmap, "is outside the filesystem");
  if (d.inode_bitmap < l.first_data_block || d.inode_bitmap >= l.blocks_count)
    return bad("bg_inode_bitmap", d.inode_bitmap, "is outside the filesystem");
  if (d.inode_table < l.first_data_block || d.inode_table > l.blocks_count - l.inode_table_blocks)
    return bad("bg_inode_table", d.inode_table, "is outside the filesystem");
  if (d.free_blocks > l.blocks_in_group(g))
    return bad("bg_free_blocks_count", d.free_blocks, "exceeds the group's blocks");
  if (d.free_inodes > l.inodes_per_group)
    return bad("bg_free_inodes_count", d.free_inodes, "exceeds s_inodes_per_group");
  if (d.used_dirs > l.inodes_per_group) return bad("bg_used_dirs_count", d.used_dirs, "exceeds s_inodes_per_group");
  if (l.group_csum() && d.itable_unused > l.inodes_per_group)
    return bad("bg_itable_unused", d.itable_unused, "exceeds s_inodes_per_group");
  return {};
}

}  // namespace ext
