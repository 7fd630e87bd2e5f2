#include <gtest/gtest.h>

#include "libfsio/size.hpp"

namespace fsio {
namespace {

std::uint64_t size_of(const char* text) {
  auto r = parse_size(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message());
  return r.value_or(0);
}

TEST(ParseSize, PlainNumberAndLoneBAreBytes) {
  EXPECT_EQ(size_of("0"), 0u);
  EXPECT_EQ(size_of("512"), 512u);
  EXPECT_EQ(size_of("512B"), 512u);
  EXPECT_EQ(size_of("512b"), 512u);
}

TEST(ParseSize, KbIsDecimalKibIsBinary) {
  EXPECT_EQ(size_of("4K"), 4096u);
  EXPECT_EQ(size_of("4k"), 4096u);
  EXPECT_EQ(size_of("4KiB"), 4096u);
  EXPECT_EQ(size_of("4KB"), 4000u);
}

TEST(ParseSize, LargerUnitsScaleByTheirPower) {
  EXPECT_EQ(size_of("1M"), 1ull << 20);
  EXPECT_EQ(size_of("3MiB"), 3ull << 20);
  EXPECT_EQ(size_of("1MB"), 1000000u);
  EXPECT_EQ(size_of("2G"), 2ull << 30);
  EXPECT_EQ(size_of("1GB"), 1000000000u);
  EXPECT_EQ(size_of("1T"), 1ull << 40);
  EXPECT_EQ(size_of("1TB"), 1000000000000u);
  EXPECT_EQ(size_of("1P"), 1ull << 50);
  EXPECT_EQ(size_of("1PB"), 1000000000000000u);
}

TEST(ParseSize, LargestValuesStillFit) {
  EXPECT_EQ(size_of("18446744073709551615"), ~0ull);
  EXPECT_EQ(size_of("16383P"), 16383ull << 50);
}

TEST(ParseSize, RejectsGarbageNamingTheText) {
  for (const char* bad : {"", "abc", "K", "-1", "+1", "12Q", "1.5M", "4 K", "4KK", "4KiBB", "4iB", "4Kb2", " 4K"}) {
    auto r = parse_size(bad);
    ASSERT_FALSE(r.has_value()) << "'" << bad << "' was accepted";
    EXPECT_EQ(r.error().code, Errc::invalid_argument) << bad;
    EXPECT_NE(r.error().message().find("'" + std::string(bad) + "'"), std::string::npos) << r.error().message();
  }
}

TEST(ParseSize, UnknownSuffixIsNamed) {
  auto r = parse_size("12Q");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "size '12Q': unknown suffix 'Q'");
}

TEST(ParseSize, RejectsOverflow) {
  for (const char* big : {"18446744073709551616", "99999999999999999999999", "16384P", "20000000TB"}) {
    auto r = parse_size(big);
    EXPECT_FALSE(r.has_value()) << big << " was accepted as " << r.value_or(0);
  }
}

TEST(FormatSize, ExactBinaryMultiplesHaveNoFraction) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1000), "1000 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
  EXPECT_EQ(format_size(5ull << 40), "5 TiB");
}

TEST(FormatSize, RoundTripsThroughParseForWholeUnits) {
  for (std::uint64_t v : {1ull << 10, 7ull << 20, 3ull << 30}) {
    std::string text = format_size(v);
    text.erase(text.find(' '), 1);  // "7 MiB" -> "7MiB"
    EXPECT_EQ(size_of(text.c_str()), v) << text;
  }
}

TEST(FormatHex, LowerByDefaultUpperOnRequest) {
  EXPECT_EQ(format_hex(0), "0x0");
  EXPECT_EQ(format_hex(0xef53), "0xef53");
  EXPECT_EQ(format_hex(0xef53, true), "0xEF53");
  EXPECT_EQ(format_hex(~std::uint64_t{0}), "0xffffffffffffffff");  // 18 characters and the NUL fit
}

}  // namespace
}  // namespace fsio
