// crc32c against the RFC 3720 (iSCSI) appendix B.4 vectors, and the hardware
// path against the table path.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "libfsio/crc32c.hpp"

namespace fsio {
namespace {

// The standard CRC-32C is the bitwise NOT of ext4's raw form from ~0.
std::uint32_t standard(const std::vector<std::uint8_t>& d) { return ~crc32c_raw(~0u, d.data(), d.size()); }

TEST(Crc32c, Rfc3720ThirtyTwoZeros) { EXPECT_EQ(standard(std::vector<std::uint8_t>(32, 0)), 0x8A9136AAu); }
TEST(Crc32c, Rfc3720ThirtyTwoOnes) { EXPECT_EQ(standard(std::vector<std::uint8_t>(32, 0xFF)), 0x62A8AB43u); }

TEST(Crc32c, Rfc3720Incrementing) {
  std::vector<std::uint8_t> d(32);
  for (int i = 0; i < 32; ++i) d[i] = std::uint8_t(i);
  EXPECT_EQ(standard(d), 0x46DD794Eu);
}

TEST(Crc32c, Rfc3720Decrementing) {
  std::vector<std::uint8_t> d(32);
  for (int i = 0; i < 32; ++i) d[i] = std::uint8_t(31 - i);
  EXPECT_EQ(standard(d), 0x113FDB5Cu);
}

TEST(Crc32c, Rfc3720ScsiReadCommandPdu) {
  const std::vector<std::uint8_t> d = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                       0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(standard(d), 0xD9963A56u);
}

TEST(Crc32c, CheckValueOf123456789) {
  const std::string s = "123456789";
  EXPECT_EQ(~crc32c_raw(~0u, s.data(), s.size()), 0xE3069283u);
}

TEST(Crc32c, HardwareAndTableAgreeOnEveryLengthAndAlignment) {
  if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 crc32 instruction on this CPU; only the table path runs";
  std::mt19937 rng(7);
  std::vector<std::uint8_t> buf(5000);
  for (auto& b : buf) b = std::uint8_t(rng());
  for (std::size_t off = 0; off < 9; ++off)
    for (std::size_t len : {0u, 1u, 7u, 8u, 31u, 32u, 33u, 1000u, 4091u})
      EXPECT_EQ(crc32c_raw_hw(0x12345678, buf.data() + off, len), crc32c_raw_table(0x12345678, buf.data() + off, len))
          << "offset " << off << " length " << len;
}

TEST(Crc32c, SplitUpdatesEqualOneUpdate) {
  const std::string s = "the quick brown fox jumps over the lazy dog";
  const std::uint32_t whole = crc32c_raw(~0u, s.data(), s.size());
  const std::uint32_t part = crc32c_raw(crc32c_raw(~0u, s.data(), 10), s.data() + 10, s.size() - 10);
  EXPECT_EQ(whole, part);
}

TEST(Crc32c, Le32IsTheFourLittleEndianBytes) {
  const std::uint8_t b[4] = {0x78, 0x56, 0x34, 0x12};
  EXPECT_EQ(crc32c_raw_le32(~0u, 0x12345678), crc32c_raw(~0u, b, 4));
}

}  // namespace
}  // namespace fsio
