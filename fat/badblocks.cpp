// Bad-block lists and bad clusters (see badblocks.hpp).
#include "fat/badblocks.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "fat/boot.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

fsio::Result<std::vector<std::uint64_t>> parse_bad_block_list(std::string_view text) {
  std::vector<std::uint64_t> blocks;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    std::uint64_t v = 0;
    bool ok = line.size() <= 19;  // below 10^19: fits 64 bits
    for (char c : line) {
      if (c < '0' || c > '9') ok = false;
      else v = v * 10 + std::uint64_t(c - '0');
    }
    if (!ok)
      return make_error(Errc::invalid_argument, "bad-block list line " + std::to_string(line_no) + ": '" +
                                                    std::string(line) + "' is not a block number");
    blocks.push_back(v);
  }
  return blocks;
}

fsio::Result<std::vector<std::uint32_t>> bad_clusters(const Layout& g, std::span<const std::uint64_t> blocks) {
  // In 512-byte units, as mkfs.fat marks each half of a bad block.
  const std::uint64_t per_sector = g.sector_size / 512;
  const std::uint64_t data_start = g.data_start_sector() * per_sector;
  const std::uint64_t end = std::uint64_t(g.total_sectors) * per_sector;
  const std::uint64_t per_cluster = std::uint64_t(g.sectors_per_cluster) * per_sector;
  std::vector<std::uint32_t> out;
  for (std::uint64_t b : blocks) {
    const std::string name = "bad block " + std::to_string(b);
    if (b >= end / 2 + end % 2)
      return make_error(Errc::invalid_argument, name + " is beyond the end of the filesystem (" +
                                                    std::to_string(end / 2) + " blocks of 1024 bytes)");
    for (std::uint64_t half = b * 2; half < b * 2 + 2 && half < end; ++half) {
      if (half < data_start)
        return make_error(Errc::invalid_argument,
                          name + " is before the data area (it starts at block " + std::to_string(data_start / 2) +
                              "): the reserved sectors, FATs and root directory must be readable");
      const std::uint64_t cluster = (half - data_start) / per_cluster + 2;
      if (!g.is_cluster(cluster)) continue;  // the tail after the last whole cluster
      if (g.type == FatType::fat32 && cluster == g.root_cluster)
        return make_error(Errc::invalid_argument,
                          name + " is in the root directory's cluster " + std::to_string(cluster));
      out.push_back(std::uint32_t(cluster));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

fsio::Result<std::vector<std::uint64_t>> scan_bad_blocks(fsio::IoQueue& queue, const Layout& g,
                                                         fsio::Progress* progress, fsio::ScanReport* scan) {
  const fsio::Device& dev = queue.device();
  fsio::ScanOptions o;
  if (dev.direct()) o.unit = std::max<std::uint64_t>(kBadBlockBytes, dev.topology().dio_offset_align);
  const std::uint64_t bytes = g.filesystem_bytes();
  auto report = FSIO_TRY(fsio::scan_readable(queue, g.offset_bytes, bytes, progress, o));
  std::vector<std::uint64_t> blocks;
  for (std::uint64_t off : report.bad) {
    const std::uint64_t rel = off - g.offset_bytes;
    const std::uint64_t end = std::min(rel + o.unit, bytes);
    for (std::uint64_t b = rel / kBadBlockBytes; b * kBadBlockBytes < end; ++b) blocks.push_back(b);
  }
  if (scan) *scan = std::move(report);
  return blocks;
}

std::map<std::uint64_t, std::vector<std::byte>> initial_fat_sectors(const Geometry& g,
                                                                    std::span<const std::uint32_t> bad) {
  const std::uint64_t ss = g.sector_size;
  const std::uint64_t fat_bytes = g.fat_bytes();
  std::map<std::uint64_t, std::vector<std::byte>> sectors;
  auto sector = [&](std::uint64_t n) -> std::vector<std::byte>& {
    auto& s = sectors[n];
    if (s.empty()) s.resize(ss);
    return s;
  };
  fill_fat_head(g, sector(0));
  // Entries are edited through a 12-byte-aligned window, so entry n keeps
  // its place relative to the window (12 is a whole number of FAT12, FAT16
  // and FAT32 entries: 8, 6 and 3) and a FAT12 entry that straddles two
  // sectors is one edit.
  constexpr std::uint64_t kWindow = 24;
  for (std::uint32_t n : bad) {
    const std::uint64_t base = entry_offset(g.type, n) / 12 * 12;
    const std::uint64_t first = base * 2 / 3;  // FAT12: 2 entries per 3 bytes
    const std::uint64_t first_entry = g.type == FatType::fat12 ? first : base / entry_span(g.type);
    std::byte window[kWindow] = {};
    const std::uint64_t len = std::min(kWindow, fat_bytes - base);
    for (std::uint64_t i = 0; i < len; ++i) window[i] = sector((base + i) / ss)[(base + i) % ss];
    set_entry(g.type, std::span(window, len), std::uint32_t(n - first_entry), bad_cluster(g.type));
    for (std::uint64_t i = 0; i < len; ++i) sector((base + i) / ss)[(base + i) % ss] = window[i];
  }
  return sectors;
}

}  // namespace fat
