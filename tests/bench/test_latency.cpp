// Completion-latency percentiles: fio's log-linear buckets and fio's rule for
// picking a percentile's bucket.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

using namespace fsio;

using H = LatencyHistogram;

TEST(LatencyBuckets, CoverEveryValueContiguouslyAndInOrder) {
  for (unsigned i = 0; i + 1 < H::buckets; ++i) {
    ASSERT_LE(H::bucket_low(i), H::bucket_high(i)) << i;
    ASSERT_EQ(H::bucket_high(i) + 1, H::bucket_low(i + 1)) << i;
  }
  EXPECT_EQ(H::bucket_high(H::buckets - 1), ~std::uint64_t{0});
}

TEST(LatencyBuckets, ValueLandsInTheBucketThatHoldsIt) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const unsigned b = H::bucket_of(v);
    ASSERT_LT(b, H::buckets);
    ASSERT_LE(H::bucket_low(b), v);
    ASSERT_GE(H::bucket_high(b), v);
  }
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 129ull, ~0ull}) {
    const unsigned b = H::bucket_of(v);
    EXPECT_LE(H::bucket_low(b), v);
    EXPECT_GE(H::bucket_high(b), v);
  }
}

TEST(LatencyBuckets, ExactBelow128ThenWithinOneIn64) {
  for (std::uint64_t v = 0; v < 128; ++v) EXPECT_EQ(H::bucket_low(H::bucket_of(v)), v);
  for (std::uint64_t v : {200ull, 5000ull, 123456ull, 98765432ull, 1ull << 40}) {
    const unsigned b = H::bucket_of(v);
    EXPECT_LE(double(H::bucket_high(b) - H::bucket_low(b) + 1) / double(H::bucket_low(b)), 1.0 / 64) << v;
  }
}

TEST(LatencyHistogram, EmptyReportsZeros) {
  H h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(LatencyHistogram, SmallValuesGiveExactPercentiles) {
  H h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.add(v);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(99.9), 100u);  // ceil(99.9) samples: the largest
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_EQ(h.percentile(1), 1u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(LatencyHistogram, RareOutlierShowsOnlyInTheHighPercentiles) {
  H h;
  h.add(10000, 999);
  h.add(5000000);
  EXPECT_NEAR(double(h.percentile(50)), 10000, 10000 / 64.0);
  EXPECT_NEAR(double(h.percentile(99.9)), 10000, 10000 / 64.0);
  EXPECT_NEAR(double(h.percentile(99.95)), 5000000, 5000000 / 64.0);
  EXPECT_EQ(h.max(), 5000000u);
}

TEST(LatencyHistogram, PercentilesOfARandomSampleMatchSortingWithin1Percent) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(11.0, 1.0);  // ~60 us median, long tail
  std::vector<std::uint64_t> all;
  H h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = std::uint64_t(dist(rng));
    all.push_back(v);
    h.add(v);
  }
  std::sort(all.begin(), all.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const auto rank = std::size_t(std::ceil(p / 100 * double(all.size()))) - 1;
    const double exact = double(all[rank]);
    EXPECT_NEAR(double(h.percentile(p)), exact, exact / 100) << "p" << p;
  }
}

TEST(LatencyHistogram, SingleValueIsEveryPercentile) {
  H h;
  h.add(123456);
  for (double p : {0.0, 50.0, 99.9, 100.0}) EXPECT_EQ(h.percentile(p), 123456u);
}

TEST(BlockOrder, RandomVisitsEveryBlockExactlyOnce) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 64ull, 1000ull, 4097ull, 262144ull}) {
    BlockOrder order(n, true, 0x1234);
    std::vector<bool> seen(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto b = order(i);
      ASSERT_LT(b, n);
      ASSERT_FALSE(seen[b]) << "block " << b << " twice, n=" << n;
      seen[b] = true;
    }
  }
}

TEST(BlockOrder, RandomIsNotSequentialAndSequentialIs) {
  const std::uint64_t n = 10000;
  BlockOrder random(n, true, 7), seq(n, false, 7);
  std::uint64_t in_order = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(seq(i), i);
    in_order += i > 0 && random(i) == random(i - 1) + 1;
  }
  EXPECT_LT(in_order, n / 100);
  // The first half of the run touches blocks all over the range.
  std::uint64_t high = 0;
  for (std::uint64_t i = 0; i < n / 2; ++i) high += random(i) >= n / 2;
  EXPECT_NEAR(double(high), n / 4.0, n / 20.0);
}

}  // namespace
}  // namespace bench

namespace bench {
namespace {

// fio's tables (stat.c io_u_lat_n/u/m): "2" holds [0, 2), "4" [2, 4), ...
// "1000" [750, 1000) in each unit; then ms "2000" [1 s, 2 s) and ">=2000".
TEST(LatencyTables, EachValueLandsInFiosEntry) {
  const std::pair<std::uint64_t, unsigned> cases[] = {
      {0, 0},        {1, 0},          {2, 1},           {999, 9},         {1000, 10},     // ns -> us
      {1999, 10},    {2000, 11},      {999999, 19},     {1000000, 20},    {1999999, 20},  // us -> ms
      {2000000, 21}, {999999999, 29}, {1000000000, 30}, {1999999999, 30}, {2000000000, 31}, {~0ull, 31}};
  for (const auto& [ns, slot] : cases) {
    LatencyBuckets b;
    b.add(ns, 3);
    EXPECT_EQ(b.count[slot], 3u) << ns;
  }
}

}  // namespace
}  // namespace bench
