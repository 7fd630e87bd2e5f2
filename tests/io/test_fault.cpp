// The fault engine under IoQueue: failed, torn and crashed writes, and error
// propagation with the offset and errno.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>

#include "io_test_util.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/progress.hpp"

namespace fsio::test {
namespace {

class Fault : public EngineTest {
 protected:
  IoQueue faulty_queue(Device& dev, FaultSpec spec, QueueOptions options = {}) {
    return make_queue_with(dev, make_fault_engine(inner(dev, options.depth), spec), options);
  }
};

AlignedBuffer filled(std::size_t size, std::uint64_t seed) {
  AlignedBuffer buf(size);
  auto p = pattern(size, seed);
  std::memcpy(buf.data(), p.data(), size);
  return buf;
}

TEST_P(Fault, FirstErrorNamesTheMergedRequestItsOffsetAndErrno) {
  TempImage img(4 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty_queue(dev, {.nth_write = 1, .kind = FaultSpec::Kind::fail});
  // 256 contiguous 4 KiB writes from 1 MiB merge into one 1 MiB request.
  AlignedBuffer buf = filled(1 << 20, 1);
  auto plug = q.plug();
  for (unsigned i = 0; i < 256; ++i) plug.write((1 << 20) + i * 4096ull, buf.span().subspan(i * 4096, 4096));
  auto st = plug.finish();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": write 1048576 bytes at 0x100000: Input/output error");
  EXPECT_EQ(st.error().sys_errno, EIO);
  EXPECT_EQ(st.error().code, Errc::io);
}

TEST_P(Fault, FailedNthWriteWithCrashKeepsEarlierWritesAndLaterOnesOffTheDisk) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty_queue(dev, {.nth_write = 2, .kind = FaultSpec::Kind::fail, .crash = true});
  AlignedBuffer a = filled(4096, 1), b = filled(4096, 2), c = filled(4096, 3);
  ASSERT_TRUE(q.write(0x0000, a.span()));
  auto st = q.write(0x4000, b.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().sys_errno, EIO);
  EXPECT_NE(st.error().message().find("0x4000"), std::string::npos);
  EXPECT_FALSE(q.write(0x8000, c.span()));
  EXPECT_FALSE(q.flush());
  EXPECT_EQ(std::memcmp(img.contents(0x0000, 4096).data(), a.data(), 4096), 0);
  auto old = pattern(1 << 20, 0x5a);
  EXPECT_EQ(std::memcmp(img.contents(0x4000, 4096).data(), old.data() + 0x4000, 4096), 0);
  EXPECT_EQ(std::memcmp(img.contents(0x8000, 4096).data(), old.data() + 0x8000, 4096), 0);
  // Reads still work after the crash: the test can inspect what is there.
  AlignedBuffer r(4096);
  ASSERT_TRUE(q.read(0, r.span()));
  EXPECT_EQ(std::memcmp(r.data(), a.data(), 4096), 0);
}

TEST_P(Fault, WithoutCrashOnlyTheNthWriteFails) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty_queue(dev, {.nth_write = 1, .kind = FaultSpec::Kind::fail, .crash = false});
  AlignedBuffer a = filled(4096, 1), b = filled(4096, 2);
  EXPECT_FALSE(q.write(0, a.span()));
  ASSERT_TRUE(q.write(0x1000, b.span()));
  EXPECT_TRUE(q.flush());
  EXPECT_EQ(std::memcmp(img.contents(0x1000, 4096).data(), b.data(), 4096), 0);
  EXPECT_EQ(img.contents(0, 4096), pattern(4096, 0x5a));
}

TEST_P(Fault, TearWritesExactlyThePrefix) {
  for (std::uint64_t tear : {0ull, 1536ull, 1000ull}) {
    TempImage img(1 << 20);
    Device dev = open_or_die(img.path(), rw_options());
    IoQueue q = faulty_queue(dev, {.nth_write = 1, .kind = FaultSpec::Kind::tear, .tear_bytes = tear});
    AlignedBuffer buf = filled(8192, 4);
    auto st = q.write(0x2000, buf.span());
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().sys_errno, EIO);
    // 0: half of 8192; 1000 rounds down to 512.
    std::uint64_t kept = tear == 0 ? 4096 : tear / 512 * 512;
    auto disk = img.contents(0x2000, 8192);
    auto old = pattern(1 << 20, 0x5a);
    EXPECT_EQ(std::memcmp(disk.data(), buf.data(), kept), 0) << "tear " << tear;
    EXPECT_EQ(std::memcmp(disk.data() + kept, old.data() + 0x2000 + kept, 8192 - kept), 0) << "tear " << tear;
  }
}

TEST_P(Fault, TearAcrossSegmentsKeepsThePrefixOfTheMergedRequest) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty_queue(dev, {.nth_write = 1, .kind = FaultSpec::Kind::tear, .tear_bytes = 6144});
  AlignedBuffer a = filled(4096, 5), b = filled(4096, 6);
  auto plug = q.plug();
  plug.write(0x1000, b.span());
  plug.write(0x0000, a.span());
  ASSERT_FALSE(plug.finish());
  auto disk = img.contents(0, 8192);
  auto old = pattern(8192, 0x5a);
  EXPECT_EQ(std::memcmp(disk.data(), a.data(), 4096), 0);
  EXPECT_EQ(std::memcmp(disk.data() + 4096, b.data(), 2048), 0);
  EXPECT_EQ(std::memcmp(disk.data() + 6144, old.data() + 6144, 2048), 0);
}

TEST_P(Fault, ErrorInMidBatchStillReapsEverythingInFlight) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.merge = false;
  o.depth = 8;
  IoQueue q = faulty_queue(dev, {.nth_write = 3, .kind = FaultSpec::Kind::fail, .crash = false}, o);
  std::vector<AlignedBuffer> bufs;
  auto plug = q.plug();
  for (unsigned i = 0; i < 16; ++i) {
    bufs.push_back(filled(4096, 20 + i));
    plug.write(i * 8192ull, bufs.back().span());
  }
  auto st = plug.finish();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("at 0x4000"), std::string::npos) << st.error().message();
  EXPECT_EQ(q.engine().in_flight(), 0u);
  // The first wave (8) was already submitted; nothing after the error was.
  EXPECT_EQ(q.stats().requests_submitted, 8u);
  EXPECT_EQ(q.stats().bytes_written, 7u * 4096);
}

// Power lost at the 2nd of four separate writes of one batch: the 3rd and
// 4th fail too (crash), but the error the caller gets is the injected one.
TEST_P(Fault, InCrashModeTheErrorNamesTheInjectedWriteNotALaterOne) {
  for (auto kind : {FaultSpec::Kind::fail, FaultSpec::Kind::tear}) {
    TempImage img(1 << 20);
    Device dev = open_or_die(img.path(), rw_options());
    QueueOptions o;
    o.merge = false;
    IoQueue q = faulty_queue(dev, {.nth_write = 2, .kind = kind, .tear_bytes = 2048, .crash = true}, o);
    std::vector<AlignedBuffer> bufs;
    auto plug = q.plug();
    for (unsigned i = 0; i < 4; ++i) {
      bufs.push_back(filled(4096, 40 + i));
      plug.write(i * 0x4000ull, bufs.back().span());
    }
    auto st = plug.finish();
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().message(), img.path() + ": write 4096 bytes at 0x4000: Input/output error")
        << (kind == FaultSpec::Kind::tear ? "tear" : "fail");
    EXPECT_EQ(q.engine().in_flight(), 0u);
  }
}

TEST_P(Fault, ReadFailFailsOnlyTheNthReadAndNoWrite) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty_queue(dev, {.nth_write = 2, .kind = FaultSpec::Kind::read_fail});
  AlignedBuffer w = filled(4096, 7), r(4096);
  ASSERT_TRUE(q.write(0, w.span()));
  ASSERT_TRUE(q.read(0, r.span()));
  EXPECT_EQ(std::memcmp(r.data(), w.data(), 4096), 0);
  auto st = q.read(0x8000, r.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": read 4096 bytes at 0x8000: Input/output error");
  EXPECT_TRUE(q.read(0x8000, r.span())) << "only the Nth read fails";
  EXPECT_TRUE(q.write(0x1000, w.span()));
  EXPECT_TRUE(q.flush());
}

TEST_P(Fault, BadRangeFailsEveryReadTouchingItAndNothingElse) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  // Bytes 0x9000-0x9400 (two 512-byte sectors) stay unreadable.
  IoQueue q =
      faulty_queue(dev, {.kind = FaultSpec::Kind::bad_range, .crash = false, .bad_offset = 0x9000, .bad_bytes = 0x400});
  AlignedBuffer w = filled(4096, 7), r(4096);
  ASSERT_TRUE(q.write(0x9000, w.span())) << "writes pass";
  EXPECT_TRUE(q.read(0x8000, r.span())) << "ends where the range starts";
  EXPECT_TRUE(q.read(0xA000, r.span())) << "starts past the range";
  for (int i = 0; i < 2; ++i) {
    auto st = q.read(0x9000, r.span());
    ASSERT_FALSE(st) << "read " << i;
    EXPECT_EQ(st.error().message(), img.path() + ": read 4096 bytes at 0x9000: Input/output error");
  }
  auto st = q.read(0x8800, r.span());
  EXPECT_FALSE(st) << "a read overlapping the range's start";
  EXPECT_TRUE(q.flush());
}

// A Ctrl-C at a known request: SIGINT reaches the tool's handler as the Nth
// write (or read) is queued, and every request still goes through.
TEST_P(Fault, SigintArrivesAtTheNthRequestOfItsKindAndNothingFails) {
  for (auto kind : {FaultSpec::Kind::sigint, FaultSpec::Kind::read_sigint}) {
    const bool reads = kind == FaultSpec::Kind::read_sigint;
    TempImage img(1 << 20);
    Device dev = open_or_die(img.path(), rw_options());
    IoQueue q = faulty_queue(dev, {.nth_write = 3, .kind = kind, .crash = false});
    InterruptGuard guard;
    AlignedBuffer w = filled(4096, 9), r(4096);
    for (unsigned i = 0; i < 5; ++i) {
      ASSERT_TRUE(q.write(i * 0x2000ull, w.span())) << i;
      ASSERT_TRUE(q.read(i * 0x2000ull, r.span())) << i;
      EXPECT_EQ(std::memcmp(r.data(), w.data(), 4096), 0) << i;
      EXPECT_EQ(InterruptGuard::requested(), i >= 2) << (reads ? "read " : "write ") << i + 1;
    }
    EXPECT_EQ(InterruptGuard::signal_number(), SIGINT);
    EXPECT_TRUE(q.flush());
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Fault, ::testing::Values(EngineKind::uring, EngineKind::psync), engine_param_name);

}  // namespace
}  // namespace fsio::test
