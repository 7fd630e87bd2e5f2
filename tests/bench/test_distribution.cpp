// fio's random_distribution as ddbench draws it, against numbers worked out
// by hand: zoned's shares (fio HOWTO's 60/10:30/20:... example), zipf's
// first two ranks (1/zeta(n) and 0.5^theta/zeta(n), zeta(1000) for theta
// 1.2 = 4.33576), pareto's rule (h = 0.9: 90% of the accesses go to 10% of
// the blocks), and the parser's refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "cmd/bench/distribution.hpp"

namespace bench {
namespace {

// Draws `draws` blocks of [0, n) and counts how often each came up.
std::vector<unsigned> histogram(const std::string& spec, std::uint64_t n, unsigned draws) {
  auto d = parse_random_distribution(spec);
  EXPECT_TRUE(d) << spec;
  BlockPicker p(*d, n, 7);
  std::vector<unsigned> h(n);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (unsigned i = 0; i < draws; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const std::uint64_t r = x * 0x2545F4914F6CDD1DULL;
    ++h[p.next(double(r >> 11) / 9007199254740992.0, r)];
  }
  return h;
}

TEST(Distribution, ZonedSendsEachShareToItsPartOfTheRange) {
  const auto h = histogram("zoned:60/10:30/20:8/30:2/40", 1000, 200000);
  auto share = [&](unsigned lo, unsigned hi) {
    unsigned long s = 0;
    for (unsigned i = lo; i < hi; ++i) s += h[i];
    return double(s) / 200000;
  };
  EXPECT_NEAR(share(0, 100), 0.60, 0.01);
  EXPECT_NEAR(share(100, 300), 0.30, 0.01);
  EXPECT_NEAR(share(300, 600), 0.08, 0.01);
  EXPECT_NEAR(share(600, 1000), 0.02, 0.005);
}

TEST(Distribution, ZipfHottestBlocksComeUpAsGraysMethodGives) {
  auto h = histogram("zipf:1.2", 1000, 400000);
  std::sort(h.begin(), h.end(), std::greater<>());
  EXPECT_NEAR(double(h[0]) / 400000, 0.23064, 0.005);  // 1 / zeta(1000)
  EXPECT_NEAR(double(h[1]) / 400000, 0.10039, 0.005);  // 0.5^1.2 / zeta(1000)
}

TEST(Distribution, ParetoNinetyPercentOfAccessesGoToTenPercentOfBlocks) {
  auto h = histogram("pareto:0.9", 1000, 400000);
  std::sort(h.begin(), h.end(), std::greater<>());
  unsigned long top = 0;
  for (unsigned i = 0; i < 100; ++i) top += h[i];
  EXPECT_NEAR(double(top) / 400000, 0.90, 0.02);
}

TEST(Distribution, ParserTakesFiosSpellingsAndRefusesTheRest) {
  EXPECT_EQ(parse_random_distribution("random")->kind, RandomDistribution::Kind::uniform);
  const auto z = parse_random_distribution("zipf:0.5");
  ASSERT_TRUE(z);
  EXPECT_EQ(z->kind, RandomDistribution::Kind::zipf);
  EXPECT_DOUBLE_EQ(z->param, 0.5);
  const auto zones = parse_random_distribution("zoned:50/5:30/15:20/80");
  ASSERT_TRUE(zones);
  ASSERT_EQ(zones->zones.size(), 3u);
  EXPECT_EQ(zones->zones[1].access, 30u);
  EXPECT_EQ(zones->zones[1].range, 15u);
  const auto rest = parse_random_distribution("zoned:50/5:30/15:20/");  // the last range blank: the rest, 80
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest->zones[2].range, 80u);
  EXPECT_FALSE(parse_random_distribution("zoned:50/:50/50"));  // blank only in the last zone
  for (const char* bad : {"zipf", "zipf:1", "zipf:x", "pareto:1.5", "normal:10", "zoned_abs:60/10g:40/20g",
                          "zoned:50/5:30/15", "zipf:1.2:0.25"})
    EXPECT_FALSE(parse_random_distribution(bad)) << bad;
}

}  // namespace
}  // namespace bench
