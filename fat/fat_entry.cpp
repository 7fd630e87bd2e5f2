// FAT entry codecs (see entry.hpp for the byte layout).
#include "fat/fat_entry.hpp"

namespace fat {

const char* fat_type_name(FatType type) {
  switch (type) {
    case FatType::fat12: return "FAT12";
    case FatType::fat16: return "FAT16";
    case FatType::fat32: return "FAT32";
  }
  return "FAT?";
}

namespace {

std::uint32_t byte_at(std::span<const std::byte> s, std::uint64_t i) { return std::to_integer<std::uint32_t>(s[i]); }

std::uint32_t load32(std::span<const std::byte> s, std::uint64_t off) {
  return byte_at(s, off) | byte_at(s, off + 1) << 8 | byte_at(s, off + 2) << 16 | byte_at(s, off + 3) << 24;
}

void store32(std::span<std::byte> s, std::uint64_t off, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[off + i] = std::byte(v >> (8 * i));
}

}  // namespace

std::uint32_t get_entry(FatType type, std::span<const std::byte> fat, std::uint32_t n) {
  const std::uint64_t off = entry_offset(type, n);
  FSIO_ASSERT(off + entry_span(type) <= fat.size());
  switch (type) {
    case FatType::fat12: {
      const std::uint32_t word = byte_at(fat, off) | byte_at(fat, off + 1) << 8;
      return (n & 1) ? word >> 4 : word & 0xFFF;
    }
    case FatType::fat16: return byte_at(fat, off) | byte_at(fat, off + 1) << 8;
    case FatType::fat32: return load32(fat, off) & 0x0FFFFFFF;
  }
  return 0;
}

std::uint32_t get_raw32(std::span<const std::byte> fat, std::uint32_t n) {
  FSIO_ASSERT(std::uint64_t(n) * 4 + 4 <= fat.size());
  return load32(fat, std::uint64_t(n) * 4);
}

void set_entry(FatType type, std::span<std::byte> fat, std::uint32_t n, std::uint32_t value) {
  const std::uint64_t off = entry_offset(type, n);
  FSIO_ASSERT(off + entry_span(type) <= fat.size());
  switch (type) {
    case FatType::fat12: {
      value &= 0xFFF;
      if (n & 1) {  // high nibble of b[off], all of b[off+1]
        fat[off] = std::byte((byte_at(fat, off) & 0x0F) | (value & 0x0F) << 4);
        fat[off + 1] = std::byte(value >> 4);
      } else {  // all of b[off], low nibble of b[off+1]
        fat[off] = std::byte(value & 0xFF);
        fat[off + 1] = std::byte((byte_at(fat, off + 1) & 0xF0) | value >> 8);
      }
      return;
    }
    case FatType::fat16:
      fat[off] = std::byte(value);
      fat[off + 1] = std::byte(value >> 8);
      return;
    case FatType::fat32: store32(fat, off, (load32(fat, off) & 0xF0000000) | (value & 0x0FFFFFFF)); return;
  }
}

EntryKind classify(FatType type, std::uint32_t value) {
  const std::uint32_t mask = entry_mask(type);
  value &= mask;
  if (value == 0) return EntryKind::free;
  if (value == 1) return EntryKind::reserved;
  if (value >= mask - 7) return EntryKind::end_of_chain;  // 0x...FF8-0x...FFF
  if (value == mask - 8) return EntryKind::bad;           // 0x...FF7
  if (value >= mask - 15) return EntryKind::reserved;     // 0x...FF0-0x...FF6
  return EntryKind::next;
}

}  // namespace fat
