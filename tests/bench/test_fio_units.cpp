// fio's units (fio HOWTO "Parameter types"), worked out by hand: kb_base
// 1024 makes k, kb and ki all 1024; kb_base 1000 makes k and kb 1000 and
// leaves ki at 1024; times default to seconds.
#include <gtest/gtest.h>

#include "cmd/bench/fio_units.hpp"

namespace bench {
namespace {

using namespace fsio;

std::uint64_t size(const char* text, unsigned kb_base = 1024) {
  auto r = parse_fio_size(text, kb_base);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message());
  return r.value_or(0);
}

void refused(const char* text, const char* needle) {
  auto r = parse_fio_size(text);
  ASSERT_FALSE(r.has_value()) << text << " gave " << *r;
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(FioSize, EveryKSpellingIs4096WithTheDefaultKbBase) {
  for (const char* t : {"4k", "4K", "4kb", "4KB", "4kB", "4ki", "4Ki", "4kib", "4KiB", "4096", "4096b", "4096B"})
    EXPECT_EQ(size(t), 4096u) << t;
}

TEST(FioSize, KbBase1000MakesSiPrefixesDecimalAndKeepsIecBinary) {
  EXPECT_EQ(size("4k", 1000), 4000u);
  EXPECT_EQ(size("4KB", 1000), 4000u);
  EXPECT_EQ(size("4KiB", 1000), 4096u);
  EXPECT_EQ(size("1m", 1000), 1000000u);
  EXPECT_EQ(size("1mi", 1000), 1048576u);
}

TEST(FioSize, LargerUnits) {
  EXPECT_EQ(size("1m"), 1048576u);
  EXPECT_EQ(size("2G"), 2ull << 30);
  EXPECT_EQ(size("3t"), 3ull << 40);
  EXPECT_EQ(size("1p"), 1ull << 50);
  EXPECT_EQ(size("0x1000"), 4096u);
  EXPECT_EQ(size("0x10k"), 16384u);
}

TEST(FioSize, FractionsThatAreWholeBytes) {
  EXPECT_EQ(size("1.5M"), 1572864u);
  EXPECT_EQ(size("0.5k"), 512u);
  EXPECT_EQ(size("2.25G"), 2415919104u);
  refused("1.3k", "whole number of bytes");  // 1331.2
  refused("1.5", "whole number of bytes");
}

TEST(FioSize, BadTextIsRefusedWithTheReason) {
  refused("", "empty");
  refused("k", "must start with a number");
  refused("12Q", "unknown unit 'Q'");
  refused("4kk", "unknown unit");
  refused("-4k", "must start with a number");
  refused("1.", "no digits after");
  refused("99999999999999999999", "too large");
  refused("16384p", "too large");
  refused("0x", "unknown unit");
}

TEST(FioSize, PercentOfTheTargetRoundsDownToTheGranule) {
  auto p = parse_fio_size_or_percent("10%");
  ASSERT_TRUE(p);
  ASSERT_TRUE(p->is_percent());
  // fio 3.33 on a 64 MiB file, bs=4k: 6709248 bytes (1638 blocks).
  EXPECT_EQ(p->resolve(64u << 20, 4096), 6709248u);
  EXPECT_EQ(parse_fio_size_or_percent("100%")->resolve(1000, 1), 1000u);
  EXPECT_EQ(parse_fio_size_or_percent("12.5%")->resolve(800, 1), 100u);
  EXPECT_EQ(parse_fio_size_or_percent("8k")->resolve(1, 4096), 8192u);
  EXPECT_FALSE(parse_fio_size_or_percent("0%"));
  EXPECT_FALSE(parse_fio_size_or_percent("101%"));
  EXPECT_FALSE(parse_fio_size_or_percent("x%"));
}

TEST(FioTime, UnitsAndTheDefaultSeconds) {
  EXPECT_DOUBLE_EQ(*parse_fio_time("30"), 30.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("30s"), 30.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("30sec"), 30.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("2m"), 120.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("2M"), 120.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("1h"), 3600.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("1d"), 86400.0);
  EXPECT_DOUBLE_EQ(*parse_fio_time("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_fio_time("250msec"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_fio_time("100us"), 1e-4);
  EXPECT_DOUBLE_EQ(*parse_fio_time("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_fio_time("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_fio_time("1000", 1e-3), 1.0);  // an option whose unit is ms
}

TEST(FioTime, NegativeExponentsAndNonNumbersAreRefused) {
  for (const char* t : {"", "-1", "1e-9", "1e400", "nan", "inf", "5 s", "5x", "s"}) {
    auto r = parse_fio_time(t);
    EXPECT_FALSE(r.has_value()) << t;
  }
}

TEST(FioBool, OnlyTruthAndFalsehood) {
  EXPECT_TRUE(*parse_fio_bool("1"));
  EXPECT_TRUE(*parse_fio_bool("true"));
  EXPECT_FALSE(*parse_fio_bool("0"));
  EXPECT_FALSE(*parse_fio_bool("off"));
  EXPECT_FALSE(parse_fio_bool("2"));
  EXPECT_FALSE(parse_fio_bool(""));
}

TEST(FioUint, RangeIsChecked) {
  EXPECT_EQ(*parse_fio_uint("32", 1, 64), 32u);
  EXPECT_EQ(*parse_fio_uint("0x20", 1, 64), 32u);
  EXPECT_FALSE(parse_fio_uint("0", 1, 64));
  EXPECT_FALSE(parse_fio_uint("65", 1, 64));
  EXPECT_FALSE(parse_fio_uint("4k", 1, 1 << 20));
  EXPECT_FALSE(parse_fio_uint("1.5", 1, 64));
}

}  // namespace
}  // namespace bench
