// The File Allocation Table: entry codecs and an in-memory FAT with
// dirty-sector tracking that writes every FAT copy in one plug.
//
// Entry n of the FAT describes cluster n; entries 0 and 1 are reserved
// (FAT[0] carries the media byte, FAT[1] the end-of-chain mark and, on
// FAT16/32, the clean-shutdown and no-I/O-error bits). fatgen103 section 4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/result.hpp"

namespace fat {

enum class FatType : std::uint8_t { fat12 = 12, fat16 = 16, fat32 = 32 };

const char* fat_type_name(FatType type);  // "FAT12", "FAT16", "FAT32"

// ---- Entry codecs: pure functions over the bytes of one FAT copy ----------
//
// FAT12 packs two 12-bit entries into three bytes. Entry n starts at byte
// n + n/2; read the little-endian 16-bit word there and take
//   even n: its low 12 bits      odd n: its high 12 bits
//
//   byte:     b0                b1                b2
//   bits:  7 6 5 4 3 2 1 0   7 6 5 4 3 2 1 0   7 6 5 4 3 2 1 0
//         [ E0 bits 7..0  ] [E1 3..0|E0 11..8] [ E1 bits 11..4 ]
//
// so an even entry owns b0 and the low nibble of b1, an odd entry the high
// nibble of b1 and b2. Entry 341 (byte 511) straddles the first sector
// boundary of a 512-byte-sector FAT: a writer must dirty both sectors.
//
// FAT16 entries are little-endian 16-bit words at 2n. FAT32 entries are
// 32-bit words at 4n of which only the low 28 bits are the cluster number;
// the high 4 bits are reserved and must be preserved on write (fatgen103
// p.16; Linux fat32_ent_put keeps them too).

// Byte offset of entry n's first byte within one FAT copy.
constexpr std::uint64_t entry_offset(FatType type, std::uint32_t n) {
  switch (type) {
    case FatType::fat12: return std::uint64_t(n) + n / 2;
    case FatType::fat16: return std::uint64_t(n) * 2;
    case FatType::fat32: return std::uint64_t(n) * 4;
  }
  return 0;
}
// Bytes an entry touches: 2 for FAT12 (it shares them with a neighbour).
constexpr std::uint32_t entry_span(FatType type) { return type == FatType::fat32 ? 4 : 2; }

// Entry n's value (FAT32: the low 28 bits). The span must hold the entry.
std::uint32_t get_entry(FatType type, std::span<const std::byte> fat, std::uint32_t n);
// Stores value into entry n (FAT12: 12 bits, FAT16: 16, FAT32: the low 28
// bits, keeping the entry's high nibble). Neighbouring bits are untouched.
void set_entry(FatType type, std::span<std::byte> fat, std::uint32_t n, std::uint32_t value);
// FAT32 only: the whole 32-bit word, reserved nibble included.
std::uint32_t get_raw32(std::span<const std::byte> fat, std::uint32_t n);

constexpr std::uint32_t entry_mask(FatType type) {
  return type == FatType::fat12 ? 0xFFF : type == FatType::fat16 ? 0xFFFF : 0x0FFFFFFF;
}
// fatgen103 p.16-17: bad cluster = mask - 8, end of chain >= mask - 7
// (0xFF8/0xFFF8/0x0FFFFFF8); we write mask (0xFFF...) as end of chain like
// Linux, except FAT32 FAT[2] for which mkfs.fat writes 0x0FFFFFF8.
constexpr std::uint32_t bad_cluster(FatType type) { return entry_mask(type) - 8; }
constexpr std::uint32_t end_of_chain(FatType type) { return entry_mask(type); }

enum class EntryKind { free, next, reserved, bad, end_of_chain };
// What an entry value means. `next` covers 2..0x...FEF; whether the cluster
// exists is a separate check against the cluster count.
EntryKind classify(FatType type, std::uint32_t value);

// ---- FatTable -------------------------------------------------------------

// Where the FAT copies are: enough to read, update and write them back.
struct FatLayout {
  FatType type = FatType::fat32;
  std::uint32_t sector_size = 512;
  std::uint32_t fat_sectors = 0;        // sectors per copy (BPB_FATSz)
  std::uint32_t num_fats = 2;           // copies, all kept identical
  std::uint64_t first_fat_offset = 0;   // bytes from the device window start
  std::uint32_t cluster_count = 0;      // data clusters: entries 2..count+1 are real

  std::uint64_t fat_bytes() const { return std::uint64_t(fat_sectors) * sector_size; }
  std::uint64_t copy_offset(std::uint32_t copy) const { return first_fat_offset + copy * fat_bytes(); }
};

// One FAT copy in memory (all copies are identical on a consistent volume),
// with a bitmap of the sectors changed since the last clear_dirty(). After a
// batch of set() calls, queue_dirty() puts every dirty sector of EVERY copy
// into one plug: the batched, mirrored write that took fat's sync-mount
// allocation from 49.81 s to 12.26 s (DESIGN.md lesson 1). Adjacent dirty
// sectors go out as one request per copy; IoQueue merges further.
// Not thread-safe. The buffer is AlignedBuffer, so O_DIRECT writes work.
class FatTable {
 public:
  // A zeroed table (every cluster free, reserved entries zero too).
  explicit FatTable(const FatLayout& layout);
  // Reads copy 0 of the FAT through the queue.
  static fsio::Result<FatTable> read(fsio::IoQueue& queue, const FatLayout& layout);

  const FatLayout& layout() const { return layout_; }
  std::span<const std::byte> bytes() const { return buf_.span().first(layout_.fat_bytes()); }

  std::uint32_t get(std::uint32_t cluster) const;
  // Sets an entry and marks the sector(s) it touches dirty. cluster must be
  // < cluster_count + 2 (FSIO_ASSERT: an out-of-range index is a bug).
  void set(std::uint32_t cluster, std::uint32_t value);

  bool is_dirty(std::uint32_t sector) const;
  std::uint32_t dirty_sectors() const { return dirty_count_; }
  void clear_dirty();

  // Calls write(offset, bytes) for each run of adjacent dirty sectors, in
  // each copy (copy 0 first), offsets relative to the device window.
  // Returns the number of calls.
  std::size_t for_each_dirty_run(
      const std::function<void(std::uint64_t, std::span<const std::byte>)>& write) const;
  // Queues all dirty sectors of all copies into the plug (the buffer must
  // outlive plug.finish()); does not clear the dirty bits, so a failed
  // finish can be retried. Returns the number of requests queued.
  std::size_t queue_dirty(fsio::IoQueue::Plug& plug) const;

 private:
  void mark(std::uint64_t byte_offset, std::uint32_t length);

  FatLayout layout_;
  fsio::AlignedBuffer buf_;
  std::vector<std::uint64_t> dirty_;  // one bit per FAT sector
  std::uint32_t dirty_count_ = 0;
};

}  // namespace fat
