// FatTable's whole-table passes: scan, count_free, compare_copies. Each reads
// the table in chunks of stream_bytes (one request per copy per chunk), so
// a 268 MB FAT32 table is 64 reads of 4 MiB, not half a million sectors.
#include <algorithm>
#include <cstring>
#include <string>

#include "fat/table.hpp"

namespace fat {

namespace {

std::uint32_t u16_at(const std::byte* p) {
  return std::to_integer<std::uint32_t>(p[0]) | std::to_integer<std::uint32_t>(p[1]) << 8;
}
std::uint32_t u32_at(const std::byte* p) { return u16_at(p) | u16_at(p + 2) << 16; }

// Decodes entries [from, to) of a chunk whose first byte is entry `base`'s
// (FAT16/32) or the table's first byte (FAT12, where base is 0).
void decode(FatType type, std::span<const std::byte> chunk, std::uint32_t base, std::uint32_t from, std::uint32_t to,
            std::vector<std::uint32_t>& out) {
  out.resize(to - from);
  switch (type) {
    case FatType::fat12:
      for (std::uint32_t e = from; e < to; ++e) out[e - from] = get_entry(type, chunk, e);
      return;
    case FatType::fat16:
      for (std::uint32_t e = from; e < to; ++e) out[e - from] = u16_at(chunk.data() + std::size_t(e - base) * 2);
      return;
    case FatType::fat32:
      for (std::uint32_t e = from; e < to; ++e)
        out[e - from] = u32_at(chunk.data() + std::size_t(e - base) * 4) & 0x0FFFFFFF;
      return;
  }
}

std::uint32_t entry_size(FatType type) { return type == FatType::fat16 ? 2 : 4; }

}  // namespace

std::size_t FatTable::stream_chunk() const {
  // FAT12 is read whole (at most 6 KiB), so no entry straddles two chunks;
  // a small table gets a buffer of its own size, not stream_bytes.
  return layout_.type == FatType::fat12 ? std::size_t(used_bytes())
                                        : std::min<std::size_t>(stream_bytes_, used_bytes());
}

// Pending set()s: the dirty blocks' bytes replace what the disk holds in
// the chunk of `span.size()` bytes read at table byte `pos`.
void FatTable::overlay_dirty(std::span<std::byte> span, std::uint64_t pos) const {
  const std::uint64_t used = used_bytes(), len = span.size();
  for (auto it = dirty_blocks_.lower_bound(pos / block_bytes_);
       it != dirty_blocks_.end() && it->first * block_bytes_ < pos + len; ++it) {
    const std::uint64_t b0 = it->first * block_bytes_;
    const std::uint64_t lo = std::max(b0, pos), hi = std::min({b0 + block_bytes_, pos + len, used});
    std::memcpy(span.data() + (lo - pos), it->second->buf.data() + (lo - b0), hi - lo);
  }
}

fsio::Status FatTable::scan(const ScanVisitor& visit, std::uint32_t first) {
  const std::uint32_t count = entry_count();
  if (first >= count) return {};
  const std::uint64_t used = used_bytes();
  const std::uint64_t chunk = stream_chunk();
  const bool fat12 = layout_.type == FatType::fat12;
  fsio::AlignedBuffer buf(chunk);
  std::vector<std::uint32_t> values;
  std::uint64_t pos = fat12 ? 0 : entry_offset(layout_.type, first) / chunk * chunk;
  for (; pos < used; pos += chunk) {
    const std::uint64_t len = std::min(chunk, used - pos);
    const auto span = buf.span().first(len);
    FSIO_TRY_CTX(queue_->read(layout_.fat_offset(read_copy_) + pos, span),
                 "read FAT copy " + std::to_string(read_copy_) + " at byte " + std::to_string(pos));
    ++stats_.stream_reads;
    stats_.bytes_read += len;
    overlay_dirty(span, pos);
    const std::uint32_t base = fat12 ? 0 : std::uint32_t(pos / entry_size(layout_.type));
    const std::uint32_t end = fat12 ? count : std::min<std::uint64_t>(count, (pos + len) / entry_size(layout_.type));
    if (!visit_slices(visit, span, base, std::max(base, first), end, values)) break;
  }
  return {};
}

// Decodes and visits [from, end) in slices of kVisitSlice entries, so the
// decoded values never take more memory than a slice (a 4 MiB chunk of
// FAT32 is a million entries). False when the visitor stopped.
bool FatTable::visit_slices(const ScanVisitor& visit, std::span<const std::byte> chunk, std::uint32_t base,
                            std::uint32_t from, std::uint32_t end, std::vector<std::uint32_t>& values) const {
  for (std::uint32_t at = from; at < end;) {
    const std::uint32_t to = std::min<std::uint64_t>(end, std::uint64_t(at) + kVisitSlice);
    decode(layout_.type, chunk, base, at, to, values);
    if (!visit(at, values)) return false;
    at = to;
  }
  return true;
}

fsio::Result<std::uint32_t> FatTable::count_free() {
  std::uint32_t free = 0;
  FSIO_TRY(scan(
      [&free](std::uint32_t, std::span<const std::uint32_t> values) {
        free += std::uint32_t(std::count(values.begin(), values.end(), 0u));
        return true;
      },
      2));
  return free;
}

fsio::Result<std::vector<CopyMismatch>> FatTable::compare_copies() { return compare_stream(nullptr, 0); }

fsio::Result<std::vector<CopyMismatch>> FatTable::scan_and_compare(const ScanVisitor& visit, std::uint32_t first) {
  if (layout_.num_fats < 2) {
    FSIO_TRY(scan(visit, first));
    return std::vector<CopyMismatch>{};
  }
  return compare_stream(&visit, first);
}

// Every copy's chunk read in one plug and compared with the copy read; then,
// with a visitor, the copy read's entries from `first` on, pending set()s
// applied, are visited. A visitor that returns false ends the pass early.
fsio::Result<std::vector<CopyMismatch>> FatTable::compare_stream(const ScanVisitor* visit, std::uint32_t first) {
  std::vector<CopyMismatch> out;
  const std::uint32_t copies = layout_.num_fats, active = read_copy_;
  if (copies < 2) return out;
  const std::uint64_t used = used_bytes(), chunk = stream_chunk();
  const std::uint32_t count = entry_count();
  const bool fat12 = layout_.type == FatType::fat12;
  std::vector<fsio::AlignedBuffer> bufs;
  for (std::uint32_t c = 0; c < copies; ++c) bufs.emplace_back(chunk);
  std::vector<CopyMismatch> found(copies);
  std::vector<std::uint32_t> values;
  for (std::uint64_t pos = 0; pos < used; pos += chunk) {
    const std::uint64_t len = std::min(chunk, used - pos);
    auto plug = queue_->plug();
    for (std::uint32_t c = 0; c < copies; ++c) plug.read(layout_.fat_offset(c) + pos, bufs[c].span().first(len));
    FSIO_TRY_CTX(plug.finish(), "read FAT copies at byte " + std::to_string(pos));
    ++stats_.stream_reads;
    stats_.bytes_read += len * copies;
    const std::uint32_t base = fat12 ? 0 : std::uint32_t(pos / entry_size(layout_.type));
    const std::uint32_t end = fat12 ? count : std::min<std::uint64_t>(count, (pos + len) / entry_size(layout_.type));
    const auto a = bufs[active].span().first(len);
    for (std::uint32_t c = 0; c < copies; ++c) {
      if (c == active || std::memcmp(a.data(), bufs[c].data(), len) == 0) continue;
      // FAT32 compares whole words (the reserved nibble too: fsck.fat
      // compares bytes); FAT12/16 decoded entries.
      const auto b = bufs[c].span().first(len);
      for (std::uint32_t e = base; e < end; ++e) {
        const bool differs =
            layout_.type == FatType::fat32
                ? std::memcmp(a.data() + std::size_t(e - base) * 4, b.data() + std::size_t(e - base) * 4, 4) != 0
                : get_entry(layout_.type, a, e - base) != get_entry(layout_.type, b, e - base);
        if (!differs) continue;
        CopyMismatch& m = found[c];
        if (m.entries++ == 0) {
          m.copy = c;
          m.first_entry = e;
          m.first_sector = entry_offset(layout_.type, e) / layout_.sector_size;
        }
      }
    }
    if (!visit) continue;
    overlay_dirty(a, pos);
    if (!visit_slices(*visit, a, base, std::max(base, first), end, values)) break;
  }
  for (const CopyMismatch& m : found)
    if (m.entries) out.push_back(m);
  return out;
}

}  // namespace fat
