// The run-list codec of the fsimg stream (img/FORMAT.md "Run lists") and
// the FAT block size, against bytes and numbers worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cmd/img/map.hpp"
#include "cmd/img/source.hpp"

namespace {

using Runs = std::vector<img::Run>;

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(std::byte(b));
  return out;
}

std::vector<std::byte> varint(std::uint64_t v) {
  std::vector<std::byte> out;
  img::put_varint(out, v);
  return out;
}

TEST(Varint, EncodesLeb128LowGroupFirst) {
  EXPECT_EQ(varint(0), bytes({0x00}));
  EXPECT_EQ(varint(127), bytes({0x7F}));
  EXPECT_EQ(varint(128), bytes({0x80, 0x01}));
  EXPECT_EQ(varint(300), bytes({0xAC, 0x02}));  // 300 = 0b10_0101100
  EXPECT_EQ(varint(UINT64_MAX), bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(Varint, DecodesAndRefusesBadInput) {
  auto in = bytes({0xAC, 0x02, 0x05});
  std::size_t pos = 0;
  EXPECT_EQ(*img::get_varint(in, pos, "t"), 300u);
  EXPECT_EQ(pos, 2u);
  EXPECT_EQ(*img::get_varint(in, pos, "t"), 5u);
  // Runs past the end.
  auto cut = bytes({0x80});
  pos = 0;
  auto r = img::get_varint(cut, pos, "t");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fsio::Errc::corrupt);
  // Eleven bytes, and a tenth byte carrying bits past 64.
  auto longer = bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01});
  pos = 0;
  EXPECT_FALSE(img::get_varint(longer, pos, "t"));
  auto over = bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02});
  pos = 0;
  EXPECT_FALSE(img::get_varint(over, pos, "t"));
}

TEST(Runs, EncodeGapsAndLengths) {
  // (5,3) then (10,2): gap 5 from block 0, length 3; gap 10 - 8 = 2, length 2.
  EXPECT_EQ(img::encode_runs({{5, 3}, {10, 2}}), bytes({0x05, 0x03, 0x02, 0x02}));
  auto back = img::decode_runs(bytes({0x05, 0x03, 0x02, 0x02}), 2, 12, 5, "map");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, (Runs{{5, 3}, {10, 2}}));
}

TEST(Runs, DecodeRefusesEveryBadList) {
  const auto good = bytes({0x05, 0x03, 0x02, 0x02});
  EXPECT_FALSE(img::decode_runs(bytes({0x05, 0x00}), 1, 100, 0, "map"));              // length 0
  EXPECT_FALSE(img::decode_runs(bytes({0x05, 0x03, 0x00, 0x02}), 2, 100, 5, "map"));  // touches
  EXPECT_FALSE(img::decode_runs(good, 2, 11, 5, "map"));                              // ends at 12 > 11
  EXPECT_FALSE(img::decode_runs(good, 2, 12, 6, "map"));                              // sum is 5
  EXPECT_FALSE(img::decode_runs(good, 1, 12, 3, "map"));                              // bytes left over
  EXPECT_FALSE(img::decode_runs(good, 3, 100, 5, "map"));                             // runs short
  auto r = img::decode_runs(bytes({0x05, 0x00}), 1, 100, 0, "frame 7 zero runs");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fsio::Errc::corrupt);
  EXPECT_NE(r.error().message().find("frame 7 zero runs"), std::string::npos) << r.error().message();
}

TEST(BlockMap, TouchingRunsMerge) {
  img::BlockMap m;
  m.add(0, 4);
  m.add(4, 2);
  m.add(10, 0);
  m.add(10, 1);
  EXPECT_EQ(m.runs(), (Runs{{0, 6}, {10, 1}}));
  EXPECT_EQ(m.blocks(), 7u);
}

TEST(MapCursor, OrdinalsBecomeDeviceRuns) {
  const Runs runs{{2, 3}, {10, 4}, {20, 1}};  // ordinals 0-2, 3-6, 7
  img::MapCursor c(runs);
  EXPECT_EQ(c.take(2), (Runs{{2, 2}}));
  EXPECT_EQ(c.take(3), (Runs{{4, 1}, {10, 2}}));
  EXPECT_EQ(c.ordinal(), 5u);
  EXPECT_EQ(c.take(3), (Runs{{12, 2}, {20, 1}}));
}

TEST(FatBlockSize, LargestPowerOfTwoDividingBoth) {
  // mkfs.fat FAT16 on 32 MiB: data at (4 + 2*32) * 512 + 512 * 32 = 51200 bytes
  // (51200 = 2^11 * 25), clusters of 2 KiB: 2048.
  EXPECT_EQ(img::fat_block_size(51200, 2048), 2048u);
  // FAT32 with 4 KiB clusters and data at 32 + 2*1009 sectors = 1049600 bytes (2^10 * 1025).
  EXPECT_EQ(img::fat_block_size(1049600, 4096), 1024u);
  // Aligned data, 64 KiB clusters: capped at 4 KiB.
  EXPECT_EQ(img::fat_block_size(1u << 20, 65536), 4096u);
  // 512-byte clusters: 512.
  EXPECT_EQ(img::fat_block_size(1u << 20, 512), 512u);
}

}  // namespace
