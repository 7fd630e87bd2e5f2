// IoQueue: sorting, merging, the end-of-device guard, retries, errors, stats.
#include <gtest/gtest.h>

#include <cstring>

#include "io_test_util.hpp"
#include "libfsio/buffer.hpp"

namespace fsio::test {
namespace {

class Queue : public EngineTest {
 protected:
  // A queue whose engine records what reaches it.
  IoQueue recording_queue(Device& dev, QueueOptions options = {}) {
    auto rec = std::make_unique<RecordingEngine>(inner(dev, options.depth));
    rec->seen = &seen_;
    rec->commits = &commits_;
    return make_queue_with(dev, std::move(rec), options);
  }
  std::vector<RecordingEngine::Seen> seen_;
  unsigned commits_ = 0;
};

// n separately allocated 4 KiB buffers (so memory is never adjacent and every
// merged piece costs one iovec), each filled with its own pattern.
std::vector<AlignedBuffer> blocks(unsigned n, std::uint64_t seed) {
  std::vector<AlignedBuffer> out;
  for (unsigned i = 0; i < n; ++i) {
    out.emplace_back(4096);
    auto p = pattern(4096, seed + i);
    std::memcpy(out.back().data(), p.data(), 4096);
  }
  return out;
}

TEST_P(Queue, ContiguousWritesMergeIntoMaxRequestSizedRequests) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  for (std::uint64_t max_request : {16384ull, 65536ull, 12288ull}) {
    QueueOptions o;
    o.max_request = max_request;
    IoQueue q = make_queue(dev, o);
    constexpr unsigned n = 37;
    auto bufs = blocks(n, max_request);
    auto plug = q.plug();
    for (unsigned i = 0; i < n; ++i) plug.write(i * 4096ull, bufs[i].span());
    ASSERT_TRUE(plug.finish());
    EXPECT_EQ(q.stats().requests_queued, n);
    EXPECT_EQ(q.stats().requests_submitted, (n * 4096 + max_request - 1) / max_request) << max_request;
    EXPECT_EQ(q.stats().bytes_written, n * 4096ull);
    auto disk = img.contents(0, n * 4096ull);
    for (unsigned i = 0; i < n; ++i)
      ASSERT_EQ(std::memcmp(disk.data() + i * 4096, bufs[i].data(), 4096), 0) << "block " << i;
  }
}

TEST_P(Queue, NonContiguousWritesAreNotMerged) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = recording_queue(dev);
  auto bufs = blocks(4, 1);
  auto plug = q.plug();
  for (unsigned i = 0; i < 4; ++i) plug.write(i * 8192ull, bufs[i].span());  // a 4 KiB hole between each
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(q.stats().requests_submitted, 4u);
  ASSERT_EQ(seen_.size(), 4u);
  for (auto& s : seen_) EXPECT_EQ(s.bytes, 4096u);
}

TEST_P(Queue, ReadsAndWritesAreNeverMergedTogether) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = recording_queue(dev);
  auto bufs = blocks(2, 1);
  auto plug = q.plug();
  plug.write(0, bufs[0].span());
  plug.read(4096, bufs[1].span());
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(seen_.size(), 2u);
}

TEST_P(Queue, MaxSegmentsBoundsTheIovecsPerRequest) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.max_segments = 4;
  IoQueue q = recording_queue(dev, o);
  auto bufs = blocks(18, 2);
  auto plug = q.plug();
  for (unsigned i = 0; i < 18; ++i) plug.write(i * 4096ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(q.stats().requests_submitted, 5u);  // 4+4+4+4+2 segments
  for (auto& s : seen_) EXPECT_LE(s.iovcnt, 4u);
}

TEST_P(Queue, AdjacentMemoryBecomesOneSegment) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = recording_queue(dev);
  AlignedBuffer big(64 << 10);
  auto plug = q.plug();
  for (unsigned i = 0; i < 16; ++i) plug.read(i * 4096ull, big.span().subspan(i * 4096, 4096));
  ASSERT_TRUE(plug.finish());
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].iovcnt, 1u);
  EXPECT_EQ(seen_[0].bytes, 64u << 10);
}

TEST_P(Queue, MergeOffSubmitsEveryRequestAsQueued) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.merge = false;
  IoQueue q = make_queue(dev, o);
  auto bufs = blocks(16, 3);
  auto plug = q.plug();
  for (unsigned i = 0; i < 16; ++i) plug.write(i * 4096ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(q.stats().requests_submitted, 16u);
  auto disk = img.contents(0, 16 * 4096);
  for (unsigned i = 0; i < 16; ++i) ASSERT_EQ(std::memcmp(disk.data() + i * 4096, bufs[i].data(), 4096), 0);
}

TEST_P(Queue, RequestsReachTheEngineSortedByOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.merge = false;
  IoQueue q = recording_queue(dev, o);
  auto bufs = blocks(8, 4);
  const unsigned order[8] = {5, 2, 7, 0, 3, 6, 1, 4};
  auto plug = q.plug();
  for (unsigned i : order) plug.write(i * 8192ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  ASSERT_EQ(seen_.size(), 8u);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(seen_[i].offset, i * 8192ull);
}

TEST_P(Queue, DepthBoundsInFlightAndAWholeBatchIsOneCommit) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  {
    QueueOptions o;
    o.merge = false;
    o.depth = 32;
    IoQueue q = recording_queue(dev, o);
    auto bufs = blocks(20, 5);
    auto plug = q.plug();
    for (unsigned i = 0; i < 20; ++i) plug.write(i * 4096ull, bufs[i].span());
    ASSERT_TRUE(plug.finish());
    EXPECT_EQ(commits_, 1u);
    EXPECT_EQ(q.stats().peak_in_flight, 20u);
  }
  {
    commits_ = 0;
    QueueOptions o;
    o.merge = false;
    o.depth = 4;
    IoQueue q = recording_queue(dev, o);
    auto bufs = blocks(20, 6);
    auto plug = q.plug();
    for (unsigned i = 0; i < 20; ++i) plug.write(i * 4096ull, bufs[i].span());
    ASSERT_TRUE(plug.finish());
    EXPECT_EQ(q.stats().peak_in_flight, 4u);
    EXPECT_GE(commits_, 5u);
    EXPECT_LE(commits_, 20u);
  }
}

TEST_P(Queue, SyscallsComeFromTheEngine) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.merge = false;
  IoQueue q = make_queue(dev, o);
  auto bufs = blocks(16, 7);
  auto plug = q.plug();
  for (unsigned i = 0; i < 16; ++i) plug.write(i * 4096ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  if (GetParam() == EngineKind::psync) {
    EXPECT_EQ(q.stats().syscalls, 16u);  // one pwritev2 per request
  } else {
    // One submit for the batch (plus one to enable the ring the first time)
    // and at most one wait per completion; never more than psync's count + 2.
    EXPECT_GE(q.stats().syscalls, 1u);
    EXPECT_LE(q.stats().syscalls, 18u);
  }
  EXPECT_EQ(q.stats().syscalls, q.engine().syscalls());
}

TEST_P(Queue, LargeRequestIsSplitAtMaxRequest) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.max_request = 64 << 10;
  IoQueue q = make_queue(dev, o);
  AlignedBuffer buf(1 << 20);
  ASSERT_TRUE(q.read(0, buf.span()));
  EXPECT_EQ(q.stats().requests_submitted, 16u);
  auto disk = img.contents();
  EXPECT_EQ(std::memcmp(buf.data(), disk.data(), 1 << 20), 0);
}

TEST_P(Queue, ReadStraddlingTheEndZeroFillsTheTailAndReturnsTheRealBytes) {
  TempImage img((1 << 20) + 1536);
  Device dev = open_or_die(img.path(), rw_options());
  ASSERT_EQ(dev.size(), (1u << 20) + 1536);
  IoQueue q = make_queue(dev);
  AlignedBuffer buf(8192);
  std::memset(buf.data(), 0xee, buf.size());
  ASSERT_TRUE(q.read(1 << 20, buf.span()));
  EXPECT_EQ(q.stats().bytes_read, 1536u);
  auto disk = img.contents(1 << 20, 1536);
  EXPECT_EQ(std::memcmp(buf.data(), disk.data(), 1536), 0);
  for (std::size_t i = 1536; i < buf.size(); ++i) ASSERT_EQ(buf.data()[i], std::byte(0)) << i;
}

TEST_P(Queue, WriteStraddlingTheEndIsTruncatedNotExtended) {
  TempImage img((1 << 20) + 1536);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  auto bufs = blocks(1, 8);
  ASSERT_TRUE(q.write(1 << 20, bufs[0].span()));
  EXPECT_EQ(q.stats().bytes_written, 1536u);
  EXPECT_EQ(img.contents().size(), (1u << 20) + 1536);
  EXPECT_EQ(std::memcmp(img.contents(1 << 20, 1536).data(), bufs[0].data(), 1536), 0);
}

TEST_P(Queue, RequestWhollyBeyondTheEndIsAnErrorNamingTheOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  AlignedBuffer buf(4096);
  auto st = q.read(0x180000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_NE(st.error().message().find("0x180000"), std::string::npos) << st.error().message();
  EXPECT_EQ(q.stats().requests_submitted, 0u);
}

TEST_P(Queue, WindowOffsetsAreRelativeToTheDeviceWindow) {
  TempImage img(1 << 20);
  OpenOptions opt = rw_options();
  opt.offset = 64 << 10;
  opt.length = 128 << 10;
  Device dev = open_or_die(img.path(), opt);
  ASSERT_EQ(dev.size(), 128u << 10);
  IoQueue q = make_queue(dev);
  auto bufs = blocks(1, 9);
  ASSERT_TRUE(q.write(0, bufs[0].span()));
  EXPECT_EQ(std::memcmp(img.contents(64 << 10, 4096).data(), bufs[0].data(), 4096), 0);
  EXPECT_EQ(img.contents(0, 4096), pattern(4096, 0x5a));  // before the window: untouched
  // The window's end is the guard's end.
  AlignedBuffer buf(4096);
  EXPECT_FALSE(q.read(128 << 10, buf.span()));
}

TEST_P(Queue, UnalignedDirectIoIsRefusedBeforeAnythingIsSubmitted) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  if (!dev.direct()) GTEST_SKIP() << "O_DIRECT refused here: " << dev.direct_fallback();
  IoQueue q = make_queue(dev);
  AlignedBuffer buf(8192);
  auto plug = q.plug();
  plug.write(0, buf.span().subspan(0, 4096));
  plug.write(0x3000, buf.span().subspan(1, 4096));  // misaligned address
  auto st = plug.finish();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_NE(st.error().message().find("0x3000"), std::string::npos) << st.error().message();
  EXPECT_EQ(q.stats().requests_submitted, 0u);
  EXPECT_EQ(img.contents(0, 4096), pattern(4096, 0x5a));
  auto st2 = q.read(100, buf.span().subspan(0, 512));  // misaligned offset
  ASSERT_FALSE(st2);
  EXPECT_NE(st2.error().message().find("0x64"), std::string::npos) << st2.error().message();
}

TEST_P(Queue, ShortTransfersAreRetriedUntilComplete) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue_with(dev, std::make_unique<ShortEngine>(dev.fd(), false));
  auto bufs = blocks(8, 10);
  auto plug = q.plug();
  for (unsigned i = 0; i < 8; ++i) plug.write(i * 4096ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  // 32 KiB, halved each time down to 512: 16K, 8K, 4K, 2K, 1K, 512, 512.
  EXPECT_EQ(q.stats().retries, 6u);
  EXPECT_EQ(q.stats().bytes_written, 32768u);
  auto disk = img.contents(0, 32768);
  for (unsigned i = 0; i < 8; ++i) ASSERT_EQ(std::memcmp(disk.data() + i * 4096, bufs[i].data(), 4096), 0);
  AlignedBuffer back(32768);
  ASSERT_TRUE(q.read(0, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), disk.data(), 32768), 0);
}

TEST_P(Queue, ZeroByteTransferIsEioNamingTheOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue_with(dev, std::make_unique<ShortEngine>(dev.fd(), true));
  AlignedBuffer buf(4096);
  auto st = q.read(0x2000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::io);
  EXPECT_EQ(st.error().sys_errno, EIO);
  EXPECT_EQ(st.error().message(),
            img.path() + ": read 4096 bytes at 0x2000: short read at end of device: Input/output error");
}

TEST_P(Queue, FlushAfterIssuesOneFlushPerWritingBatch) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.sync = SyncPolicy::flush_after;
  IoQueue q = recording_queue(dev, o);
  auto bufs = blocks(8, 11);
  auto plug = q.plug();
  for (unsigned i = 0; i < 8; ++i) plug.write(i * 8192ull, bufs[i].span());
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(q.stats().flushes, 1u);
  ASSERT_FALSE(seen_.empty());
  EXPECT_EQ(seen_.back().op, IoOp::flush);
  AlignedBuffer buf(4096);
  ASSERT_TRUE(q.read(0, buf.span()));
  EXPECT_EQ(q.stats().flushes, 1u);  // a reading batch needs no flush
  for (auto& s : seen_) EXPECT_FALSE(s.dsync);
}

TEST_P(Queue, DsyncMarksEveryWriteAndNoRead) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.sync = SyncPolicy::dsync;
  IoQueue q = recording_queue(dev, o);
  auto bufs = blocks(4, 12);
  auto plug = q.plug();
  plug.write(0, bufs[0].span());
  plug.write(0x10000, bufs[1].span());
  plug.read(0x20000, bufs[2].span());
  ASSERT_TRUE(plug.finish());
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_TRUE(seen_[0].dsync);
  EXPECT_TRUE(seen_[1].dsync);
  EXPECT_FALSE(seen_[2].dsync);
  EXPECT_EQ(q.stats().flushes, 0u);
  EXPECT_EQ(std::memcmp(img.contents(0x10000, 4096).data(), bufs[1].data(), 4096), 0);
}

TEST_P(Queue, EmptyPlugDoesNothing) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  auto plug = q.plug();
  ASSERT_TRUE(plug.finish());
  EXPECT_EQ(q.stats().syscalls, 0u);
  EXPECT_EQ(q.stats().requests_submitted, 0u);
}

INSTANTIATE_TEST_SUITE_P(Engines, Queue, ::testing::Values(EngineKind::uring, EngineKind::psync), engine_param_name);

}  // namespace
}  // namespace fsio::test
