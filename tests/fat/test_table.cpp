// FAT entry codecs, exhaustive over whole sectors (fat_entry.hpp).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "fat/fat_entry.hpp"

namespace fat {
namespace {

std::vector<std::byte> bytes(std::size_t n, std::uint8_t fill = 0) {
  return std::vector<std::byte>(n, std::byte(fill));
}

TEST(Fat12Table, EvenClusterUsesLowNibbleOfMiddleByte) {
  auto fat = bytes(3);
  set_entry(FatType::fat12, fat, 0, 0xABC);
  EXPECT_EQ(fat[0], std::byte(0xBC));
  EXPECT_EQ(fat[1], std::byte(0x0A));
  EXPECT_EQ(fat[2], std::byte(0x00));
}

TEST(Fat12Table, OddClusterUsesHighNibbleOfMiddleByte) {
  auto fat = bytes(3);
  set_entry(FatType::fat12, fat, 1, 0xABC);
  EXPECT_EQ(fat[0], std::byte(0x00));
  EXPECT_EQ(fat[1], std::byte(0xC0));
  EXPECT_EQ(fat[2], std::byte(0xAB));
  // mkfs.fat's FAT12 head F8 FF FF: FAT[0] = 0xFF8, FAT[1] = 0xFFF.
  const std::vector<std::byte> head{std::byte(0xF8), std::byte(0xFF), std::byte(0xFF)};
  EXPECT_EQ(get_entry(FatType::fat12, head, 0), 0xFF8u);
  EXPECT_EQ(get_entry(FatType::fat12, head, 1), 0xFFFu);
}

// Every entry of a three-sector FAT12 (including those straddling sector
// boundaries) round-trips, and writing one never disturbs its neighbours.
TEST(Fat12Table, EveryEntryInThreeSectorsRoundTripsWithoutTouchingNeighbours) {
  const std::size_t size = 3 * 512;
  const std::uint32_t entries = size * 2 / 3;
  std::mt19937 rng(12);
  std::vector<std::uint32_t> want(entries);
  auto fat = bytes(size, 0x5A);
  for (std::uint32_t n = 0; n < entries; ++n) {
    want[n] = rng() & 0xFFF;
    set_entry(FatType::fat12, fat, n, want[n] | 0xF000);  // bits above 12 are ignored
  }
  for (std::uint32_t n = 0; n < entries; ++n) ASSERT_EQ(get_entry(FatType::fat12, fat, n), want[n]) << n;
  for (std::uint32_t n = 0; n < entries; ++n) {
    for (std::uint32_t v : {0u, 0xFFFu, n & 0xFFF}) {
      set_entry(FatType::fat12, fat, n, v);
      ASSERT_EQ(get_entry(FatType::fat12, fat, n), v);
      if (n > 0) {
        ASSERT_EQ(get_entry(FatType::fat12, fat, n - 1), want[n - 1]) << n;
      }
      if (n + 1 < entries) {
        ASSERT_EQ(get_entry(FatType::fat12, fat, n + 1), want[n + 1]) << n;
      }
    }
    set_entry(FatType::fat12, fat, n, want[n]);
  }
}

TEST(Fat12Table, EveryValueRoundTripsAtEvenAndOddEntries) {
  auto fat = bytes(6);
  for (std::uint32_t v = 0; v <= 0xFFF; ++v) {
    set_entry(FatType::fat12, fat, 2, v);
    set_entry(FatType::fat12, fat, 3, 0xFFF - v);
    ASSERT_EQ(get_entry(FatType::fat12, fat, 2), v);
    ASSERT_EQ(get_entry(FatType::fat12, fat, 3), 0xFFF - v);
  }
}

TEST(Fat16Table, EveryEntryInASectorRoundTripsLittleEndian) {
  auto fat = bytes(512);
  for (std::uint32_t n = 0; n < 256; ++n) set_entry(FatType::fat16, fat, n, n * 257);
  for (std::uint32_t n = 0; n < 256; ++n) ASSERT_EQ(get_entry(FatType::fat16, fat, n), n * 257);
  EXPECT_EQ(fat[2 * 3], std::byte(3));
  EXPECT_EQ(fat[2 * 3 + 1], std::byte(3));
}

TEST(Fat32Table, SetPreservesReservedHighNibble) {
  auto fat = bytes(512);
  for (std::uint32_t n = 0; n < 128; ++n) {
    const std::uint32_t high = (n % 16) << 28;
    fat[4 * n + 3] = std::byte(high >> 24);
    set_entry(FatType::fat32, fat, n, 0xFFFFFFFF - n);  // high nibble of the value is dropped
    ASSERT_EQ(get_entry(FatType::fat32, fat, n), (0xFFFFFFFF - n) & 0x0FFFFFFF);
    ASSERT_EQ(get_raw32(fat, n), high | ((0xFFFFFFFF - n) & 0x0FFFFFFF)) << n;
  }
}

TEST(FatEntry, ClassifiesFreeBadEndAndReserved) {
  EXPECT_EQ(classify(FatType::fat12, 0), EntryKind::free);
  EXPECT_EQ(classify(FatType::fat12, 2), EntryKind::next);
  EXPECT_EQ(classify(FatType::fat12, 0xFEF), EntryKind::next);
  EXPECT_EQ(classify(FatType::fat12, 0xFF0), EntryKind::reserved);
  EXPECT_EQ(classify(FatType::fat12, 0xFF7), EntryKind::bad);
  EXPECT_EQ(classify(FatType::fat12, 0xFF8), EntryKind::end_of_chain);
  EXPECT_EQ(classify(FatType::fat16, 0xFFF7), EntryKind::bad);
  EXPECT_EQ(classify(FatType::fat16, 0xFFFF), EntryKind::end_of_chain);
  EXPECT_EQ(classify(FatType::fat16, 0x0FF7), EntryKind::next);
  EXPECT_EQ(classify(FatType::fat32, 0x0FFFFFF7), EntryKind::bad);
  EXPECT_EQ(classify(FatType::fat32, 0xFFFFFFF8), EntryKind::end_of_chain);  // high nibble ignored
  EXPECT_EQ(classify(FatType::fat32, 0x10000000), EntryKind::free);
  EXPECT_EQ(classify(FatType::fat32, 1), EntryKind::reserved);
  EXPECT_EQ(bad_cluster(FatType::fat16), 0xFFF7u);
  EXPECT_EQ(end_of_chain(FatType::fat32), 0x0FFFFFFFu);
}

TEST(FatEntry, EntriesBytesCoverTheLastEntryExactly) {
  // The last entry of a table of n entries ends at byte entries_bytes(n).
  for (std::uint32_t n = 1; n < 5000; ++n) {
    ASSERT_EQ(entries_bytes(FatType::fat12, n), entry_offset(FatType::fat12, n - 1) + 2) << n;
    ASSERT_EQ(entries_bytes(FatType::fat16, n), entry_offset(FatType::fat16, n - 1) + 2) << n;
    ASSERT_EQ(entries_bytes(FatType::fat32, n), entry_offset(FatType::fat32, n - 1) + 4) << n;
  }
}

}  // namespace
}  // namespace fat
