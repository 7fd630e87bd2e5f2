#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "libfsio/buffer.hpp"

namespace fsio {
namespace {

bool all_zero(std::span<const std::byte> s) {
  return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0}; });
}

TEST(AlignedBuffer, AddressIsAlignedTo4096AndZeroFilled) {
  for (std::size_t size : {1u, 511u, 512u, 4097u, 1u << 20}) {
    AlignedBuffer buf(size);
    ASSERT_NE(buf.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % 4096, 0u) << size;
    EXPECT_EQ(buf.size(), size);
    EXPECT_EQ(buf.span().size(), size);
    EXPECT_TRUE(all_zero(buf.span())) << size;
  }
}

TEST(AlignedBuffer, SmallAlignmentRequestStillGets4096) {
  AlignedBuffer buf(512, 512);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % 4096, 0u);
}

TEST(AlignedBuffer, LargerPowerOfTwoAlignmentIsHonoured) {
  AlignedBuffer buf(4096, 1u << 16);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % (1u << 16), 0u);
}

// The VmFlags line of /proc/self/smaps for the mapping that holds p.
std::string vm_flags_of(const void* p) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return {};
}

TEST(AlignedBuffer, TwoMiBOrMoreIsPlacedAndAdvisedForHugePages) {
  for (std::size_t size : {std::size_t(2) << 20, (std::size_t(5) << 20) + 512}) {
    AlignedBuffer buf(size);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % (2u << 20), 0u) << size;
    EXPECT_TRUE(all_zero(buf.span())) << size;
  }
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages; only the placement was checked";
  AlignedBuffer big(4u << 20);
  const std::string flags = vm_flags_of(big.data());
  ASSERT_FALSE(flags.empty()) << "no mapping in /proc/self/smaps holds the buffer";
  std::istringstream words(flags.substr(8));
  std::string w;
  bool hg = false;
  while (words >> w) hg = hg || w == "hg";
  EXPECT_TRUE(hg) << "not advised MADV_HUGEPAGE: " << flags;
}

TEST(AlignedBuffer, ZeroClearsWhatWasWritten) {
  AlignedBuffer buf(8192);
  std::fill(buf.span().begin(), buf.span().end(), std::byte{0xAB});
  buf.zero();
  EXPECT_TRUE(all_zero(buf.span()));
}

TEST(AlignedBuffer, MoveTransfersOwnership) {
  AlignedBuffer a(4096);
  std::byte* p = a.data();
  AlignedBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 4096u);
  AlignedBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
}

TEST(AlignedBuffer, EmptyBufferHasNoData) {
  AlignedBuffer buf;
  EXPECT_EQ(buf.size(), 0u);
  EXPECT_TRUE(buf.span().empty());
}

TEST(BufferPool, ReturnedBufferIsReusedNotReallocated) {
  BufferPool pool(65536);
  AlignedBuffer a = pool.get();
  std::byte* p = a.data();
  pool.put(std::move(a));
  AlignedBuffer b = pool.get();
  EXPECT_EQ(b.data(), p);
  AlignedBuffer c = pool.get();  // pool empty again: a fresh buffer
  EXPECT_NE(c.data(), p);
}

TEST(BufferPool, HandsOutAlignedBuffersOfItsSize) {
  BufferPool pool(12345, 8192);
  EXPECT_EQ(pool.buffer_size(), 12345u);
  AlignedBuffer a = pool.get();
  EXPECT_EQ(a.size(), 12345u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 8192, 0u);
}

TEST(BufferPoolDeathTest, PuttingAForeignSizedBufferIsABug) {
  BufferPool pool(4096);
  EXPECT_DEATH(pool.put(AlignedBuffer(8192)), "assertion failed");
}

}  // namespace
}  // namespace fsio
