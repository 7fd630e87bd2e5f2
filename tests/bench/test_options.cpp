// Option validation and the range a run covers: impossible requests are usage errors
// that name the numbers, before any I/O.
#include <gtest/gtest.h>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

using namespace fsio;

BenchOptions opts() {
  BenchOptions o;
  o.bs = 4096;
  o.iodepth = 32;
  return o;
}

void expect_usage(const Status& st, const std::string& needle) {
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_NE(st.error().message().find(needle), std::string::npos) << st.error().message();
}

TEST(BenchOptions, DefaultsAreValid) { EXPECT_TRUE(validate(BenchOptions{}).has_value()); }

TEST(BenchOptions, RwNamesAreFios) {
  EXPECT_EQ(*parse_bench_rw("randwrite"), BenchRw::randwrite);
  EXPECT_EQ(*parse_bench_rw("read"), BenchRw::read);
  for (auto rw : {BenchRw::read, BenchRw::write, BenchRw::randread, BenchRw::randwrite, BenchRw::rw, BenchRw::randrw,
                  BenchRw::trimwrite, BenchRw::randtrimwrite})
    EXPECT_EQ(*parse_bench_rw(bench_rw_name(rw)), rw);
  EXPECT_EQ(*parse_bench_rw("readwrite"), BenchRw::rw);  // fio's other spelling
  auto bad = parse_bench_rw("trim");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
}

TEST(BenchOptions, ZeroOrHugeBlockSizeRefused) {
  auto o = opts();
  o.bs = 0;
  expect_usage(validate(o), "bs 0");
  o.bs = 512u << 20;
  expect_usage(validate(o), "bs");
}

TEST(BenchOptions, IodepthMustBePositiveAndBounded) {
  auto o = opts();
  o.iodepth = 0;
  expect_usage(validate(o), "iodepth 0");
  o.iodepth = 100000;
  expect_usage(validate(o), "iodepth 100000");
}

TEST(BenchOptions, BuffersBeyond4GiBRefused) {
  auto o = opts();
  o.bs = 256u << 20;
  o.iodepth = 32;
  expect_usage(validate(o), "bs x iodepth");
}

TEST(BenchOptions, BatchLargerThanIodepthRefused) {
  auto o = opts();
  o.batch = 33;
  expect_usage(validate(o), "batch 33");
  o.batch = 32;
  EXPECT_TRUE(validate(o).has_value());
}

TEST(BenchOptions, NegativeRuntimeRefused) {
  auto o = opts();
  o.runtime = -1;
  expect_usage(validate(o), "runtime");
}

TEST(BenchOptions, TimeBasedNeedsRuntime) {
  auto o = opts();
  o.time_based = true;
  expect_usage(validate(o), "--time-based needs --runtime");
  o.runtime = 1;
  EXPECT_TRUE(validate(o).has_value());
}

TEST(BenchOptions, SyncOnlyForWrites) {
  auto o = opts();
  o.sync = true;
  expect_usage(validate(o), "--sync");
  o.rw = BenchRw::randwrite;
  EXPECT_TRUE(validate(o).has_value());
}

TEST(ResolveRange, DefaultCoversOffsetToTheEndIncludingAPartialBlock) {
  auto o = opts();
  o.offset = 8192;
  auto r = resolve_range(o, 1000000, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->begin, 8192u);
  EXPECT_EQ(r->end, 1000000u);
  EXPECT_EQ(r->blocks, (1000000u - 8192 + 4095) / 4096);
}

TEST(ResolveRange, SizeIsHonoured) {
  auto o = opts();
  o.offset = 4096;
  o.size = 40960;
  auto r = resolve_range(o, 1 << 20, 512);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->end, 4096u + 40960);
  EXPECT_EQ(r->blocks, 10u);
}

TEST(ResolveRange, SizePastTheEndRefusedWithNumbers) {
  auto o = opts();
  o.offset = 4096;
  o.size = 1 << 20;
  auto r = resolve_range(o, 1 << 20, 512);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message().find("1048576 bytes"), std::string::npos) << r.error().message();
}

TEST(ResolveRange, OffsetAtTheEndRefused) {
  auto o = opts();
  o.offset = 1 << 20;
  auto r = resolve_range(o, 1 << 20, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("offset 1048576"), std::string::npos);
}

TEST(ResolveRange, DirectIoNeedsAlignedOffsetBsAndSize) {
  auto o = opts();
  o.offset = 1000;
  EXPECT_FALSE(resolve_range(o, 1 << 20, 512));
  EXPECT_TRUE(resolve_range(o, 1 << 20, 1));  // buffered: anything goes
  o.offset = 0;
  o.bs = 1000;
  EXPECT_FALSE(resolve_range(o, 1 << 20, 512));
  o.bs = 4096;
  o.size = 5000;
  EXPECT_FALSE(resolve_range(o, 1 << 20, 512));
  o.size = 5120;
  EXPECT_TRUE(resolve_range(o, 1 << 20, 512));
}

TEST(ResolveRange, OddEndIsFineWhenItIsTheDevicesEnd) {
  auto o = opts();
  auto r = resolve_range(o, 1000001, 4096);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->end, 1000001u);
  EXPECT_EQ(r->blocks, 245u);
}

TEST(ResolveRange, InvalidOptionsAreCaughtToo) {
  auto o = opts();
  o.bs = 0;
  EXPECT_FALSE(resolve_range(o, 1 << 20, 1));
}

}  // namespace
}  // namespace bench
