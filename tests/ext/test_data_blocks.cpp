// data_blocks: the logical blocks a sparse content's data ranges take,
// worked by hand in 4096-byte blocks: a range inside one block, two in one
// block, one across a block edge, one ending at the file's last byte, and
// the dense and empty cases.
#include <gtest/gtest.h>

#include "ext/tree_fill.hpp"

namespace ext {
namespace {

std::vector<std::pair<std::uint64_t, std::uint64_t>> spans(const fsio::Content& c) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const BlockSpan& b : data_blocks(c, 4096)) out.emplace_back(b.first, b.count);
  return out;
}

fsio::Content sparse(std::uint64_t size, std::vector<fsio::DataRange> data) {
  fsio::Content c;
  c.size = size;
  c.sparse = true;
  c.data = std::move(data);
  return c;
}

TEST(DataBlocks, DenseIsEveryBlockOfTheSize) {
  fsio::Content c;
  c.size = 10000;  // 3 blocks, the last one partial
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 3}}));
  c.size = 0;
  EXPECT_TRUE(spans(c).empty());
}

TEST(DataBlocks, PartialBlocksAreWholeAndSharedOnesCountOnce) {
  // 5000..5999: block 1; 13000..13099 and 14500..14599: both block 3;
  // 999990..999999: block 244.
  const auto c = sparse(1000000, {{5000, 1000}, {13000, 100}, {14500, 100}, {999990, 10}});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 1}, {3, 1}, {244, 1}}));
  EXPECT_EQ(data_bytes(c), 1210u);
}

TEST(DataBlocks, AcrossAnEdgeAndTouchingSpansJoin) {
  // 4000..4199 crosses blocks 0 and 1; 8192..8192: block 2 joins them;
  // 20480..24575 is exactly block 5.
  const auto c = sparse(30000, {{4000, 200}, {8192, 1}, {20480, 4096}});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 3}, {5, 1}}));
}

TEST(DataBlocks, AllHoleTakesNone) {
  const auto c = sparse(5000001, {});
  EXPECT_TRUE(spans(c).empty());
  EXPECT_EQ(data_bytes(c), 0u);
}

}  // namespace
}  // namespace ext
