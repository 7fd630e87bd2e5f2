// walk_chain on FATs built entry by entry, with the expected prefix, end and
// stop worked out by hand (fsck.fat's repair rules, chain.hpp); loops of
// every shape up to 40 clusters; the bitmap's searches against a naive scan.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "fat/bitmap.hpp"
#include "fat/chain.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

// A zeroed FAT on an image file; set() builds chains in the cache.
struct Fat {
  support::TempDir dir;
  Layout layout;
  fsio::Device dev;
  fsio::IoQueue queue;
  FatTable table;

  static Layout make(FatType type, std::uint32_t clusters) {
    Layout l;
    l.type = type;
    l.reserved_sectors = 1;
    l.num_fats = 1;
    l.cluster_count = clusters;
    l.fat_sectors = std::uint32_t((entries_bytes(type, clusters + 2) + 511) / 512);
    return l;
  }
  static fsio::Device open(const std::string& path, const Layout& l) {
    support::make_file(path, l.fat_offset(1));
    fsio::OpenOptions oo;
    oo.direct = false;
    return fsio::Device::open(path, oo).value();
  }
  explicit Fat(FatType type = FatType::fat32, std::uint32_t clusters = 60000)
      : layout(make(type, clusters)),
        dev(open(dir / "img", layout)),
        queue(fsio::IoQueue::create(dev).value()),
        table(FatTable::open(queue, layout).value()) {}

  std::uint32_t eoc() const { return end_of_chain(layout.type); }
  // Links the clusters in order; the last gets `tail`.
  void link(const std::vector<std::uint32_t>& clusters, std::uint32_t tail) {
    for (std::size_t i = 0; i + 1 < clusters.size(); ++i)
      ASSERT_TRUE(table.set(clusters[i], clusters[i + 1]).has_value());
    ASSERT_TRUE(table.set(clusters.back(), tail).has_value());
  }
  Chain walk(std::uint32_t first, std::vector<std::pair<std::uint32_t, std::uint32_t>>* runs = nullptr) {
    auto r = walk_chain(table, first,
                        runs ? RunVisitor([runs](std::uint32_t a, std::uint32_t n) {
                          runs->emplace_back(a, n);
                          return true;
                        })
                             : RunVisitor{});
    EXPECT_TRUE(r.has_value());
    return r.value();
  }
};

using Runs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

TEST(WalkChain, ASoundChainIsHandedOutAsRunsOfConsecutiveClusters) {
  Fat f;
  f.link({10, 11, 20, 21, 22, 5}, f.eoc());
  Runs runs;
  const Chain c = f.walk(10, &runs);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.length, 6u);
  EXPECT_EQ(c.last, 5u);
  EXPECT_EQ(c.stop, f.eoc());
  EXPECT_EQ(runs, (Runs{{10, 2}, {20, 3}, {5, 1}}));
  EXPECT_EQ(describe(c), "chain from 10: 6 clusters, ending at 5");
  EXPECT_STREQ(chain_end_name(c.end), "end of chain");
}

TEST(WalkChain, AnyEndOfChainMarkEndsIt) {
  for (FatType t : {FatType::fat12, FatType::fat16, FatType::fat32}) {
    Fat f(t, 3000);
    for (std::uint32_t mark = entry_mask(t) - 7; mark <= entry_mask(t) && mark != 0; ++mark) {
      f.link({7, 8}, mark);
      const Chain c = f.walk(7);
      EXPECT_TRUE(c.ok()) << fat_type_name(t) << " " << mark;
      EXPECT_EQ(c.length, 2u);
      EXPECT_EQ(c.stop, mark);
    }
  }
}

TEST(WalkChain, AFreeOrBadClusterIsDroppedAndTheOneBeforeEndsThePrefix) {
  Fat f;
  f.link({10, 11, 12}, 0);  // FAT[12] free
  Chain c = f.walk(10);
  EXPECT_EQ(c.end, ChainEnd::free_cluster);
  EXPECT_EQ(c.length, 2u);
  EXPECT_EQ(c.last, 11u);
  EXPECT_EQ(c.stop, 12u);
  EXPECT_EQ(describe(c), "chain from 10: reaches free cluster 12 after 2 clusters");
  f.link({30, 31}, bad_cluster(FatType::fat32));
  c = f.walk(30);
  EXPECT_EQ(c.end, ChainEnd::bad_cluster);
  EXPECT_EQ(c.length, 1u);
  EXPECT_EQ(c.last, 30u);
  EXPECT_EQ(c.stop, 31u);
  c = f.walk(40);  // the first cluster itself is free
  EXPECT_EQ(c.end, ChainEnd::free_cluster);
  EXPECT_EQ(c.length, 0u);
  EXPECT_EQ(c.last, 0u);
  EXPECT_EQ(c.stop, 40u);
  Runs runs;
  f.walk(40, &runs);
  EXPECT_TRUE(runs.empty());
}

TEST(WalkChain, OutOfRangeAndReservedValuesEndTheChainAtTheEntryHoldingThem) {
  Fat f(FatType::fat16, 5000);
  for (std::uint32_t v : {1u, 5002u, 0xFFEFu, 0xFFF0u, 0xFFF6u}) {
    f.link({100, 101}, v);
    const Chain c = f.walk(100);
    EXPECT_EQ(c.end, ChainEnd::out_of_range) << v;
    EXPECT_EQ(c.length, 2u) << v;
    EXPECT_EQ(c.last, 101u);
    EXPECT_EQ(c.stop, v);
  }
  f.link({200}, 5001);  // cluster 5001 is the last one there is
  EXPECT_EQ(f.walk(200).end, ChainEnd::free_cluster);
}

TEST(WalkChain, AFirstClusterThatIsNotAClusterIsBadStart) {
  Fat f(FatType::fat32, 1000);
  for (std::uint32_t first : {0u, 1u, 1002u, 0x0FFFFFFFu}) {
    const Chain c = f.walk(first);
    EXPECT_EQ(c.end, ChainEnd::bad_start) << first;
    EXPECT_EQ(c.length, 0u);
    EXPECT_EQ(c.stop, first);
  }
  EXPECT_NE(f.walk(1001).end, ChainEnd::bad_start);
}

// Every loop shape up to 40 clusters: a tail of mu clusters, then a cycle of
// lambda clusters whose last points back to position mu. The prefix is the
// mu + lambda distinct clusters, each handed out once.
TEST(WalkChain, EveryLoopShapeUpTo40ClustersIsFoundExactly) {
  Fat f(FatType::fat32, 60000);
  std::vector<std::uint32_t> pool(59990);
  std::iota(pool.begin(), pool.end(), 2u);
  std::mt19937 rng(17);
  for (std::uint32_t n = 1; n <= 40; ++n) {
    for (std::uint32_t back = 0; back < n; ++back) {
      std::shuffle(pool.begin(), pool.end(), rng);
      std::vector<std::uint32_t> chain(pool.begin(), pool.begin() + n);
      if (n > 3 && back % 2) std::sort(chain.begin(), chain.end());  // some in runs
      f.link(chain, chain[back]);
      Runs runs;
      const Chain c = f.walk(chain[0], &runs);
      ASSERT_EQ(c.end, ChainEnd::loop) << n << " back to " << back;
      ASSERT_STREQ(chain_end_name(c.end), "loop");
      ASSERT_EQ(c.length, n);
      ASSERT_EQ(c.last, chain[n - 1]);
      ASSERT_EQ(c.stop, chain[back]);
      std::vector<std::uint32_t> seen;
      for (auto [a, k] : runs)
        for (std::uint32_t i = 0; i < k; ++i) seen.push_back(a + i);
      ASSERT_EQ(seen, chain) << n << " back to " << back;
      for (std::uint32_t x : chain) ASSERT_TRUE(f.table.set(x, 0).has_value());
    }
  }
}

// A chain through every cluster of the volume has no loop, and Brent's
// window doubling must not invent one.
TEST(WalkChain, AChainThroughTheWholeVolumeIsNotALoop) {
  Fat f(FatType::fat16, 65000);
  std::vector<std::uint32_t> all(65000);
  std::iota(all.begin(), all.end(), 2u);
  std::shuffle(all.begin(), all.end(), std::mt19937(5));
  f.link(all, f.eoc());
  const Chain c = f.walk(all[0]);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.length, 65000u);
  EXPECT_EQ(c.last, all.back());
  // Close it into one loop through every cluster.
  ASSERT_TRUE(f.table.set(all.back(), all[0]).has_value());
  const Chain l = f.walk(all[0]);
  EXPECT_EQ(l.end, ChainEnd::loop);
  EXPECT_EQ(l.length, 65000u);
  EXPECT_EQ(l.stop, all[0]);
}

TEST(ClusterBitmap, SearchesAgreeWithANaiveScan) {
  std::mt19937 rng(3);
  for (std::uint32_t size : {1u, 63u, 64u, 65u, 130u, 1000u}) {
    ClusterBitmap b(size);
    std::vector<bool> naive(size);
    for (std::uint32_t i = 0; i < size / 3; ++i) {
      const std::uint32_t n = rng() % size;
      EXPECT_EQ(b.test_and_set(n), bool(naive[n]));
      naive[n] = true;
    }
    EXPECT_EQ(b.count(), std::uint64_t(std::count(naive.begin(), naive.end(), true)));
    for (std::uint32_t from = 0; from <= size; ++from) {
      std::uint32_t s = from, c = from;
      while (s < size && !naive[s]) ++s;
      while (c < size && naive[c]) ++c;
      ASSERT_EQ(b.next_set(from), s) << size << " " << from;
      ASSERT_EQ(b.next_clear(from), c) << size << " " << from;
    }
  }
}

}  // namespace
}  // namespace fat
