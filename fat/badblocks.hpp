// Bad blocks, as mkfs.fat counts them (-c scans the device, -l reads a
// list): 1024-byte blocks numbered from the start of the filesystem. A bad
// block makes the cluster(s) holding it bad (0xFF7, 0xFFF7, 0x0FFFFFF7 in
// every FAT copy, fatgen103 p.17); one in the reserved area, a FAT or the
// FAT12/16 root directory makes the volume impossible.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "fat/geometry.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"
#include "libfsio/scan.hpp"

namespace fat {

inline constexpr std::uint64_t kBadBlockBytes = 1024;  // mkfs.fat's BLOCK_SIZE

// mkfs.fat -l FILE's format: one decimal block number per line, blank (or
// whitespace-only) lines skipped; anything else, or a negative number, is
// Errc::invalid_argument naming the line ("bad-block list line 3: 'x12' is
// not a block number").
fsio::Result<std::vector<std::uint64_t>> parse_bad_block_list(std::string_view text);

// The clusters holding the given blocks, sorted and unique. Errc::invalid_argument
// (naming the block) for a block before the data area or at or past the end
// of the filesystem, and on FAT32 for one in the root directory's first
// cluster, which mkfs.fat 4.2 marks bad under the root directory and so
// breaks the volume. Blocks in the sectors after the last whole cluster
// belong to no cluster and are skipped.
fsio::Result<std::vector<std::uint32_t>> bad_clusters(const Layout& layout, std::span<const std::uint64_t> blocks);

// mkfs.fat -c: reads the whole volume through fsio::scan_readable (big
// batched reads, direct when the device is) and returns the 1024-byte
// blocks that could not be read, numbered from the filesystem start. With
// O_DIRECT on a device whose alignment exceeds 1024 bytes, each unreadable
// aligned unit counts as all its blocks. The report's counters land in *scan.
fsio::Result<std::vector<std::uint64_t>> scan_bad_blocks(fsio::IoQueue& queue, const Layout& layout,
                                                         fsio::Progress* progress, fsio::ScanReport* scan = nullptr);

// The sectors of one FAT copy that are not all zero after formatting:
// sector 0 (fill_fat_head) and every sector holding a bad cluster's entry,
// keyed by sector number within the copy. `bad` must be clusters of the
// layout (bad_clusters' answer).
std::map<std::uint64_t, std::vector<std::byte>> initial_fat_sectors(const Geometry& g,
                                                                    std::span<const std::uint32_t> bad);

}  // namespace fat
