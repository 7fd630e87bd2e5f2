// fio's steady-state criteria (steadystate.hpp) on seconds worked by hand:
// the mean deviation and the least-squares slope, absolute or as a percent
// of the mean, and ss= as fio spells it.
#include <gtest/gtest.h>

#include "cmd/bench/steadystate.hpp"

namespace bench {
namespace {

SteadyStateOptions parsed(const char* text, unsigned dur) {
  SteadyStateOptions o;
  auto st = parse_steadystate(text, 1024, o);
  EXPECT_TRUE(st.has_value()) << text;
  o.duration_s = dur;
  return o;
}

TEST(SteadyStateOptions, ReadAsFioSpellsThemAndNamedAsItsJsonDoes) {
  EXPECT_EQ(parsed("iops:10%", 1).name(), "iops:10.000000%");
  EXPECT_EQ(parsed("bw_slope:0.5%", 1).name(), "bw_slope:0.500000%");
  const auto bw = parsed("bw:1m", 1);  // an absolute bandwidth takes fio's units
  EXPECT_EQ(bw.limit, 1048576.0);
  EXPECT_FALSE(bw.percent);
  SteadyStateOptions o;
  EXPECT_FALSE(parse_steadystate("lat:10%", 1024, o).has_value());
  EXPECT_FALSE(parse_steadystate("iops", 1024, o).has_value());
}

TEST(SteadyState, DeviationJudgesOnlyOnceTheWindowIsFull) {
  SteadyState s(parsed("iops:10%", 3));
  EXPECT_FALSE(s.add(100, 0));
  EXPECT_FALSE(s.add(110, 0));
  // 100, 110, 90: mean 100, farthest 10 from it, 10% of the mean: not under 10%.
  EXPECT_FALSE(s.add(90, 0));
  EXPECT_DOUBLE_EQ(s.report().criterion, 10.0);
  EXPECT_DOUBLE_EQ(s.report().deviation, 10.0);
  // 110, 90, 100: the same; then 90, 100, 96: mean 95.33, farthest 5.33, 5.6%.
  EXPECT_FALSE(s.add(100, 0));
  EXPECT_TRUE(s.add(96, 0));
  EXPECT_NEAR(s.report().criterion, 100.0 * (16.0 / 3) / (286.0 / 3), 1e-9);
  EXPECT_EQ(s.final_report().iops, (std::vector<std::uint64_t>{90, 100, 96}));
}

TEST(SteadyState, SlopeIsTheLeastSquaresLineThroughTheSeconds) {
  // bw 100, 120, 140: slope 20 a second; mean 120, 16.67% of it.
  SteadyState pct(parsed("bw_slope:20%", 3));
  pct.add(0, 100);
  pct.add(0, 120);
  EXPECT_TRUE(pct.add(0, 140));
  EXPECT_DOUBLE_EQ(pct.report().slope, 20.0);
  EXPECT_NEAR(pct.report().criterion, 100.0 * 20 / 120, 1e-9);
  // Falling as fast, an absolute limit of 20 a second is not met (|-20| is not under 20).
  SteadyState abs(parsed("iops_slope:20", 3));
  abs.add(140, 0);
  abs.add(120, 0);
  EXPECT_FALSE(abs.add(100, 0));
  EXPECT_DOUBLE_EQ(abs.report().criterion, -20.0);
}

TEST(SteadyState, AnUnfinishedWindowIsReportedOldestFirstThenZeros) {
  SteadyState s(parsed("iops:1%", 4));
  s.add(5, 50);
  s.add(6, 60);
  const auto r = s.final_report();
  EXPECT_EQ(r.iops, (std::vector<std::uint64_t>{5, 6, 0, 0}));
  EXPECT_EQ(r.bw_mean(), 110u / 4);
  EXPECT_FALSE(r.attained);
}

}  // namespace
}  // namespace bench
