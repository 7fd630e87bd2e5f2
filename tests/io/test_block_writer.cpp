// BlockWriter: whole-block commits, reads only at the edges, byte-exact data.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "io_test_util.hpp"
#include "libfsio/block_writer.hpp"

namespace fsio::test {
namespace {

class Blocks : public EngineTest {};

// The case: 8 KiB segments starting 100 bytes into a 4 KiB block.
TEST_P(Blocks, CommitsEqualBlocksTouchedFor8KSegmentsStartingAt100) {
  TempImage img(2 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  constexpr std::uint64_t start = 100, seg = 8192, n = 100;
  auto data = pattern(seg * n, 77);
  BlockWriter w(q, 4096);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(w.write(start + i * seg, std::span(data).subspan(i * seg, seg)));
  ASSERT_TRUE(w.finish());

  const std::uint64_t end = start + seg * n;
  const std::uint64_t touched = (end + 4095) / 4096;  // blocks 0 .. (end-1)/4096
  EXPECT_EQ(w.segments(), n);
  EXPECT_EQ(w.commits(), touched);  // 201, not one per segment
  EXPECT_EQ(w.edge_reads(), 2u);    // only the partial first and last blocks

  // Byte for byte: the stream where written, the old bytes around it.
  auto disk = img.contents();
  auto old = pattern(2 << 20, 0x5a);
  EXPECT_EQ(std::memcmp(disk.data(), old.data(), start), 0);
  EXPECT_EQ(std::memcmp(disk.data() + start, data.data(), data.size()), 0);
  EXPECT_EQ(std::memcmp(disk.data() + end, old.data() + end, disk.size() - end), 0);

  // The staged blocks went out as large merged requests: two edge reads and
  // one write of 201 blocks (< 1 MiB), not 201 writes.
  EXPECT_EQ(q.stats().requests_submitted, 3u);
  EXPECT_EQ(q.stats().bytes_written, touched * 4096);
}

TEST_P(Blocks, BatchBytesBoundsEachSubmission) {
  TempImage img(2 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.max_request = 1 << 20;
  IoQueue q = make_queue(dev, o);
  auto data = pattern(256 << 10, 3);
  BlockWriter w(q, 4096, 64 << 10);  // 16 blocks per plug
  for (std::uint64_t off = 0; off < data.size(); off += 8192)
    ASSERT_TRUE(w.write(off, std::span(data).subspan(off, 8192)));
  ASSERT_TRUE(w.finish());
  EXPECT_EQ(w.commits(), 64u);
  EXPECT_EQ(w.edge_reads(), 0u);                // aligned stream: nothing to read
  EXPECT_EQ(q.stats().requests_submitted, 4u);  // 4 plugs of 64 KiB, each merged into one
  EXPECT_EQ(q.stats().bytes_read, 0u);
  EXPECT_EQ(img.contents(0, data.size()), data);
}

TEST_P(Blocks, OverlappingSegmentsLaterBytesWin) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  BlockWriter w(q, 4096);
  auto a = pattern(10000, 1), b = pattern(3000, 2), c = pattern(200, 3);
  ASSERT_TRUE(w.write(1000, a));
  ASSERT_TRUE(w.write(2000, b));   // back into committed (staged) blocks
  ASSERT_TRUE(w.write(10900, c));  // back into the open block
  ASSERT_TRUE(w.finish());
  auto expect = pattern(1 << 20, 0x5a);
  std::memcpy(expect.data() + 1000, a.data(), a.size());
  std::memcpy(expect.data() + 2000, b.data(), b.size());
  std::memcpy(expect.data() + 10900, c.data(), c.size());
  EXPECT_EQ(img.contents(), expect);
}

TEST_P(Blocks, RandomSegmentsMatchAReferenceModel) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  auto expect = pattern(1 << 20, 0x5a);
  std::mt19937_64 rng(12345);
  for (unsigned round = 0; round < 4; ++round) {
    BlockWriter w(q, 4096, 32 << 10);
    for (unsigned i = 0; i < 300; ++i) {
      std::uint64_t len = 1 + rng() % 9000;
      std::uint64_t off = rng() % ((1 << 20) - len);
      auto bytes = pattern(len, rng());
      std::memcpy(expect.data() + off, bytes.data(), len);
      ASSERT_TRUE(w.write(off, bytes));
    }
    ASSERT_TRUE(w.finish());
  }
  EXPECT_EQ(img.contents(), expect);
}

TEST_P(Blocks, LastBlockStraddlingTheEndIsWrittenTruncated) {
  TempImage img((1 << 20) + 1536);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  BlockWriter w(q, 4096);
  auto data = pattern(1000, 9);
  ASSERT_TRUE(w.write((1 << 20) + 200, data));
  ASSERT_TRUE(w.finish());
  auto disk = img.contents();
  ASSERT_EQ(disk.size(), (1u << 20) + 1536);
  EXPECT_EQ(std::memcmp(disk.data() + (1 << 20) + 200, data.data(), data.size()), 0);
  auto old = pattern((1 << 20) + 1536, 0x5a);
  EXPECT_EQ(std::memcmp(disk.data() + (1 << 20) + 1200, old.data() + (1 << 20) + 1200, 336), 0);
}

TEST_P(Blocks, WriteErrorIsReturnedWithItsOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue_with(dev, make_fault_engine(inner(dev), {.nth_write = 1, .kind = FaultSpec::Kind::fail}));
  BlockWriter w(q, 4096);
  auto data = pattern(16384, 1);
  ASSERT_TRUE(w.write(0x10000, data));
  auto st = w.finish();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": write 16384 bytes at 0x10000: Input/output error");
}

INSTANTIATE_TEST_SUITE_P(Engines, Blocks, ::testing::Values(EngineKind::uring, EngineKind::psync), engine_param_name);

}  // namespace
}  // namespace fsio::test
