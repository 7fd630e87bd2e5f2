// FatTable: on-demand FAT blocks, dirty sectors, streaming (see table.hpp).
#include "fat/table.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

fsio::Result<FatTable> FatTable::open(fsio::IoQueue& queue, const Layout& l, const FatCacheOptions& o) {
  const std::uint32_t ss = l.sector_size;
  if (ss < 512 || !std::has_single_bit(ss))
    return make_error(Errc::corrupt, "FAT: sector size " + std::to_string(ss) + " is not a power of two >= 512");
  if (l.fat_sectors == 0 || l.num_fats == 0)
    return make_error(Errc::corrupt, "FAT: " + std::to_string(l.num_fats) + " copies of " +
                                         std::to_string(l.fat_sectors) + " sectors hold no table");
  const std::uint64_t need = entries_bytes(l.type, l.entry_count());
  if (need > l.fat_bytes())
    return make_error(Errc::corrupt, "FAT: " + std::to_string(l.fat_sectors) + " sectors per copy hold " +
                                         std::to_string(l.fat_bytes()) + " bytes, but " +
                                         std::to_string(l.cluster_count) + " clusters need " + std::to_string(need));
  if (l.active_fat() >= l.num_fats)
    return make_error(Errc::corrupt, "FAT: active copy " + std::to_string(l.active_fat()) + " (BPB_ExtFlags " +
                                         std::to_string(l.ext_flags) + ") but only " + std::to_string(l.num_fats) +
                                         " copies");
  const std::uint32_t source = o.read_copy.value_or(l.active_fat());
  if (source >= l.num_fats)
    return make_error(Errc::invalid_argument, "FAT: copy " + std::to_string(source) + " asked for, but only " +
                                                  std::to_string(l.num_fats) + " copies");
  const auto& dev = queue.device();
  if (dev.direct() && dev.topology().dio_offset_align > ss)
    return make_error(Errc::unsupported,
                      "FAT: direct I/O needs " + std::to_string(dev.topology().dio_offset_align) +
                          "-byte alignment but the FAT sector is " + std::to_string(ss) +
                          " bytes; the device must be buffered for it (Device::use_buffered, as Volume::open does)");
  // A FAT12 table (<= 4086 entries, 6129 bytes) is one block, so no entry
  // straddles two blocks; FAT16/32 entries never straddle a sector.
  std::size_t block = std::max<std::size_t>(round_up(std::max<std::size_t>(o.block_bytes, 1), ss), ss);
  if (l.type == FatType::fat12) block = round_up(need, ss);
  const std::size_t blocks = std::max<std::size_t>(o.cache_bytes / block, 1);
  const std::size_t stream = std::max<std::size_t>(round_up(std::max<std::size_t>(o.stream_bytes, 1), ss), ss);
  return FatTable(queue, l, block, blocks, stream, source);
}

FatTable::FatTable(fsio::IoQueue& queue, const Layout& layout, std::size_t block_bytes, std::size_t cache_blocks,
                   std::size_t stream_bytes, std::uint32_t read_copy)
    : queue_(&queue),
      layout_(layout),
      block_bytes_(block_bytes),
      cache_blocks_(cache_blocks),
      stream_bytes_(stream_bytes),
      read_copy_(read_copy),
      dirty_((std::uint64_t(layout.fat_sectors) + 63) / 64, 0) {}

std::uint64_t FatTable::used_bytes() const {
  return round_up(entries_bytes(layout_.type, layout_.entry_count()), layout_.sector_size);
}

fsio::Status FatTable::check_entry(std::uint32_t n) const {
  if (n >= entry_count())
    return make_error(Errc::invalid_argument, "FAT entry " + std::to_string(n) + " is past the last entry " +
                                                  std::to_string(entry_count() - 1));
  return {};
}

std::span<std::byte> FatTable::block_span(std::uint64_t index, Block& b) {
  const std::uint64_t begin = index * block_bytes_;
  return b.buf.span().first(std::min<std::uint64_t>(block_bytes_, used_bytes() - begin));
}

fsio::Result<FatTable::Block*> FatTable::block(std::uint64_t index) {
  if (index == last_index_) {
    ++stats_.block_hits;
    return last_block_;
  }
  if (auto it = blocks_.find(index); it != blocks_.end()) {
    Block& b = it->second;
    if (!b.dirty) lru_.splice(lru_.begin(), lru_, b.lru);
    ++stats_.block_hits;
    last_index_ = index;
    last_block_ = &b;
    return &b;
  }
  evict_until(1);
  const std::uint64_t begin = index * block_bytes_;
  const std::uint64_t len = std::min<std::uint64_t>(block_bytes_, used_bytes() - begin);
  Block b{fsio::AlignedBuffer(block_bytes_), false, {}};
  const std::uint64_t off = layout_.fat_offset(read_copy_) + begin;
  FSIO_TRY_CTX(queue_->read(off, b.buf.span().first(len)),
               "read FAT copy " + std::to_string(read_copy_) + " at byte " + std::to_string(begin));
  ++stats_.block_reads;
  stats_.bytes_read += len;
  lru_.push_front(index);
  b.lru = lru_.begin();
  Block& stored = blocks_.emplace(index, std::move(b)).first->second;
  last_index_ = index;
  last_block_ = &stored;
  return &stored;
}

fsio::Status FatTable::prefetch(std::span<const std::pair<std::uint32_t, std::uint32_t>> ranges) {
  std::vector<std::uint64_t> want;
  for (auto [first, count] : ranges) {
    if (count == 0) continue;
    FSIO_TRY(check_entry(first));
    const std::uint32_t last =
        std::uint32_t(std::min<std::uint64_t>(std::uint64_t(first) + count - 1, entry_count() - 1));
    const std::uint64_t b0 = entry_offset(layout_.type, first) / block_bytes_;
    const std::uint64_t b1 = (entry_offset(layout_.type, last) + entry_span(layout_.type) - 1) / block_bytes_;
    for (std::uint64_t b = b0; b <= b1 && b * block_bytes_ < used_bytes(); ++b)
      if (!blocks_.count(b)) want.push_back(b);
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  if (want.size() > cache_blocks_) want.resize(cache_blocks_);
  if (want.empty()) return {};
  evict_until(want.size());  // room first, so evicting cannot drop a block this call reads
  std::vector<Block> fresh;
  fresh.reserve(want.size());
  auto plug = queue_->plug();
  for (std::uint64_t index : want) {
    const std::uint64_t begin = index * block_bytes_;
    const std::uint64_t len = std::min<std::uint64_t>(block_bytes_, used_bytes() - begin);
    fresh.push_back(Block{fsio::AlignedBuffer(block_bytes_), false, {}});
    plug.read(layout_.fat_offset(read_copy_) + begin, fresh.back().buf.span().first(len));
    stats_.bytes_read += len;
  }
  FSIO_TRY_CTX(plug.finish(), "read FAT copy " + std::to_string(read_copy_) + " ahead");
  stats_.block_reads += want.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    lru_.push_front(want[i]);
    fresh[i].lru = lru_.begin();
    blocks_.emplace(want[i], std::move(fresh[i]));
  }
  return {};
}

// Drops least recently used clean blocks until `room` more fit.
void FatTable::evict_until(std::size_t room) {
  while (!lru_.empty() && lru_.size() + room > cache_blocks_) {
    const std::uint64_t victim = lru_.back();
    lru_.pop_back();
    blocks_.erase(victim);
    if (victim == last_index_) {
      last_index_ = ~std::uint64_t(0);
      last_block_ = nullptr;
    }
  }
}

// Entries are linear in a block: entry n of the table is entry n minus the
// block's first entry of the block's bytes (FAT12: one block, so n itself).
std::uint32_t FatTable::local_entry(std::uint32_t n, std::uint64_t index) const {
  if (layout_.type == FatType::fat12) return n;
  return n - std::uint32_t(index * block_bytes_ / (layout_.type == FatType::fat16 ? 2 : 4));
}

fsio::Result<std::uint32_t> FatTable::get(std::uint32_t n) {
  FSIO_TRY(check_entry(n));
  const std::uint64_t off = entry_offset(layout_.type, n);
  const std::uint64_t index = off / block_bytes_;
  Block* b = FSIO_TRY(block(index));
  const std::uint32_t local = local_entry(n, index);
  return get_entry(layout_.type, block_span(index, *b), local);
}

fsio::Result<FatTable::Block*> FatTable::dirty_block(std::uint64_t index) {
  Block* b = FSIO_TRY(block(index));
  if (!b->dirty) {
    b->dirty = true;
    lru_.erase(b->lru);
    dirty_blocks_.emplace(index, b);
  }
  return b;
}

fsio::Status FatTable::set(std::uint32_t n, std::uint32_t value) {
  FSIO_TRY(check_entry(n));
  const std::uint64_t off = entry_offset(layout_.type, n);
  const std::uint64_t index = off / block_bytes_;
  Block* b = FSIO_TRY(dirty_block(index));
  set_entry(layout_.type, block_span(index, *b), local_entry(n, index), value);
  mark(off, entry_span(layout_.type));
  return {};
}

fsio::Status FatTable::set_chain(std::uint32_t first, std::uint32_t count, std::uint32_t last_value) {
  if (count == 0) return {};
  FSIO_TRY(check_entry(first));
  FSIO_TRY(check_entry(std::uint32_t(std::min<std::uint64_t>(std::uint64_t(first) + count - 1, ~0u))));
  if (layout_.type == FatType::fat12) {  // a few thousand entries at most: entry by entry
    for (std::uint32_t n = first; n < first + count; ++n) FSIO_TRY(set(n, n + 1 < first + count ? n + 1 : last_value));
    return {};
  }
  const std::uint32_t width = layout_.type == FatType::fat16 ? 2 : 4;
  const std::uint32_t per_block = std::uint32_t(block_bytes_ / width);
  for (std::uint32_t n = first; n < first + count;) {
    const std::uint64_t index = std::uint64_t(n) / per_block;
    const std::uint32_t stop =
        std::uint32_t(std::min<std::uint64_t>((index + 1) * per_block, std::uint64_t(first) + count));
    Block* b = FSIO_TRY(dirty_block(index));
    const auto span = block_span(index, *b);
    for (std::uint32_t e = n; e < stop; ++e)
      set_entry(layout_.type, span, e - std::uint32_t(index * per_block), e + 1 < first + count ? e + 1 : last_value);
    mark(std::uint64_t(n) * width, (stop - n) * width);
    n = stop;
  }
  return {};
}

void FatTable::mark(std::uint64_t byte_offset, std::uint32_t length) {
  const std::uint64_t ss = layout_.sector_size;
  for (std::uint64_t s = byte_offset / ss; s <= (byte_offset + length - 1) / ss && s < layout_.fat_sectors; ++s) {
    std::uint64_t& word = dirty_[s / 64];
    const std::uint64_t bit = std::uint64_t(1) << (s % 64);
    if (!(word & bit)) {
      word |= bit;
      ++dirty_count_;
    }
  }
}

bool FatTable::is_dirty(std::uint64_t sector) const {
  return sector < layout_.fat_sectors && ((dirty_[sector / 64] >> (sector % 64)) & 1);
}

std::size_t FatTable::for_each_dirty_run(
    const std::function<void(std::uint64_t, std::span<const std::byte>)>& write) const {
  // Runs (first sector, count) inside each dirty block, found once and
  // replayed for every copy.
  struct Run {
    std::uint64_t sector, count;
    const Block* block;
    std::uint64_t block_first_sector;
  };
  std::vector<Run> runs;
  const std::uint64_t ss = layout_.sector_size;
  const std::uint64_t per_block = block_bytes_ / ss;
  for (const auto& [index, b] : dirty_blocks_) {
    const std::uint64_t first = index * per_block;
    const std::uint64_t end = std::min<std::uint64_t>(first + per_block, used_bytes() / ss);
    for (std::uint64_t s = first; s < end;) {
      if (!is_dirty(s)) {
        ++s;
        continue;
      }
      const std::uint64_t start = s;
      while (s < end && is_dirty(s)) ++s;
      runs.push_back({start, s - start, b, first});
    }
  }
  for (std::uint32_t copy = 0; copy < layout_.num_fats; ++copy)
    for (const Run& r : runs)
      write(layout_.fat_offset(copy) + r.sector * ss,
            r.block->buf.span().subspan((r.sector - r.block_first_sector) * ss, r.count * ss));
  return runs.size() * layout_.num_fats;
}

std::size_t FatTable::queue_dirty(fsio::IoQueue::Plug& plug) const {
  return for_each_dirty_run([&plug](std::uint64_t off, std::span<const std::byte> b) { plug.write(off, b); });
}

void FatTable::clear_dirty() {
  for (auto& [index, b] : dirty_blocks_) {
    b->dirty = false;
    lru_.push_front(index);
    b->lru = lru_.begin();
  }
  dirty_blocks_.clear();
  std::fill(dirty_.begin(), dirty_.end(), 0);
  dirty_count_ = 0;
  evict_until(1);
}

fsio::Result<std::size_t> FatTable::flush() {
  auto plug = queue_->plug();
  const std::size_t n = queue_dirty(plug);
  FSIO_TRY_CTX(plug.finish(), "write FAT");
  clear_dirty();
  return n;
}

}  // namespace fat
