// The --verify pattern, judged against expectations that do not come from
// cmd/bench/pattern.cpp: bytes worked out by hand from the layout in
// pattern.hpp, words computed by a separate implementation (Python, from the
// same description) and pasted here, and splitmix64's published first output.
// A small reference written from pattern.hpp is anchored to those numbers
// first and then used where whole sectors are needed.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "cmd/bench/pattern.hpp"

namespace bench {
namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // splitmix64's increment

// splitmix64's output function (Steele, Lea, Flood 2014).
std::uint64_t splitmix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// pattern.hpp's sector, written from its comment: le64 offset, le64 seed,
// 62 words of a splitmix64 stream seeded with splitmix(seed ^ splitmix(off + golden)).
std::array<std::uint64_t, 64> reference_words(std::uint64_t off, std::uint64_t seed) {
  std::array<std::uint64_t, 64> w{off, seed};
  std::uint64_t state = splitmix(seed ^ splitmix(off + kGolden));
  for (std::size_t i = 2; i < 64; ++i) w[i] = splitmix(state += kGolden);
  return w;
}

// [offset, offset + size) of the reference pattern, byte by byte, little-endian.
std::vector<std::byte> reference(std::uint64_t offset, std::size_t size, std::uint64_t seed) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) {
    const std::uint64_t at = offset + i;
    const auto w = reference_words(at - at % 512, seed);
    const std::uint64_t word = w[(at % 512) / 8];
    out[i] = std::byte(word >> (8 * (at % 8)));
  }
  return out;
}

std::vector<std::byte> stamped(std::uint64_t offset, std::size_t size, std::uint64_t seed) {
  std::vector<std::byte> buf(size);
  stamp_pattern(buf, offset, seed);
  return buf;
}

std::vector<std::byte> bytes(std::initializer_list<unsigned> list) {
  std::vector<std::byte> out;
  for (unsigned b : list) out.push_back(std::byte(b));
  return out;
}

TEST(PatternReference, MatchesSplitMix64AndTheHandComputedWords) {
  // The first output of splitmix64 seeded with 0, as published with it.
  EXPECT_EQ(splitmix(kGolden), 0xe220a8397b1dcdafULL);
  // Words 2, 3 and 63 of three sectors, from a Python implementation.
  const struct {
    std::uint64_t off, seed, w2, w3, w63;
  } cases[] = {
      {0x0, 0x0, 0x568a9b0b1a2c05ecULL, 0x44e5b8b147ef718bULL, 0xbc07eee8dff3de5fULL},
      {0x200, 0x66736962, 0x70776c92a62ef0dcULL, 0x0c55fa2f7b1a23a9ULL, 0xad85e6b61e7d9901ULL},
      {0x1000, 0x5, 0xff83ef2717af44daULL, 0xe1f0a2cbd1accd03ULL, 0x95cb1c91664964f0ULL},
  };
  for (const auto& c : cases) {
    const auto w = reference_words(c.off, c.seed);
    EXPECT_EQ(w[2], c.w2) << std::hex << c.off;
    EXPECT_EQ(w[3], c.w3) << std::hex << c.off;
    EXPECT_EQ(w[63], c.w63) << std::hex << c.off;
  }
}

TEST(Pattern, HeaderIsTheOffsetThenTheSeedLittleEndian) {
  const auto buf = stamped(0x10200, 1024, 0x66736962);
  EXPECT_EQ(std::vector(buf.begin(), buf.begin() + 16),
            bytes({0x00, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0x62, 0x69, 0x73, 0x66, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector(buf.begin() + 512, buf.begin() + 528),
            bytes({0x00, 0x04, 0x01, 0x00, 0, 0, 0, 0, 0x62, 0x69, 0x73, 0x66, 0, 0, 0, 0}));
}

TEST(Pattern, FillWordsAreTheHandComputedOnes) {
  const auto buf = stamped(0x200, 512, 0x66736962);
  // Word 2 = 0x70776c92a62ef0dc, little-endian at bytes 16..23; word 63 at 504..511.
  EXPECT_EQ(std::vector(buf.begin() + 16, buf.begin() + 24), bytes({0xdc, 0xf0, 0x2e, 0xa6, 0x92, 0x6c, 0x77, 0x70}));
  EXPECT_EQ(std::vector(buf.begin() + 504, buf.end()), bytes({0x01, 0x99, 0x7d, 0x1e, 0xb6, 0xe6, 0x85, 0xad}));
}

TEST(Pattern, WholeBuffersEqualTheReference) {
  for (std::uint64_t seed : {0ull, 5ull, 0x66736962ull, ~0ull})
    EXPECT_EQ(stamped(0x3000, 8192, seed), reference(0x3000, 8192, seed)) << seed;
}

TEST(Pattern, UnalignedPiecesAreTheBytesAtThoseOffsets) {
  // Sector 0x1000, seed 5, worked out in Python: bytes 4..11, 100..107, 504..511.
  EXPECT_EQ(stamped(0x1004, 8, 5), bytes({0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00}));
  EXPECT_EQ(stamped(0x1000 + 100, 8, 5), bytes({0x84, 0x2c, 0x81, 0xc0, 0xd4, 0x1e, 0x7c, 0x89}));
  EXPECT_EQ(stamped(0x1000 + 504, 8, 5), bytes({0xf0, 0x64, 0x49, 0x66, 0x91, 0x1c, 0xcb, 0x95}));
  for (std::uint64_t start : {1u, 100u, 511u, 513u})
    for (std::size_t len : {1u, 7u, 600u, 1024u})
      EXPECT_EQ(stamped(4096 + start, len, 5), reference(4096 + start, len, 5)) << start << "+" << len;
}

TEST(Pattern, CheckerAcceptsTheReferenceAtAnyAlignment) {
  EXPECT_FALSE(check_pattern(reference(1 << 20, 65536, 3), 1 << 20, 3).has_value());
  EXPECT_FALSE(check_pattern(reference(4096 + 100, 600, 5), 4096 + 100, 5).has_value());
}

TEST(Pattern, FlippedByteIsReportedAtItsExactOffsetWithBothWords) {
  auto buf = reference(0x200000, 8192, 11);
  const std::size_t at = 5000;  // sector 9 (0x201200), byte 392, word 49
  const std::uint64_t expected_word = reference_words(0x201200, 11)[49];
  buf[at] ^= std::byte{0x40};
  auto m = check_pattern(buf, 0x200000, 11);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 0x200000u + at);
  EXPECT_EQ(m->word_offset, 0x200000u + at);  // 5000 is a multiple of 8
  EXPECT_EQ(m->expected, expected_word);
  EXPECT_EQ(m->actual, expected_word ^ 0x40);
  // Header intact: the description does not blame a misplaced sector.
  EXPECT_EQ(describe(*m, 11).find("stamp of"), std::string::npos);
}

TEST(Pattern, OnlyTheFirstMismatchIsReported) {
  auto buf = reference(0, 4096, 1);
  buf[3000] ^= std::byte{1};
  buf[1000] ^= std::byte{1};
  auto m = check_pattern(buf, 0, 1);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 1000u);
}

TEST(Pattern, MisplacedSectorNamesWhereItBelongs) {
  // The data for offset 0x3000 landed at 0x1000.
  auto m = check_pattern(reference(0x3000, 512, 4), 0x1000, 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 0x1001u);  // 0x1000 and 0x3000 share their low byte
  EXPECT_TRUE(m->header_read);
  EXPECT_EQ(m->stamped_offset, 0x3000u);
  EXPECT_EQ(m->stamped_seed, 4u);
  EXPECT_NE(describe(*m, 4).find("stamp of offset 0x3000"), std::string::npos) << describe(*m, 4);
}

TEST(Pattern, StaleDataFromAnotherSeedIsCaughtAtTheSeedField) {
  auto m = check_pattern(reference(0, 512, 1), 0, 2);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 8u);
  EXPECT_EQ(m->expected, 2u);
  EXPECT_EQ(m->actual, 1u);
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
  auto buf = reference(100, 10, 8);  // bytes 100..109, inside word 12 (96..103) and 13
  buf[2] ^= std::byte{0xff};         // absolute 102
  auto m = check_pattern(buf, 100, 8);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 102u);
  EXPECT_EQ(m->word_offset, 96u);
  EXPECT_EQ(m->expected, reference_words(0, 8)[12]);
  EXPECT_EQ(m->actual, reference_words(0, 8)[12] ^ (std::uint64_t{0xff} << (8 * 6)));
  EXPECT_FALSE(m->header_read);
}

TEST(Pattern, AZeroedSectorHoldsNoStamp) {
  // Bytes 0..7 of the sector at 0x1000 should read 0x1000: the first that
  // differs is byte 0x1001 (0x1000's low byte is 0 too).
  const std::vector<std::byte> zeros(512);
  auto m = check_pattern(zeros, 0x1000, 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 0x1001u);
  EXPECT_EQ(m->stamp, SectorStamp::zeros);
  EXPECT_NE(describe(*m, 4).find("the sector at 0x1000 holds no stamp (all zeros)"), std::string::npos)
      << describe(*m, 4);
  EXPECT_EQ(describe(*m, 4).find("holds the stamp"), std::string::npos) << describe(*m, 4);
}

TEST(Pattern, AHeaderWithNoPatternAfterItIsNoValidStamp) {
  std::vector<std::byte> buf(512, std::byte{0xA5});
  const std::uint64_t hdr[2] = {0x3000, 4};  // little-endian on the machines we run on
  std::memcpy(buf.data(), hdr, 16);
  auto m = check_pattern(buf, 0x1000, 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->stamp, SectorStamp::none);
  EXPECT_NE(describe(*m, 4).find("holds no valid stamp"), std::string::npos) << describe(*m, 4);
}

}  // namespace

// fio's verify_pattern: after each sector's 16-byte stamp the fill repeats
// from byte 16; a partial buffer gets the matching bytes; the checker
// wants the fill and names a sector stamped with the PRNG words as foreign.
TEST(Pattern, FillRepeatsAfterTheStampAndIsChecked) {
  const auto fill = bytes({0x0a, 0xaa, 0x55});
  std::vector<std::byte> buf(1024);
  stamp_pattern(buf, 0x1000, 9, fill);
  for (std::size_t sector : {0u, 512u})
    for (std::size_t i = 16; i < 512; ++i) ASSERT_EQ(buf[sector + i], fill[(i - 16) % 3]) << sector << "+" << i;
  EXPECT_EQ(buf[1], std::byte(0x10));  // le64 0x1000
  EXPECT_FALSE(check_pattern(buf, 0x1000, 9, fill).has_value());
  std::vector<std::byte> part(300);
  stamp_pattern(part, 0x1000 + 100, 9, fill);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), buf.begin() + 100));
  auto m = check_pattern(buf, 0x1000, 9);  // checked without the fill: the PRNG words differ
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 0x1000u + 16);
  EXPECT_EQ(m->stamp, SectorStamp::none);
  buf[700] ^= std::byte{1};
  m = check_pattern(buf, 0x1000, 9, fill);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 0x1000u + 700);
}

}  // namespace bench
