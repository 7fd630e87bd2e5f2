// FAT entry codecs (exhaustive over whole sectors) and FatTable's dirty
// tracking and mirrored batch.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "fat/table.hpp"

namespace fat {
namespace {

std::vector<std::byte> bytes(std::size_t n, std::uint8_t fill = 0) { return std::vector<std::byte>(n, std::byte(fill)); }

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

FatLayout layout(FatType type, std::uint32_t sectors, std::uint32_t fats) {
  FatLayout l;
  l.type = type;
  l.sector_size = 512;
  l.fat_sectors = sectors;
  l.num_fats = fats;
  l.first_fat_offset = 32 * 512;
  l.cluster_count = std::uint32_t(sectors * 512ull * 8 / (type == FatType::fat12 ? 12 : type == FatType::fat16 ? 16 : 32)) - 2;
  return l;
}

std::map<std::uint64_t, std::uint64_t> runs(const FatTable& t) {
  std::map<std::uint64_t, std::uint64_t> out;
  t.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> b) { out[off] = b.size(); });
  return out;
}

TEST(FatTable, SetMarksOnlyTheSectorHoldingTheEntry) {
  FatTable t(layout(FatType::fat32, 200, 2));
  EXPECT_EQ(t.dirty_sectors(), 0u);
  t.set(128, 5);  // byte 512: sector 1
  EXPECT_TRUE(t.is_dirty(1));
  EXPECT_FALSE(t.is_dirty(0));
  EXPECT_FALSE(t.is_dirty(2));
  EXPECT_EQ(t.dirty_sectors(), 1u);
  t.set(129, 6);  // same sector: still one
  EXPECT_EQ(t.dirty_sectors(), 1u);
  EXPECT_EQ(t.get(128), 5u);
}

TEST(FatTable, Fat12EntryStraddlingASectorDirtiesBoth) {
  FatTable t(layout(FatType::fat12, 9, 2));
  t.set(341, 0xABC);  // bytes 511 and 512
  EXPECT_TRUE(t.is_dirty(0));
  EXPECT_TRUE(t.is_dirty(1));
  EXPECT_EQ(t.dirty_sectors(), 2u);
  EXPECT_EQ(t.get(341), 0xABCu);
}

TEST(FatTable, DirtyRunsGoToEveryCopyMergedAndInOrder) {
  const auto l = layout(FatType::fat16, 100, 3);
  FatTable t(l);
  t.set(256 * 3, 7);          // sector 3
  t.set(256 * 4 + 1, 8);      // sector 4: joins the run 3..4
  t.set(256 * 63, 9);         // sector 63
  t.set(256 * 64, 9);         // sector 64: crosses a 64-bit bitmap word
  t.set(256 * 99 + 255, 10);  // last sector
  EXPECT_EQ(t.dirty_sectors(), 5u);
  const auto got = runs(t);
  std::map<std::uint64_t, std::uint64_t> want;
  for (std::uint32_t c = 0; c < 3; ++c) {
    const std::uint64_t base = l.first_fat_offset + c * 100 * 512ull;
    want[base + 3 * 512] = 2 * 512;
    want[base + 63 * 512] = 2 * 512;
    want[base + 99 * 512] = 512;
  }
  EXPECT_EQ(got, want);
  // The bytes handed out are the table's own.
  t.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> b) {
    if (off == l.first_fat_offset + 3 * 512) {
      EXPECT_EQ(b.data(), t.bytes().data() + 3 * 512);
    }
  });
  t.clear_dirty();
  EXPECT_EQ(t.dirty_sectors(), 0u);
  EXPECT_TRUE(runs(t).empty());
  EXPECT_EQ(t.get(256 * 3), 7u);  // clearing dirt keeps the data
}

TEST(FatTable, EveryDirtySectorPatternIsWrittenExactlyOnce) {
  const auto l = layout(FatType::fat32, 130, 2);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    FatTable t(l);
    std::vector<bool> want(l.fat_sectors, false);
    for (int i = 0; i < 40; ++i) {
      const std::uint32_t cluster = rng() % (l.cluster_count + 2);
      t.set(cluster, cluster);
      want[cluster * 4 / 512] = true;
    }
    std::vector<int> seen(l.fat_sectors * 2, 0);
    t.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> b) {
      ASSERT_EQ((off - l.first_fat_offset) % 512, 0u);
      for (std::uint64_t s = (off - l.first_fat_offset) / 512, k = 0; k < b.size() / 512; ++k) ++seen[s + k];
    });
    for (std::uint32_t s = 0; s < l.fat_sectors; ++s) {
      ASSERT_EQ(seen[s], want[s] ? 1 : 0) << s;
      ASSERT_EQ(seen[s + l.fat_sectors], want[s] ? 1 : 0) << s;
    }
  }
}

}  // namespace
}  // namespace fat
