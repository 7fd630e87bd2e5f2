// The --verify pattern: layout, partial sectors, and a checker that names
// exactly the byte that differs and what the sector claims to be.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "libfsio/endian.hpp"
#include "libfsio/pattern.hpp"

namespace fsio {
namespace {

std::vector<std::byte> stamped(std::uint64_t offset, std::size_t size, std::uint64_t seed) {
  std::vector<std::byte> buf(size);
  stamp_pattern(buf, offset, seed);
  return buf;
}

TEST(Pattern, EachSectorStartsWithItsOffsetAndSeedLittleEndian) {
  auto buf = stamped(0x10000, 4096, 77);
  for (std::size_t s = 0; s < 4096; s += 512) {
    EXPECT_EQ(load<le64>(buf, s).get(), 0x10000 + s);
    EXPECT_EQ(load<le64>(buf, s + 8).get(), 77u);
  }
  EXPECT_EQ(buf[0], std::byte{0x00});
  EXPECT_EQ(buf[2], std::byte{0x01});  // 0x10000 little-endian: 00 00 01 00 ...
}

TEST(Pattern, FillDiffersBetweenSectorsAndSeeds) {
  auto a = stamped(0, 1024, 1);
  auto b = stamped(0, 1024, 2);
  EXPECT_NE(std::memcmp(a.data() + 16, a.data() + 512 + 16, 496), 0);
  EXPECT_NE(std::memcmp(a.data() + 16, b.data() + 16, 496), 0);
  // Not a constant fill: a zeroed or one-byte-pattern block must not pass.
  int distinct = 0;
  for (std::size_t i = 17; i < 512; ++i) distinct += a[i] != a[16];
  EXPECT_GT(distinct, 400);
}

TEST(Pattern, IsDeterministic) {
  EXPECT_EQ(stamped(12345 * 512, 8192, 9), stamped(12345 * 512, 8192, 9));
}

TEST(Pattern, UnalignedBufferGetsTheMatchingSliceOfWholeSectors) {
  auto whole = stamped(4096, 2048, 5);
  for (std::size_t start : {1u, 100u, 511u, 513u}) {
    for (std::size_t len : {1u, 7u, 600u, 2048u - 1024u}) {
      auto part = stamped(4096 + start, len, 5);
      ASSERT_EQ(std::memcmp(part.data(), whole.data() + start, len), 0) << start << "+" << len;
      EXPECT_FALSE(check_pattern(part, 4096 + start, 5)) << start << "+" << len;
    }
  }
}

TEST(Pattern, CheckerAcceptsItsOwnStamp) {
  auto buf = stamped(1 << 20, 65536, 3);
  EXPECT_FALSE(check_pattern(buf, 1 << 20, 3).has_value());
}

TEST(Pattern, FlippedByteIsReportedAtItsExactOffsetWithBothWords) {
  auto buf = stamped(0x200000, 8192, 11);
  const std::size_t at = 5000;
  auto expected_word = load<le64>(buf, at - at % 8).get();
  buf[at] ^= std::byte{0x40};
  auto m = check_pattern(buf, 0x200000, 11);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 0x200000u + at);
  EXPECT_EQ(m->word_offset, 0x200000u + at - at % 8);
  EXPECT_EQ(m->expected, expected_word);
  EXPECT_EQ(m->actual, expected_word ^ (std::uint64_t{0x40} << (8 * (at % 8))));
  // Header intact: the description does not blame a misplaced sector.
  EXPECT_EQ(describe(*m, 11).find("stamp of"), std::string::npos);
}

TEST(Pattern, OnlyTheFirstMismatchIsReported) {
  auto buf = stamped(0, 4096, 1);
  buf[3000] ^= std::byte{1};
  buf[1000] ^= std::byte{1};
  auto m = check_pattern(buf, 0, 1);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 1000u);
}

TEST(Pattern, MisplacedSectorNamesWhereItBelongs) {
  // The data for offset 0x3000 landed at 0x1000.
  auto buf = stamped(0x1000, 512, 4);
  auto wrong = stamped(0x3000, 512, 4);
  auto m = check_pattern(wrong, 0x1000, 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 0x1001u);  // 0x1000 and 0x3000 share their low byte
  EXPECT_TRUE(m->header_read);
  EXPECT_EQ(m->stamped_offset, 0x3000u);
  EXPECT_EQ(m->stamped_seed, 4u);
  EXPECT_NE(describe(*m, 4).find("stamp of offset 0x3000"), std::string::npos) << describe(*m, 4);
  (void)buf;
}

TEST(Pattern, StaleDataFromAnotherSeedIsCaughtAtTheSeedField) {
  auto old = stamped(0, 512, 1);
  auto m = check_pattern(old, 0, 2);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 8u);
  EXPECT_EQ(m->stamped_seed, 1u);
  EXPECT_NE(describe(*m, 2).find("seed 1"), std::string::npos);
}

TEST(Pattern, ZeroedBlockIsAMismatch) {
  std::vector<std::byte> zeros(4096);
  auto m = check_pattern(zeros, 4096, 0x66736962);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 4097u);  // 4096 = 00 10 00 ...: byte 0 matches a zero
  EXPECT_EQ(m->actual, 0u);
  EXPECT_EQ(m->expected, 4096u);
}

TEST(Pattern, MismatchInAPartialBufferKeepsBytesOutsideAsExpected) {
  auto buf = stamped(100, 10, 8);  // bytes 100..109, inside the word at 96
  buf[2] ^= std::byte{0xff};       // absolute 102
  auto m = check_pattern(buf, 100, 8);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 102u);
  EXPECT_EQ(m->word_offset, 96u);
  EXPECT_EQ(m->expected ^ m->actual, std::uint64_t{0xff} << (8 * 6));
  EXPECT_FALSE(m->header_read);
}

}  // namespace
}  // namespace fsio
