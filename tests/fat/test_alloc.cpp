// The allocator's policy on free space worked out by hand (best fit, the
// hint, fragments longest first, the bounded index), its scan against what
// fsck.fat counts on mtools-filled images, and FatTable::set_chain against
// the entry codecs applied to the bytes on disk.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "fat/alloc.hpp"
#include "fat/volume.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

// Free runs (first, count) on a volume of 100 clusters (2..101).
Allocator runs(std::vector<Extent> free, std::uint32_t hint = 2, std::size_t max_runs = 1 << 20) {
  return Allocator::from_runs(100, free, hint, {max_runs});
}

TEST(Allocator, BestFitTakesTheShortestRunThatHolds) {
  auto a = runs({{2, 10}, {20, 3}, {30, 5}});
  EXPECT_EQ(a.free_clusters(), 18u);
  EXPECT_EQ(a.take_contiguous(3), (Extent{20, 3})) << "the 3-run fits exactly";
  EXPECT_EQ(a.take_contiguous(4), (Extent{30, 4})) << "5 is the shortest run of at least 4";
  EXPECT_EQ(a.take_contiguous(4), (Extent{2, 4})) << "only the 10-run holds 4 now";
  EXPECT_EQ(a.take_contiguous(1), (Extent{34, 1})) << "the 1 left of the 5-run";
  EXPECT_EQ(a.take_contiguous(7), std::nullopt) << "6 are left in one run";
  EXPECT_EQ(a.free_clusters(), 6u);
  EXPECT_EQ(a.longest_run(), 6u);
  EXPECT_EQ(a.last_allocated(), 34u);
}

TEST(Allocator, AmongEqualRunsTheFirstAtOrAfterTheHintThenOnwardsAndRoundTheEnd) {
  auto a = runs({{10, 3}, {30, 3}, {50, 3}}, 25);
  EXPECT_EQ(a.take_contiguous(3), (Extent{30, 3})) << "30 is the first at or after the hint 25";
  EXPECT_EQ(a.take_contiguous(3), (Extent{50, 3})) << "the hint moved past 32";
  EXPECT_EQ(a.take_contiguous(3), (Extent{10, 3})) << "nothing after 52: wrap to the start";
}

TEST(Allocator, AHintThatIsNotAClusterStartsAtTwo) {
  auto a = runs({{10, 3}, {30, 3}}, 5000);
  EXPECT_EQ(a.take_contiguous(3), (Extent{10, 3}));
  auto b = runs({{10, 3}, {30, 3}}, 0);
  EXPECT_EQ(b.take_contiguous(3), (Extent{10, 3}));
}

TEST(Allocator, FragmentsLongestFirstLastPieceByBestFitInClusterOrder) {
  auto a = runs({{2, 5}, {10, 3}, {20, 2}, {40, 4}});
  // 9 clusters: no run holds them. 4 from the 5-run? No: longest first
  // takes the 5-run whole (2..6), then 4 are left and the 4-run at 40 holds
  // them exactly (best fit), so the file has two fragments.
  auto got = a.take(9, false);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, (std::vector<Extent>{{2, 5}, {40, 4}}));
  EXPECT_EQ(a.free_clusters(), 5u);
  // 4 more: longest is 3 (10..12), then 1 by best fit from the 2-run.
  got = a.take(4, false);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, (std::vector<Extent>{{10, 3}, {20, 1}}));
}

TEST(Allocator, ContiguousOnlyAndTooLittleSpaceTakeNothingAndSayWhy) {
  auto a = runs({{2, 5}, {10, 3}});
  auto c = a.take(6, true);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, fsio::Errc::busy);
  EXPECT_NE(c.error().message().find("longest free run is 5 clusters"), std::string::npos) << c.error().message();
  auto f = a.take(9, false);
  ASSERT_FALSE(f.has_value());
  EXPECT_NE(f.error().message().find("needs 9 clusters but only 8 clusters are free"), std::string::npos)
      << f.error().message();
  EXPECT_EQ(a.free_clusters(), 8u) << "nothing was taken";
  EXPECT_EQ(a.take(0, true).value(), std::vector<Extent>{});
}

TEST(Allocator, ABoundedIndexDropsTheShortestRunsAndTheBitmapStillFindsThem) {
  // Four runs, an index of two: the 1-run and the 2-run are left out.
  auto a = runs({{2, 1}, {5, 2}, {9, 3}, {14, 4}}, 2, 2);
  EXPECT_FALSE(a.index_complete());
  EXPECT_EQ(a.free_clusters(), 10u);
  EXPECT_EQ(a.take_contiguous(5), std::nullopt) << "no run of 5 exists, indexed or not";
  // 10: the indexed 4 and 3, then from the bitmap at the hint (after 11):
  // nothing free up to 101, so round to 2 and 5..6.
  auto got = a.take(10, false);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, (std::vector<Extent>{{2, 1}, {5, 2}, {9, 3}, {14, 4}}));
  EXPECT_EQ(a.free_clusters(), 0u);
  EXPECT_EQ(a.longest_run(), 0u);
}

TEST(Allocator, TakenClustersAreNoLongerFree) {
  auto a = runs({{2, 10}});
  EXPECT_TRUE(a.is_free(5));
  ASSERT_TRUE(a.take(4, true).has_value());
  for (std::uint32_t c = 2; c < 6; ++c) EXPECT_FALSE(a.is_free(c)) << c;
  EXPECT_TRUE(a.is_free(6));
}

TEST(ClusterBitmap, SetRangeSetsExactlyTheRangeAcrossWords) {
  for (std::uint32_t first : {0u, 1u, 63u, 64u, 100u})
    for (std::uint32_t count : {0u, 1u, 63u, 64u, 65u, 200u}) {
      ClusterBitmap b(400);
      b.set_range(first, count);
      for (std::uint32_t n = 0; n < 400; ++n)
        ASSERT_EQ(b.test(n), n >= first && n < first + count) << first << "+" << count << " bit " << n;
    }
}

// The scan's free count is fsck.fat's: "N files, USED/TOTAL clusters".
TEST(AllocatorScan, FreeClustersAgreeWithFsckFatOnVolumesMtoolsFilled) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  struct Case {
    const char* args;
    std::uint64_t kib;
  };
  for (const Case c : {Case{"", 1440}, Case{"-F 16 -s 2", 20 * 1024}, Case{"-F 32 -s 1", 100 * 1024}}) {
    support::TempDir dir;
    const std::string img = dir / "img";
    test::mkfs(img, c.kib, c.args);
    test::populate(img, dir / "src", test::fsck_geometry(img)["cluster_bytes"], 20);
    support::make_file(dir / "a", 5000, 'a');  // a hole: a file written, then deleted behind another
    test::mtools("mcopy", img, dir / "a" + " ::/HOLE.A");
    test::mtools("mcopy", img, dir / "a" + " ::/KEEP.B");
    test::mtools("mdel", img, "::/HOLE.A");
    const auto fsck = support::run("fsck.fat -n " + img);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(fsck.output, m, std::regex(R"((\d+)/(\d+) clusters)"))) << fsck.output;
    const std::uint32_t used = std::stoul(m[1]), total = std::stoul(m[2]);
    auto v = test::open_volume(img);
    ASSERT_TRUE(v.has_value());
    Volume& vol = **v.value();
    auto a = Allocator::scan(vol.fat(), vol.allocation_hint());
    ASSERT_TRUE(a.has_value()) << a.error().message();
    EXPECT_EQ(a->free_clusters(), total - used) << c.args;
    EXPECT_GT(a->free_runs(), 1u) << c.args << ": populate() leaves holes";
  }
}

// set_chain against set_entry applied to the bytes the file held.
TEST(FatTableSetChain, WritesWhatSetEntryWouldKeepingFat32HighBitsAcrossBlocks) {
  for (FatType t : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    Layout l;
    l.type = t;
    l.sector_size = 512;
    l.reserved_sectors = 4;
    l.num_fats = 2;
    l.fat_sectors = t == FatType::fat12 ? 12 : 64;
    const std::uint32_t bits = t == FatType::fat12 ? 12 : t == FatType::fat16 ? 16 : 32;
    l.cluster_count = std::uint32_t(l.fat_sectors * 512ull * 8 / bits) - 2;
    support::TempDir dir;
    const std::string path = dir / "img";
    support::make_file(path, l.fat_offset(2) + 4096);
    std::mt19937 rng(7);
    std::vector<char> random(l.fat_bytes() * 2);
    for (std::size_t i = 0; i < l.fat_bytes(); ++i) random[i] = random[i + l.fat_bytes()] = char(rng());
    FILE* f = std::fopen(path.c_str(), "r+b");
    std::fseek(f, long(l.fat_offset(0)), SEEK_SET);
    std::fwrite(random.data(), 1, random.size(), f);
    std::fclose(f);
    auto expect = support::read_bytes(path, l.fat_offset(0), std::size_t(l.fat_bytes()));
    fsio::OpenOptions oo;
    oo.write = true;
    oo.direct = false;
    oo.allow_mounted = true;
    auto dev = fsio::Device::open(path, oo).value();
    auto q = fsio::IoQueue::create(dev).value();
    FatCacheOptions o;
    o.block_bytes = 1024;  // runs cross blocks
    auto table = FatTable::open(q, l, o).value();
    const std::uint32_t last = l.cluster_count + 1;
    struct Run {
      std::uint32_t first, count, tail;
    };
    for (const Run r : {Run{2, 1, end_of_chain(t)}, Run{3, 700, 900}, Run{900, 5, end_of_chain(t)},
                        Run{last - 300, 301, end_of_chain(t)}}) {
      ASSERT_TRUE(table.set_chain(r.first, r.count, r.tail).has_value());
      for (std::uint32_t n = r.first; n < r.first + r.count; ++n)
        set_entry(t, expect, n, n + 1 < r.first + r.count ? n + 1 : r.tail);
    }
    EXPECT_FALSE(table.set_chain(last, 2, 0).has_value()) << "past the last entry";
    ASSERT_TRUE(table.flush().has_value());
    for (std::uint32_t copy = 0; copy < 2; ++copy)
      EXPECT_TRUE(support::read_bytes(path, l.fat_offset(copy), std::size_t(l.fat_bytes())) == expect)
          << fat_type_name(t) << " copy " << copy;
  }
}

}  // namespace
}  // namespace fat
