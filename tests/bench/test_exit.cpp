// fio's number_ios, thinktime and exitall's early end, as run_bench does
// them, on fio's null engine (requests complete at once, nothing moves), so
// the counts and times are the options' alone. Expected values are the
// options' own arithmetic (fio HOWTO: number_ios, thinktime, exitall).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "cmd/bench/fio_options.hpp"
#include "cmd/bench/run.hpp"
#include "tests/bench/fio_lines.hpp"

namespace bench {
namespace {

BenchOptions null_job() {
  BenchOptions o;
  o.null_engine = true;
  o.bs = 4096;
  o.iodepth = 8;
  o.size = 1 << 20;
  return o;
}

BenchResult run_null(const BenchOptions& o) {
  auto dev = open_null_target("null.0.0", 1 << 20);
  EXPECT_TRUE(dev.has_value());
  auto r = run_bench(*dev, o);
  EXPECT_TRUE(r.has_value()) << r.error().message();
  return r ? std::move(*r) : BenchResult{};
}

TEST(NumberIos, StopsAfterThatManyRequestsTimesLoops) {
  auto o = null_job();
  o.number_ios = 10;
  o.loops = 2;
  const auto r = run_null(o);
  EXPECT_EQ(r.ios, 20u);  // fio: number_ios x loops, though 1 MiB is 256 requests
  EXPECT_FALSE(r.interrupted);
}

TEST(Thinktime, EachRequestGoesOutAloneAndTheNextWaitsTheThinktime) {
  auto o = null_job();
  o.number_ios = 5;
  o.thinktime_us = 10000;
  const auto r = run_null(o);
  EXPECT_EQ(r.ios, 5u);
  EXPECT_EQ(r.depths.level[0], 5u);  // every request submitted with none other in flight
  EXPECT_GE(r.elapsed, 0.040);       // four sleeps of 10 ms between the first and the last
}

TEST(Exitall, AJobAlreadyEndedByAnotherIssuesNothing) {
  std::atomic<bool> stop{true};
  auto o = null_job();
  o.terminate = &stop;
  const auto r = run_null(o);
  EXPECT_EQ(r.ios, 0u);
  EXPECT_FALSE(r.interrupted);  // ended by another job, not by a signal
}

TEST(Exitall, EndsATimeBasedJobAndASleepWithinMoments) {
  std::atomic<bool> stop{false};
  auto o = null_job();
  o.terminate = &stop;
  o.time_based = true;
  o.runtime = 30;
  o.thinktime_us = 5000000;  // a 5 s sleep after every request
  std::thread ender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_null(o);
  ender.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(r.ios, 1u);
  EXPECT_FALSE(r.interrupted);
}

// fio's td_error.c: a kind without a list goes on after EIO and EILSEQ; a
// list replaces them and turns its kind on.
TEST(ContinueOnError, DefaultListIsEioAndEilseqAndAListTurnsItsKindOn) {
  const auto w = fio_applied({"continue_on_error=write"}).bench.errors;
  EXPECT_TRUE(w.ignorable(error_write, EIO));
  EXPECT_FALSE(w.ignorable(error_write, ENOSPC));
  EXPECT_FALSE(w.ignorable(error_read, EIO));
  const auto l = fio_applied({"ignore_error=EIO:5,ENOSPC:28"}).bench.errors;
  EXPECT_TRUE(l.ignorable(error_read, EIO));
  EXPECT_TRUE(l.ignorable(error_write, ENOSPC));
  EXPECT_FALSE(l.ignorable(error_write, EIO));
  EXPECT_TRUE(l.given);
}

TEST(ContinueOnError, GoingOnAfterAVerifyMismatchIsRefused) {
  for (const char* line : {"continue_on_error=verify", "continue_on_error=all", "ignore_error=,,84"}) {
    FioJob j = fio_defaults();
    auto st = apply_fio_lines(j, {split_fio_option(line, "job.fio:1")});
    ASSERT_FALSE(st.has_value()) << line;
    EXPECT_NE(st.error().message().find("verify mismatch"), std::string::npos) << st.error().message();
  }
}

}  // namespace
}  // namespace bench
