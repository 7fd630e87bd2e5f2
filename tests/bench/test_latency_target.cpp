// fio's latency_target depth search (latency_target.hpp), step by step,
// each expected depth worked out by hand from the rules in fio's HOWTO and
// io_u.c: double while windows meet the target, bisect once one has failed,
// stop after a last window at a depth that no longer moves.
#include <gtest/gtest.h>

#include "cmd/bench/latency_target.hpp"

namespace bench {
namespace {

using Step = LatencyTarget::Step;

constexpr std::uint64_t window = 100;

LatencyTarget search(unsigned iodepth, double percentile = 100) {
  LatencyTargetOptions o;
  o.target_ns = 1000;
  o.window_ns = window;
  o.percentile = percentile;
  return LatencyTarget(o, iodepth, 0);
}

// One window of `fast` requests under the target and `slow` over it, ending at t.
Step run_window(LatencyTarget& s, std::uint64_t t, unsigned fast, unsigned slow = 0) {
  for (unsigned i = 0; i < fast; ++i) EXPECT_EQ(s.completed(500, t - 1), Step::none);
  Step last = Step::none;
  for (unsigned i = 0; i < slow; ++i) last = s.completed(2000, t - 1);
  if (last != Step::none) return last;
  return s.check(t);
}

TEST(LatencyTarget, WithoutATargetTheFullDepthAndNoSteps) {
  LatencyTarget s(LatencyTargetOptions{}, 32, 0);
  EXPECT_FALSE(s.active());
  EXPECT_EQ(s.completed(1u << 30, 5), Step::none);
  EXPECT_EQ(s.check(1u << 30), Step::none);
}

TEST(LatencyTarget, DoublesToTheIodepthThenRunsOneLastWindowAndEnds) {
  auto s = search(8);
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(s.check(window - 1), Step::none);  // the window is not over
  EXPECT_EQ(run_window(s, 1 * window, 4), Step::none);
  EXPECT_EQ(s.depth(), 2u);
  EXPECT_EQ(run_window(s, 2 * window, 4), Step::none);
  EXPECT_EQ(s.depth(), 4u);
  EXPECT_EQ(run_window(s, 3 * window, 4), Step::none);
  EXPECT_EQ(s.depth(), 8u);
  EXPECT_EQ(run_window(s, 4 * window, 4), Step::final_run);  // 16 is over iodepth: 8 stays
  s.drained(4 * window);
  EXPECT_EQ(run_window(s, 5 * window, 4), Step::done);
  EXPECT_EQ(s.depth(), 8u);
}

TEST(LatencyTarget, OneSlowRequestAtPercentile100HalvesTowardsTheLastGoodDepth) {
  auto s = search(16);
  for (std::uint64_t w = 1; w <= 3; ++w) run_window(s, w * window, 2);
  ASSERT_EQ(s.depth(), 8u);  // 1, 2, 4, 8
  // 8 fails at once: between 4 (met) and 8, 6.
  EXPECT_EQ(s.completed(2000, 3 * window + 10), Step::drain);
  EXPECT_EQ(s.depth(), 6u);
  s.drained(3 * window + 20);
  // 6 meets it: halfway to 8, 7. 7 meets it, one below 8: it stays, the last window.
  EXPECT_EQ(run_window(s, 4 * window + 20, 2), Step::none);
  EXPECT_EQ(s.depth(), 7u);
  EXPECT_EQ(run_window(s, 5 * window + 20, 2), Step::final_run);
  s.drained(5 * window + 20);
  EXPECT_EQ(run_window(s, 6 * window + 20, 2), Step::done);
  EXPECT_EQ(s.depth(), 7u);
}

// At depth 1 a failed window is not closed (fio's __lat_target_failed
// returns before starting a new cycle): the next judgement counts both.
TEST(LatencyTarget, BelowThePercentileAWindowFailsAndAtDepthOneItGoesOnCounting) {
  auto s = search(4, 90);
  EXPECT_EQ(run_window(s, window, 8, 2), Step::none);  // 8 of 10 met, 80%: nothing to lower at 1
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(run_window(s, 2 * window, 9, 1), Step::none);  // 17 of 20, 85%: still under
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(run_window(s, 3 * window, 20), Step::none);  // 37 of 40, 92.5%: up to 2
  EXPECT_EQ(s.depth(), 2u);
  EXPECT_EQ(run_window(s, 4 * window, 1, 1), Step::drain);  // a fresh window, 50%: back to 1
  EXPECT_EQ(s.depth(), 1u);
}

TEST(LatencyTarget, ASlowRequestAtDepthOneIsFatalAtPercentile100) {
  auto s = search(4);
  EXPECT_EQ(s.completed(2000, 1), Step::fatal);
}

TEST(LatencyTarget, AWindowWithNoRequestFails) {
  auto s = search(4);
  run_window(s, window, 1);
  ASSERT_EQ(s.depth(), 2u);
  EXPECT_EQ(s.check(2 * window), Step::drain);
  EXPECT_EQ(s.depth(), 1u);
}

}  // namespace
}  // namespace bench
