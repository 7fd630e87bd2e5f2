// FAT entry codecs and the in-memory FatTable (see table.hpp for the layout).
#include "fat/table.hpp"

#include <bit>
#include <string>

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

std::uint32_t byte_at(std::span<const std::byte> s, std::uint64_t i) {
  return std::to_integer<std::uint32_t>(s[i]);
}

std::uint32_t load32(std::span<const std::byte> s, std::uint64_t off) {
  return byte_at(s, off) | byte_at(s, off + 1) << 8 | byte_at(s, off + 2) << 16 |
         byte_at(s, off + 3) << 24;
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
    case FatType::fat16:
      return byte_at(fat, off) | byte_at(fat, off + 1) << 8;
    case FatType::fat32:
      return load32(fat, off) & 0x0FFFFFFF;
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
    case FatType::fat32:
      store32(fat, off, (load32(fat, off) & 0xF0000000) | (value & 0x0FFFFFFF));
      return;
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

FatTable::FatTable(const FatLayout& layout)
    : layout_(layout),
      buf_(std::size_t(layout.fat_bytes())),
      dirty_((std::uint64_t(layout.fat_sectors) + 63) / 64, 0) {
  FSIO_ASSERT(layout.fat_sectors > 0 && layout.sector_size >= 512);
  FSIO_ASSERT(entry_offset(layout.type, layout.cluster_count + 2) <= layout.fat_bytes());
}

fsio::Result<FatTable> FatTable::read(fsio::IoQueue& queue, const FatLayout& layout) {
  FatTable table(layout);
  auto plug = queue.plug();
  plug.read(layout.first_fat_offset, table.buf_.span().first(layout.fat_bytes()));
  FSIO_TRY_CTX(plug.finish(), "read FAT at " + std::to_string(layout.first_fat_offset));
  return table;
}

std::uint32_t FatTable::get(std::uint32_t cluster) const {
  FSIO_ASSERT(cluster < layout_.cluster_count + 2);
  return get_entry(layout_.type, bytes(), cluster);
}

void FatTable::set(std::uint32_t cluster, std::uint32_t value) {
  FSIO_ASSERT(cluster < layout_.cluster_count + 2);
  set_entry(layout_.type, buf_.span().first(layout_.fat_bytes()), cluster, value);
  mark(entry_offset(layout_.type, cluster), entry_span(layout_.type));
}

void FatTable::mark(std::uint64_t byte_offset, std::uint32_t length) {
  const std::uint64_t first = byte_offset / layout_.sector_size;
  const std::uint64_t last = (byte_offset + length - 1) / layout_.sector_size;
  for (std::uint64_t s = first; s <= last && s < layout_.fat_sectors; ++s) {
    std::uint64_t& word = dirty_[s / 64];
    const std::uint64_t bit = std::uint64_t(1) << (s % 64);
    if (!(word & bit)) {
      word |= bit;
      ++dirty_count_;
    }
  }
}

bool FatTable::is_dirty(std::uint32_t sector) const {
  FSIO_ASSERT(sector < layout_.fat_sectors);
  return (dirty_[sector / 64] >> (sector % 64)) & 1;
}

void FatTable::clear_dirty() {
  std::fill(dirty_.begin(), dirty_.end(), 0);
  dirty_count_ = 0;
}

std::size_t FatTable::for_each_dirty_run(
    const std::function<void(std::uint64_t, std::span<const std::byte>)>& write) const {
  if (dirty_count_ == 0) return 0;
  // Collect the runs once, then replay them for every copy.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;  // first sector, count
  std::uint32_t s = 0;
  while (s < layout_.fat_sectors) {
    const std::uint64_t word = dirty_[s / 64] >> (s % 64);
    if (word == 0) {  // skip the rest of this 64-sector word
      s = (s / 64 + 1) * 64;
      continue;
    }
    s += std::countr_zero(word);
    const std::uint32_t start = s;
    while (s < layout_.fat_sectors && is_dirty(s)) ++s;
    runs.emplace_back(start, s - start);
  }
  const auto all = bytes();
  const std::uint64_t ss = layout_.sector_size;
  for (std::uint32_t copy = 0; copy < layout_.num_fats; ++copy)
    for (auto [start, count] : runs)
      write(layout_.copy_offset(copy) + start * ss, all.subspan(start * ss, count * ss));
  return runs.size() * layout_.num_fats;
}

std::size_t FatTable::queue_dirty(fsio::IoQueue::Plug& plug) const {
  return for_each_dirty_run(
      [&plug](std::uint64_t off, std::span<const std::byte> b) { plug.write(off, b); });
}

}  // namespace fat
