// fio's throttles as ddbench reads and applies them: rate, rate_iops,
// rate_min, rate_process, flow (fio HOWTO "I/O rate" and "flow"), with
// hand-worked numbers; and the job-file options that come with them.
#include <gtest/gtest.h>

#include "cmd/bench/fio_options.hpp"
#include "cmd/bench/run.hpp"
#include "cmd/bench/throttle.hpp"
#include "tests/bench/fio_lines.hpp"

namespace bench {
namespace {

using namespace fsio;

std::string rate_refusal(const char* text) {
  FioJob j = fio_defaults();
  auto st = apply_fio_lines(j, {split_fio_option(text, "job.fio:1")});
  EXPECT_FALSE(st.has_value()) << text;
  return st ? "" : st.error().message();
}

using Pair = std::array<std::uint64_t, 2>;

TEST(Throttle, RateTakesAValuePerDirectionAsBsDoes) {
  EXPECT_EQ(fio_applied({"rate=1m"}).bench.rate.bytes, (Pair{1048576, 1048576}));
  EXPECT_EQ(fio_applied({"rate=500k,"}).bench.rate.bytes, (Pair{512000, 0}));  // reads only
  EXPECT_EQ(fio_applied({"rate=,2m"}).bench.rate.bytes, (Pair{0, 2097152}));   // writes only
  EXPECT_EQ(fio_applied({"rate=1m,500k,1k"}).bench.rate.bytes, (Pair{1048576, 512000}));
  EXPECT_EQ(fio_applied({"kb_base=1000", "rate=1m"}).bench.rate.bytes, (Pair{1000000, 1000000}));
  EXPECT_EQ(fio_applied({"rate_iops=100,50"}).bench.rate.ios, (Pair{100, 50}));
  EXPECT_EQ(fio_applied({"ratemin=1024"}).bench.rate.min_bytes, (Pair{1024, 1024}));
  EXPECT_EQ(fio_applied({"rate_min=,4k"}).bench.rate.min_bytes, (Pair{0, 4096}));
  EXPECT_EQ(fio_applied({"rate_iops_min=10"}).bench.rate.min_ios, (Pair{10, 10}));
  EXPECT_EQ(fio_applied({"ratecycle=250"}).bench.rate.cycle_ms, 250u);
  EXPECT_EQ(fio_defaults().bench.rate.cycle_ms, 1000u);
  EXPECT_TRUE(fio_applied({"rate_process=poisson"}).bench.rate.poisson);
  EXPECT_FALSE(fio_applied({"rate_process=linear"}).bench.rate.poisson);
  EXPECT_NE(rate_refusal("rate_process=burst").find("expected linear or poisson"), std::string::npos);
  EXPECT_NE(rate_refusal("rate=12Q").find("rate '12Q'"), std::string::npos);
}

TEST(Throttle, FlowOptionsAndTheOnesBesideThem) {
  const FioJob j = fio_applied({"flow_id=3", "flow=8", "flow_sleep=100"});
  EXPECT_EQ(j.flow_id, 3u);
  EXPECT_EQ(j.bench.flow.weight, 8u);
  EXPECT_EQ(j.bench.flow.sleep_us, 100u);
  EXPECT_NE(rate_refusal("flow=1001").find("flow"), std::string::npos);  // fio's FLOW_MAX_WEIGHT is 1000
  // threads= is fio's tiobench profile option: without profile=tiobench it does nothing.
  (void)fio_applied({"threads=1"});
  // verify_interval: every 512-byte sector is checked anyway; a finer interval is said.
  EXPECT_TRUE(fio_applied({"verify_interval=512"}).notes.empty());
  EXPECT_EQ(fio_applied({"verify_interval=256"}).notes.size(), 1u);
}

TEST(Throttle, LinearRateIsTheTimeTheIssuedBytesTakeAtTheRate) {
  BenchRate rate;
  rate.bytes = {1048576, 0};  // 1 MiB/s of reads
  RateGate g;
  g.start(rate, 4096, 1000, 1);
  EXPECT_EQ(g.ready_at(), 1000u);  // the first request goes at once
  for (int i = 0; i < 4; ++i) g.issued(dir_read, 131072);
  EXPECT_EQ(g.ready_at(), 1000u + 500000000u);  // 512 KiB at 1 MiB/s: half a second
  g.issued(dir_write, 1 << 20);                 // writes are not capped
  EXPECT_EQ(g.ready_at(), 1000u + 500000000u);
  rate.bytes = {};
  rate.ios = {1000, 0};  // 1000 requests/s: 5 requests take 5 ms
  g.start(rate, 4096, 0, 1);
  for (int i = 0; i < 5; ++i) g.issued(dir_read, 4096);
  EXPECT_EQ(g.ready_at(), 5000000u);
  rate.bytes = {1048576, 0};  // both: the later; 20480 bytes at 1 MiB/s take 19.53125 ms
  g.start(rate, 4096, 0, 1);
  for (int i = 0; i < 5; ++i) g.issued(dir_read, 4096);
  EXPECT_EQ(g.ready_at(), 19531250u);
}

TEST(Throttle, PoissonGapsAverageOneOverTheRate) {
  BenchRate rate;
  rate.ios = {50, 0};
  rate.poisson = true;
  RateGate g;
  g.start(rate, 4096, 0, 42);
  const int n = 20000;
  for (int i = 0; i < n; ++i) g.issued(dir_read, 4096);
  const double mean_ms = double(g.ready_at()) / n / 1e6;
  EXPECT_NEAR(mean_ms, 20.0, 1.0);  // 1/50 s; the standard error of 20000 draws is 0.14 ms
}

TEST(Throttle, FlowLetsJobsRunInTheRatioOfTheirWeights) {
  FlowGroup g;
  g.join(1);
  g.join(3);
  std::uint64_t a = 0, b = 0;
  // Worked by hand: A goes (1 of 1); A again: 1/1 > 1/4, waits; B goes while
  // its part stays at or under 3/4: 0/1, 1/2, 2/3, 3/4; then 4/5 > 3/4 waits.
  EXPECT_TRUE(g.admit(a, 1));
  EXPECT_FALSE(g.admit(a, 1));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(g.admit(b, 3)) << i;
  EXPECT_FALSE(g.admit(b, 3));
  EXPECT_TRUE(g.admit(a, 1));  // 1/5 <= 1/4
  for (int i = 0; i < 10000; ++i) {
    (void)g.admit(a, 1);
    (void)g.admit(b, 3);
  }
  EXPECT_NEAR(double(b) / double(a), 3.0, 0.01);
  // A job that has ended leaves: the other is then held to nothing.
  g.leave(1);
  const std::uint64_t before = b;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(g.admit(b, 3));
  EXPECT_EQ(b, before + 100);
}

BenchOptions rated_null_read(std::uint64_t ios_per_s) {
  BenchOptions o;
  o.rw = BenchRw::read;
  o.bs = 4096;
  o.iodepth = 1;
  o.null_engine = true;
  o.rate.ios = {ios_per_s, 0};
  return o;
}

TEST(Throttle, ARatedRunTakesAtLeastTheTimeTheRateAllows) {
  BenchOptions o = rated_null_read(200);
  auto dev = open_null_target("null", 100 * 4096);
  ASSERT_TRUE(dev) << dev.error().message();
  auto r = run_bench(*dev, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->ios, 100u);
  // The 100th request may go 99/200 s after the first; nothing can make it sooner.
  EXPECT_GE(r->elapsed, 0.495);
}

TEST(Throttle, AJobBelowRateMinEndsWithAnError) {
  BenchOptions o = rated_null_read(100);  // capped at 100 requests/s ...
  o.rate.min_ios = {1000, 0};             // ... and asked for at least 1000
  o.rate.cycle_ms = 100;
  auto dev = open_null_target("null", 1000 * 4096);
  ASSERT_TRUE(dev) << dev.error().message();
  auto r = run_bench(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("below rate_iops_min=1000"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace bench
