// Every error IoQueue returns names the device, and the offset and size of
// the request it happened at, on each engine (io_uring, the synchronous one,
// and the fault engine over either): reads, writes, flushes, the
// end-of-device guard, the direct-I/O check and create(). A caller adds only
// the step it was doing, and the path is said once.
#include <gtest/gtest.h>

#include <cerrno>

#include "io_test_util.hpp"
#include "libfsio/buffer.hpp"

namespace fsio::test {
namespace {

class QueueErrors : public EngineTest {
 protected:
  IoQueue faulty(Device& dev, FaultSpec spec, QueueOptions options = {}) {
    return make_queue_with(dev, make_fault_engine(inner(dev, options.depth), spec), options);
  }
};

// What a library step does with a queue error: says the step, nothing more.
Status write_boot_sector(IoQueue& q, std::span<const std::byte> sector) {
  FSIO_TRY_CTX(q.write(0, sector), "write boot sector");
  return {};
}

Status flush_after(IoQueue& q, const std::string& step) {
  FSIO_TRY_CTX(q.flush(), "flush after " + step);
  return {};
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_P(QueueErrors, AFailedWriteNamesThePathSizeAndOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty(dev, {.nth_write = 1, .kind = FaultSpec::Kind::fail});
  AlignedBuffer buf(4096);
  auto st = q.write(0x8000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().path, img.path());
  EXPECT_EQ(st.error().message(), img.path() + ": write 4096 bytes at 0x8000: Input/output error");
}

TEST_P(QueueErrors, AFailedReadNamesThePathSizeAndOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty(dev, {.nth_write = 1, .kind = FaultSpec::Kind::read_fail});
  AlignedBuffer buf(8192);
  auto st = q.read(0x10000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": read 8192 bytes at 0x10000: Input/output error");
}

// Passes everything to a real engine but fails every flush with EIO.
class FailingFlush final : public Engine {
 public:
  explicit FailingFlush(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return "failing-flush"; }
  unsigned depth() const override { return inner_->depth(); }
  unsigned in_flight() const override { return inner_->in_flight() + unsigned(failed_.size()); }
  std::uint64_t syscalls() const override { return inner_->syscalls(); }
  Status queue(const IoRequest& req) override {
    if (req.op != IoOp::flush) return inner_->queue(req);
    failed_.push_back({req.user_data, -EIO});
    return {};
  }
  Result<unsigned> commit() override { return inner_->commit(); }
  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override {
    if (failed_.empty()) return inner_->reap(out, min_complete);
    out[0] = failed_.back();
    failed_.pop_back();
    return 1u;
  }

 private:
  std::unique_ptr<Engine> inner_;
  std::vector<IoCompletion> failed_;
};

TEST_P(QueueErrors, AFailedFlushNamesThePath) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue_with(dev, std::make_unique<FailingFlush>(inner(dev)));
  auto st = q.flush();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": flush: Input/output error");
}

TEST_P(QueueErrors, TheFlushEndingAFlushAfterBatchNamesThePath) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.sync = SyncPolicy::flush_after;
  IoQueue q = make_queue_with(dev, std::make_unique<FailingFlush>(inner(dev)), o);
  AlignedBuffer buf(4096);
  auto st = q.write(0x2000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": flush: Input/output error");
  EXPECT_EQ(q.stats().bytes_written, 4096u) << "the write itself went through";
}

TEST_P(QueueErrors, ARequestBeyondTheEndNamesThePathSizeOffsetAndDeviceSize) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue(dev);
  AlignedBuffer buf(4096);
  auto st = q.read(0x100000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_EQ(st.error().message(),
            img.path() + ": read: request of 4096 bytes at 0x100000 is beyond the end of the device (size 0x100000)");
  st = q.write(0x180000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            img.path() + ": write: request of 4096 bytes at 0x180000 is beyond the end of the device (size 0x100000)");
}

TEST_P(QueueErrors, AMisalignedDirectRequestNamesThePathSizeAndOffset) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  if (!dev.direct()) GTEST_SKIP() << "O_DIRECT refused here: " << dev.direct_fallback();
  IoQueue q = make_queue(dev);
  AlignedBuffer buf(4096);
  auto st = q.write(0x200 + 100, buf.span().first(512));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message().rfind(img.path() + ": write 512 bytes at 0x264: not aligned for direct I/O", 0), 0u)
      << st.error().message();
}

TEST_P(QueueErrors, AZeroByteTransferNamesThePath) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = make_queue_with(dev, std::make_unique<ShortEngine>(dev.fd(), true));
  AlignedBuffer buf(4096);
  auto st = q.write(0x3000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            img.path() + ": write 4096 bytes at 0x3000: short write at end of device: Input/output error");
}

TEST_P(QueueErrors, OffsetsAreTheWindowsAndThePathTheDevices) {
  TempImage img(1 << 20);
  OpenOptions o = rw_options();
  o.offset = 64 << 10;
  Device dev = open_or_die(img.path(), o);
  IoQueue q = faulty(dev, {.nth_write = 1, .kind = FaultSpec::Kind::fail});
  AlignedBuffer buf(4096);
  auto st = q.write(0x1000, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": write 4096 bytes at 0x1000: Input/output error");
}

TEST_P(QueueErrors, ACallersStepGoesAfterThePathWhichIsSaidOnce) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  IoQueue q = faulty(dev, {.nth_write = 1, .kind = FaultSpec::Kind::fail, .crash = true});
  AlignedBuffer buf(4096);
  auto st = write_boot_sector(q, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img.path() + ": write boot sector: write 4096 bytes at 0x0: Input/output error");
  // Naming the device again (what a caller that refuses the contents does)
  // leaves the path the queue set, once.
  const Error again = Error(st.error()).at(img.path()).at("/somewhere/else");
  EXPECT_EQ(count(again.message(), img.path()), 1u) << again.message();
  auto fl = flush_after(q, "the FAT");
  ASSERT_FALSE(fl);
  EXPECT_EQ(fl.error().message(), img.path() + ": flush after the FAT: flush: Input/output error");
}

TEST(QueueCreate, AnErrorOfCreateNamesThePath) {
  TempImage img(1 << 20);
  Device dev = open_or_die(img.path(), rw_options());
  QueueOptions o;
  o.depth = 0;
  auto q = IoQueue::create(dev, o);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().message(), img.path() + ": queue depth must be at least 1");
}

INSTANTIATE_TEST_SUITE_P(Engines, QueueErrors, ::testing::Values(EngineKind::uring, EngineKind::psync),
                         engine_param_name);

}  // namespace
}  // namespace fsio::test
