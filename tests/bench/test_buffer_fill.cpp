// What write buffers hold with fio's buffer_compress_percentage and dedupe
// options (buffer_fill.hpp); the layouts worked out by hand from fio 3.33's
// lib/rand.c (__fill_random_buf_percentage) and dedupe.c.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <vector>

#include "cmd/bench/buffer_fill.hpp"

namespace bench {
namespace {

using Block = std::vector<std::byte>;

Block filled(BufferFill& f, std::size_t n = 4096) {
  Block b(n, std::byte{0x77});
  f.fill(b);
  return b;
}

bool zero(const Block& b, std::size_t from, std::size_t to) {
  return std::all_of(b.begin() + std::ptrdiff_t(from), b.begin() + std::ptrdiff_t(to),
                     [](std::byte x) { return x == std::byte{0}; });
}

TEST(BufferFill, EachChunkIsRandomThenZeroInTheCompressiblePercent) {
  BufferContents c;
  c.compress_percentage = 25;  // of each 512-byte chunk: 384 random bytes, 128 zeros
  BufferFill f(c, 1, 1 << 20, 4096);
  const Block b = filled(f);
  for (std::size_t at = 0; at < b.size(); at += 512) {
    EXPECT_TRUE(zero(b, at + 384, at + 512)) << at;
    // 384 random bytes: about 200 of the 256 values, few of them 0
    EXPECT_GT(std::set<std::byte>(b.begin() + std::ptrdiff_t(at), b.begin() + std::ptrdiff_t(at + 384)).size(), 150u);
    EXPECT_LT(std::count(b.begin() + std::ptrdiff_t(at), b.begin() + std::ptrdiff_t(at + 384), std::byte{0}), 10) << at;
  }
}

TEST(BufferFill, ChunkZeroIsTheWholeRequest) {
  BufferContents c;
  c.compress_percentage = 50;
  c.compress_chunk = 0;
  BufferFill f(c, 1, 1 << 20, 4096);
  const Block b = filled(f);
  EXPECT_TRUE(zero(b, 2048, 4096));
  EXPECT_FALSE(zero(b, 1024, 2048));
}

TEST(BufferFill, FullyCompressibleIsZerosButRandomWithDedupe) {
  BufferContents c;
  c.compress_percentage = 100;
  BufferFill zeros(c, 1, 1 << 20, 4096);
  EXPECT_TRUE(zero(filled(zeros), 0, 4096));
  // fio's init turns 100% into zero_buffers and compress 0, which its dedupe path ignores.
  c.dedupe_percentage = 50;
  BufferFill random(c, 1, 1 << 20, 4096);
  EXPECT_FALSE(zero(filled(random), 0, 512));
}

TEST(BufferFill, UniqueBuffersDifferAndFullDedupeRepeatsTheFirst) {
  BufferContents c;
  c.dedupe_percentage = 100;
  BufferFill same(c, 1, 1 << 20, 4096);
  const Block first = filled(same);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(filled(same), first);
  c.dedupe_percentage = 0;
  c.compress_percentage = 10;
  BufferFill fresh(c, 1, 1 << 20, 4096);
  std::set<Block> seen;
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(seen.insert(filled(fresh)).second);
}

TEST(BufferFill, RepeatModeCopiesTheLastUniqueBuffer) {
  BufferContents c;
  c.dedupe_percentage = 50;
  BufferFill f(c, 7, 1 << 20, 4096);
  Block last_unique;
  std::set<Block> seen;
  unsigned repeats = 0;
  for (int i = 0; i < 400; ++i) {
    const Block b = filled(f);
    if (seen.insert(b).second) {
      last_unique = b;
      continue;
    }
    ++repeats;
    EXPECT_EQ(b, last_unique);
  }
  EXPECT_GT(repeats, 160u);  // 50% of 400, give or take chance
  EXPECT_LT(repeats, 240u);
}

TEST(BufferFill, GlobalWorkingSetTakesEachJobsFirstPagesInTurn) {
  // dedupe.c: 10 pages over 2 jobs, pages_per_seed 5: job 0's pages are its
  // own unique buffers 0-4, then job 1's 0-4; job 1's start with its own.
  BufferContents c;
  c.dedupe_percentage = 50;
  c.dedupe_mode = DedupeMode::working_set;
  c.working_set_percentage = 10;
  c.global = true;
  c.job_count = 2;
  BufferFill a(c, 3, 100 * 4096, 4096);
  c.job_index = 1;
  BufferFill b(c, 3, 100 * 4096, 4096);
  for (unsigned i = 0; i < 5; ++i) {
    EXPECT_EQ(a.page_seed(i), a.unique_seed(0, i));
    EXPECT_EQ(a.page_seed(5 + i), a.unique_seed(1, i));
    EXPECT_EQ(b.page_seed(i), b.unique_seed(1, i));
    EXPECT_EQ(b.page_seed(5 + i), b.unique_seed(0, i));
  }
  c.global = false;
  BufferFill own(c, 3, 100 * 4096, 4096);
  EXPECT_EQ(own.page_seed(7), own.unique_seed(1, 7));
}

}  // namespace
}  // namespace bench
