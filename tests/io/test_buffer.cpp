// AlignedBuffer: zero-filled and aligned whatever way it is allocated (a
// small one from aligned_alloc, one of 2 MiB or more mapped on its own).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "libfsio/buffer.hpp"

namespace fsio {
namespace {

bool all_zero(const AlignedBuffer& b) {
  return std::all_of(b.data(), b.data() + b.size(), [](std::byte x) { return x == std::byte{0}; });
}

TEST(AlignedBuffer, SmallIsZeroAndPageAligned) {
  AlignedBuffer b(12345);
  ASSERT_EQ(b.size(), 12345u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 4096, 0u);
  EXPECT_TRUE(all_zero(b));
}

// 2 MiB + 100 KiB + 3 bytes: past the huge-page threshold, not a multiple
// of a page; the whole span is usable, zero, and on a 2 MiB boundary.
TEST(AlignedBuffer, HugeIsZeroAndHugePageAligned) {
  const std::size_t n = (std::size_t(2) << 20) + 100 * 1024 + 3;
  AlignedBuffer b(n);
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (std::size_t(2) << 20), 0u);
  EXPECT_TRUE(all_zero(b));
  b.data()[n - 1] = std::byte{0x5A};  // the last byte is writable
  AlignedBuffer moved = std::move(b);
  EXPECT_EQ(moved.size(), n);
  EXPECT_EQ(moved.data()[n - 1], std::byte{0x5A});
  moved.zero();
  EXPECT_TRUE(all_zero(moved));
}

// Many in turn: each freed the way it was allocated (ASan and the address
// space would notice a munmap of malloc'd memory or a leaked mapping).
TEST(AlignedBuffer, ManyHugeAndSmallComeAndGo) {
  for (int i = 0; i < 64; ++i) {
    AlignedBuffer big(std::size_t(4) << 20), small(4096);
    big.data()[0] = small.data()[0] = std::byte{1};
    AlignedBuffer other = std::move(big);
    big = std::move(small);
    EXPECT_EQ(other.size(), std::size_t(4) << 20);
    EXPECT_EQ(big.size(), 4096u);
  }
}

// An alignment above a huge page is honoured too.
TEST(AlignedBuffer, LargerAlignmentHonoured) {
  AlignedBuffer b(std::size_t(3) << 20, std::size_t(4) << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (std::size_t(4) << 20), 0u);
  EXPECT_TRUE(all_zero(b));
}

}  // namespace
}  // namespace fsio
