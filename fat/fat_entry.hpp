// FAT entries: the FAT type and the pure codecs that read and write entry n
// of one FAT copy held in memory. Entry n of the FAT describes cluster n;
// entries 0 and 1 are reserved (FAT[0] carries the media byte, FAT[1] the
// end-of-chain mark and, on FAT16/32, the clean-shutdown and no-I/O-error
// bits). fatgen103 section 4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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
// The mark fsck.fat 4.2 writes where it ends a chain (fsck.fat.h FAT_EOF,
// 0xff8 | FAT_EXTD, through set_fat(fs, n, -1)): 0xFF8, 0xFFF8, 0x0FFFFFF8.
// fatck's repairs write it so that their images are fsck.fat's byte for byte.
constexpr std::uint32_t fsck_end_of_chain(FatType type) { return entry_mask(type) & ~0x7u; }

// Bytes that entries 0..count-1 occupy in one FAT copy (FAT12: 1.5 per
// entry, rounded up). A FAT copy must hold cluster_count + 2 entries.
constexpr std::uint64_t entries_bytes(FatType type, std::uint64_t count) {
  switch (type) {
    case FatType::fat12: return (count * 3 + 1) / 2;
    case FatType::fat16: return count * 2;
    case FatType::fat32: return count * 4;
  }
  return 0;
}

// FAT[1] status bits (fatgen103 p.18): set = clean. Bit 15 / bit 27 is
// "volume was cleanly shut down" (ClnShutBitMask), bit 14 / bit 26 "no disk
// I/O errors were met" (HrdErrBitMask). FAT12 has neither.
inline constexpr std::uint32_t kFat16CleanShutdown = 0x8000;
inline constexpr std::uint32_t kFat16NoHardError = 0x4000;
inline constexpr std::uint32_t kFat32CleanShutdown = 0x08000000;
inline constexpr std::uint32_t kFat32NoHardError = 0x04000000;

enum class EntryKind { free, next, reserved, bad, end_of_chain };
// What an entry value means. `next` covers 2..0x...FEF; whether the cluster
// exists is a separate check against the cluster count.
EntryKind classify(FatType type, std::uint32_t value);

}  // namespace fat
