// FatTable on a real image file through IoQueue: the bounded cache, dirty
// sectors of every copy in one plug, streaming scans and copy comparison.
// Expected bytes come from the entry codecs applied to what the file holds
// (read with plain pread), never from the table reading itself back.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "fat/table.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

Layout layout(FatType type, std::uint32_t sectors, std::uint32_t fats) {
  Layout l;
  l.type = type;
  l.sector_size = 512;
  l.fat_sectors = sectors;
  l.num_fats = fats;
  l.reserved_sectors = 32;
  const std::uint32_t bits = type == FatType::fat12 ? 12 : type == FatType::fat16 ? 16 : 32;
  l.cluster_count = std::uint32_t(sectors * 512ull * 8 / bits) - 2;
  return l;
}

// An image holding the reserved area and the FAT copies, every FAT byte
// random, opened buffered through a real IoQueue.
struct TableImage {
  support::TempDir dir;
  std::string path = dir / "img";
  fsio::Device dev;
  fsio::IoQueue queue;

  static fsio::Device open(const std::string& path, const Layout& l, std::uint32_t seed) {
    support::make_file(path, l.fat_offset(l.num_fats) + 4096);
    std::mt19937 rng(seed);
    std::vector<char> fat(l.fat_bytes() * l.num_fats);
    for (char& c : fat) c = char(rng());
    FILE* f = std::fopen(path.c_str(), "r+b");
    std::fseek(f, long(l.fat_offset(0)), SEEK_SET);
    std::fwrite(fat.data(), 1, fat.size(), f);
    std::fclose(f);
    fsio::OpenOptions oo;
    oo.write = true;
    oo.direct = false;
    oo.allow_mounted = true;
    return fsio::Device::open(path, oo).value();
  }
  TableImage(const Layout& l, std::uint32_t seed = 1)
      : dev(open(path, l, seed)), queue(fsio::IoQueue::create(dev).value()) {}
  std::vector<std::byte> copy(const Layout& l, std::uint32_t c) const {
    return support::read_bytes(path, l.fat_offset(c), std::size_t(l.fat_bytes()));
  }
};

TEST(FatTable, GetDecodesWhatTheActiveCopyHolds) {
  for (FatType t : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    const auto l = layout(t, t == FatType::fat12 ? 12 : 300, 2);
    TableImage img(l, 5);
    const auto bytes = img.copy(l, 0);
    FatCacheOptions o;
    o.block_bytes = 1024;
    o.cache_bytes = 4096;  // four blocks: most gets miss
    auto table = FatTable::open(img.queue, l, o).value();
    std::mt19937 rng(3);
    for (int i = 0; i < 5000; ++i) {
      const std::uint32_t n = rng() % l.entry_count();
      ASSERT_EQ(table.get(n).value(), get_entry(t, bytes, n)) << fat_type_name(t) << " entry " << n;
    }
    if (t != FatType::fat12) {
      EXPECT_GT(table.stats().block_reads, 100u) << "a four-block cache cannot hold a 300-sector FAT";
    } else {
      EXPECT_EQ(table.stats().block_reads, 1u) << "FAT12 is one block";
    }
  }
}

TEST(FatTable, ReadsTheActiveCopyWhenMirroringIsOff) {
  auto l = layout(FatType::fat32, 16, 3);
  l.ext_flags = 0x80 | 2;  // mirroring off, copy 2 active
  TableImage img(l, 9);
  const auto third = img.copy(l, 2);
  auto table = FatTable::open(img.queue, l).value();
  for (std::uint32_t n = 0; n < l.entry_count(); ++n) ASSERT_EQ(table.get(n).value(), get_entry(l.type, third, n));
}

TEST(FatTable, SetMarksOnlyTheSectorHoldingTheEntry) {
  const auto l = layout(FatType::fat32, 200, 2);
  TableImage img(l);
  auto t = FatTable::open(img.queue, l).value();
  EXPECT_EQ(t.dirty_sectors(), 0u);
  ASSERT_TRUE(t.set(128, 5).has_value());  // byte 512: sector 1
  EXPECT_TRUE(t.is_dirty(1));
  EXPECT_FALSE(t.is_dirty(0));
  EXPECT_FALSE(t.is_dirty(2));
  EXPECT_EQ(t.dirty_sectors(), 1u);
  ASSERT_TRUE(t.set(129, 6).has_value());  // same sector: still one
  EXPECT_EQ(t.dirty_sectors(), 1u);
  EXPECT_EQ(t.get(128).value(), 5u);
}

TEST(FatTable, Fat12EntryStraddlingASectorDirtiesBoth) {
  const auto l = layout(FatType::fat12, 9, 2);
  TableImage img(l);
  auto t = FatTable::open(img.queue, l).value();
  ASSERT_TRUE(t.set(341, 0xABC).has_value());  // bytes 511 and 512
  EXPECT_TRUE(t.is_dirty(0));
  EXPECT_TRUE(t.is_dirty(1));
  EXPECT_EQ(t.dirty_sectors(), 2u);
  EXPECT_EQ(t.get(341).value(), 0xABCu);
}

std::map<std::uint64_t, std::uint64_t> table_runs(const FatTable& t) {
  std::map<std::uint64_t, std::uint64_t> out;
  t.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> b) { out[off] = b.size(); });
  return out;
}

TEST(FatTable, DirtyRunsGoToEveryCopyMergedAndInOrder) {
  const auto l = layout(FatType::fat16, 100, 3);
  TableImage img(l);
  auto t = FatTable::open(img.queue, l).value();
  for (auto [n, v] :
       std::vector<std::pair<std::uint32_t, std::uint32_t>>{{256 * 3, 7},
                                                            {256 * 4 + 1, 8},  // sectors 3 and 4: one run
                                                            {256 * 63, 9},
                                                            {256 * 64, 9},  // 63 and 64 cross a 64-bit bitmap word
                                                            {256 * 99 + 255, 10}})  // the last sector
    ASSERT_TRUE(t.set(n, v).has_value());
  EXPECT_EQ(t.dirty_sectors(), 5u);
  std::map<std::uint64_t, std::uint64_t> want;
  for (std::uint32_t c = 0; c < 3; ++c) {
    want[l.fat_offset(c) + 3 * 512] = 2 * 512;
    want[l.fat_offset(c) + 63 * 512] = 2 * 512;
    want[l.fat_offset(c) + 99 * 512] = 512;
  }
  EXPECT_EQ(table_runs(t), want);
  t.clear_dirty();
  EXPECT_EQ(t.dirty_sectors(), 0u);
  EXPECT_TRUE(table_runs(t).empty());
  EXPECT_EQ(t.get(256 * 3).value(), 7u);  // clearing dirt keeps the data
}

TEST(FatTable, EveryDirtySectorPatternIsWrittenExactlyOnce) {
  const auto l = layout(FatType::fat32, 130, 2);
  TableImage img(l);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    FatCacheOptions o;
    o.block_bytes = 512 * (1 + round % 5);  // runs split at block edges, never lost
    auto t = FatTable::open(img.queue, l, o).value();
    std::vector<bool> want(l.fat_sectors, false);
    for (int i = 0; i < 40; ++i) {
      const std::uint32_t cluster = rng() % l.entry_count();
      ASSERT_TRUE(t.set(cluster, cluster).has_value());
      want[cluster * 4 / 512] = true;
    }
    std::vector<int> seen(l.fat_sectors * 2, 0);
    t.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> b) {
      const std::uint64_t rel = off - l.fat_offset(0);
      ASSERT_EQ(rel % 512, 0u);
      for (std::uint64_t s = rel / 512, k = 0; k < b.size() / 512; ++k) ++seen[s + k];
    });
    for (std::uint32_t s = 0; s < l.fat_sectors; ++s) {
      ASSERT_EQ(seen[s], want[s] ? 1 : 0) << s;
      ASSERT_EQ(seen[s + l.fat_sectors], want[s] ? 1 : 0) << s;
    }
  }
}

// Many more dirty blocks than the cache holds: none is evicted before the
// flush, every copy ends up with the new entries and nothing else changed.
TEST(FatTable, DirtyBlocksOutliveTheCacheBoundAndFlushToEveryCopy) {
  for (FatType type : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    const auto l = layout(type, type == FatType::fat12 ? 12 : 256, 3);
    TableImage img(l, 11);
    auto want = img.copy(l, 0);
    FatCacheOptions o;
    o.block_bytes = 512;
    o.cache_bytes = 1024;
    auto t = FatTable::open(img.queue, l, o).value();
    std::mt19937 rng(13);
    for (int i = 0; i < 2000; ++i) {
      const std::uint32_t n = rng() % l.entry_count();
      const std::uint32_t v = rng() & entry_mask(type);
      ASSERT_TRUE(t.set(n, v).has_value());
      set_entry(type, want, n, v);
      (void)t.get(rng() % l.entry_count()).value();  // churn the clean blocks
    }
    auto flushed = t.flush();
    ASSERT_TRUE(flushed.has_value()) << flushed.error().message();
    EXPECT_EQ(t.dirty_sectors(), 0u);
    for (std::uint32_t c = 0; c < 3; ++c) EXPECT_EQ(img.copy(l, c), want) << fat_type_name(type) << " copy " << c;
  }
}

// prefetch: the blocks holding the ranges, each read once, none already
// cached read again, a pending set() kept, at most the cache's worth read;
// gets after it are cache hits. Blocks of 1024 bytes hold 256 FAT32 entries.
TEST(FatTable, PrefetchReadsMissingBlocksOnceAndKeepsPendingSets) {
  const auto l = layout(FatType::fat32, 256, 2);
  TableImage img(l, 31);
  auto want = img.copy(l, 0);
  FatCacheOptions o;
  o.block_bytes = 1024;
  o.cache_bytes = 4096;  // four clean blocks
  auto t = FatTable::open(img.queue, l, o).value();
  ASSERT_TRUE(t.set(1010, 77).has_value());  // block 3, dirty and pinned
  set_entry(l.type, want, 1010, 77);
  EXPECT_EQ(t.stats().block_reads, 1u);
  // (300, 10): block 1; (1000, 300): entries 1000..1299, bytes 4000..5199,
  // blocks 3 (cached), 4 and 5.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges{{300, 10}, {1000, 300}};
  ASSERT_TRUE(t.prefetch(ranges).has_value());
  EXPECT_EQ(t.stats().block_reads, 4u);
  ASSERT_TRUE(t.prefetch(ranges).has_value());
  EXPECT_EQ(t.stats().block_reads, 4u) << "nothing new to read";
  for (auto [first, count] : ranges)
    for (std::uint32_t n = first; n < first + count; ++n) ASSERT_EQ(t.get(n).value(), get_entry(l.type, want, n)) << n;
  EXPECT_EQ(t.stats().block_reads, 4u) << "every get after the prefetch is a hit";
  // Eight blocks wanted (8..15), four fit: the first four are read ahead,
  // the others come on demand, one read each.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> big{{8 * 256, 8 * 256}};
  ASSERT_TRUE(t.prefetch(big).has_value());
  EXPECT_EQ(t.stats().block_reads, 8u);
  for (std::uint32_t n = 8 * 256; n < 16 * 256; ++n) ASSERT_EQ(t.get(n).value(), get_entry(l.type, want, n)) << n;
  EXPECT_EQ(t.stats().block_reads, 12u);
  EXPECT_EQ(t.get(1010).value(), 77u) << "the pinned block survived the evictions";
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> bad{{l.entry_count(), 1}};
  EXPECT_EQ(t.prefetch(bad).error().code, fsio::Errc::invalid_argument);
  ASSERT_TRUE(t.flush().has_value());
  EXPECT_EQ(img.copy(l, 0), want);
}

TEST(FatTable, ScanStreamsInChunksAndSeesPendingSets) {
  for (FatType type : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    const auto l = layout(type, type == FatType::fat12 ? 12 : 100, 2);
    TableImage img(l, 21);
    auto want = img.copy(l, 0);
    FatCacheOptions o;
    o.stream_bytes = 4096;
    auto t = FatTable::open(img.queue, l, o).value();
    ASSERT_TRUE(t.set(77, 1234 & entry_mask(type)).has_value());
    set_entry(type, want, 77, 1234 & entry_mask(type));
    std::vector<std::uint32_t> seen;
    const std::uint32_t first = 5;
    ASSERT_TRUE(t.scan(
                     [&](std::uint32_t at, std::span<const std::uint32_t> v) {
                       EXPECT_EQ(at, first + seen.size());
                       seen.insert(seen.end(), v.begin(), v.end());
                       return true;
                     },
                     first)
                    .has_value());
    ASSERT_EQ(seen.size(), l.entry_count() - first);
    for (std::uint32_t n = first; n < l.entry_count(); ++n) ASSERT_EQ(seen[n - first], get_entry(type, want, n)) << n;
    const std::uint64_t reads = type == FatType::fat12 ? 1 : (100 * 512 + 4095) / 4096;
    EXPECT_EQ(t.stats().stream_reads, reads) << fat_type_name(type);
    std::uint32_t free = 0;
    for (std::uint32_t n = 2; n < l.entry_count(); ++n) free += get_entry(type, want, n) == 0;
    EXPECT_EQ(t.count_free().value(), free);
  }
}

TEST(FatTable, CompareCopiesNamesTheFirstDifferingEntryAndSector) {
  const auto l = layout(FatType::fat32, 64, 3);
  TableImage img(l, 31);
  // Make all copies equal, then change two entries of copy 2.
  const auto first = img.copy(l, 0);
  for (std::uint32_t c = 1; c < 3; ++c) {
    FILE* f = std::fopen(img.path.c_str(), "r+b");
    std::fseek(f, long(l.fat_offset(c)), SEEK_SET);
    std::fwrite(first.data(), 1, first.size(), f);
    if (c == 2) {
      std::fseek(f, long(l.fat_offset(c) + 1000 * 4 + 3), SEEK_SET);
      std::fputc(std::to_integer<int>(first[1000 * 4 + 3]) ^ 0x10, f);  // the reserved nibble only
      std::fseek(f, long(l.fat_offset(c) + 3000 * 4), SEEK_SET);
      std::fputc(std::to_integer<int>(first[3000 * 4]) ^ 1, f);
    }
    std::fclose(f);
  }
  FatCacheOptions o;
  o.stream_bytes = 2048;
  auto t = FatTable::open(img.queue, l, o).value();
  auto diff = t.compare_copies();
  ASSERT_TRUE(diff.has_value()) << diff.error().message();
  ASSERT_EQ(diff->size(), 1u);
  EXPECT_EQ((*diff)[0].copy, 2u);
  EXPECT_EQ((*diff)[0].first_entry, 1000u);
  EXPECT_EQ((*diff)[0].first_sector, 1000u * 4 / 512);
  EXPECT_EQ((*diff)[0].entries, 2u);
}

// One pass for both: the mismatches compare_copies finds, the entries scan
// visits (pending sets applied to what is visited, not to what is compared),
// on every FAT type, with chunks that split the table.
TEST(FatTable, ScanAndCompareIsScanPlusCompareInOnePass) {
  for (FatType type : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    const auto l = layout(type, type == FatType::fat12 ? 12 : 40, 2);
    TableImage img(l, 41);  // random bytes: the two copies differ almost everywhere
    FatCacheOptions o;
    o.stream_bytes = 1024;
    auto t = FatTable::open(img.queue, l, o).value();
    ASSERT_TRUE(t.set(9, 99).has_value());
    auto want = img.copy(l, 0);
    set_entry(type, want, 9, 99);
    const auto diff = t.compare_copies().value();
    std::vector<std::uint32_t> seen;
    const auto both = t.scan_and_compare(
                           [&](std::uint32_t at, std::span<const std::uint32_t> v) {
                             EXPECT_EQ(at, 3 + seen.size());
                             seen.insert(seen.end(), v.begin(), v.end());
                             return true;
                           },
                           3)
                          .value();
    ASSERT_EQ(both.size(), diff.size()) << fat_type_name(type);
    ASSERT_EQ(both.size(), 1u);
    EXPECT_EQ(both[0].first_entry, diff[0].first_entry);
    EXPECT_EQ(both[0].entries, diff[0].entries);
    ASSERT_EQ(seen.size(), l.entry_count() - 3);
    for (std::uint32_t n = 3; n < l.entry_count(); ++n) ASSERT_EQ(seen[n - 3], get_entry(type, want, n)) << n;
  }
}

TEST(FatTable, ABadLayoutIsAnErrorNotACrash) {
  auto l = layout(FatType::fat16, 10, 2);
  TableImage img(l);
  auto big = l;
  big.cluster_count = 10 * 256;  // needs 10*512 + 4 bytes
  auto r = FatTable::open(img.queue, big);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, fsio::Errc::corrupt);
  EXPECT_NE(r.error().message().find("2560 clusters need 5124"), std::string::npos) << r.error().message();
  auto none = l;
  none.fat_sectors = 0;
  EXPECT_EQ(FatTable::open(img.queue, none).error().code, fsio::Errc::corrupt);
  auto active = layout(FatType::fat32, 10, 2);
  active.ext_flags = 0x80 | 5;
  EXPECT_EQ(FatTable::open(img.queue, active).error().code, fsio::Errc::corrupt);
  auto t = FatTable::open(img.queue, l).value();
  EXPECT_EQ(t.get(l.entry_count()).error().code, fsio::Errc::invalid_argument);
  EXPECT_EQ(t.set(l.entry_count(), 0).error().code, fsio::Errc::invalid_argument);
}

}  // namespace
}  // namespace fat
