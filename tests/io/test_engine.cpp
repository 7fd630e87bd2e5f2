// Engine selection, FSIO_FAULT parsing, and the engine contract itself.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

#include "io_test_util.hpp"
#include "libfsio/buffer.hpp"

namespace fsio::test {
namespace {

// Sets FSIO_FAULT for one test and restores the previous value.
class FaultEnv {
 public:
  explicit FaultEnv(const char* value) {
    if (const char* old = getenv("FSIO_FAULT")) old_ = old, had_ = true;
    if (value) setenv("FSIO_FAULT", value, 1);
    else unsetenv("FSIO_FAULT");
  }
  ~FaultEnv() {
    if (had_) setenv("FSIO_FAULT", old_.c_str(), 1);
    else unsetenv("FSIO_FAULT");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(ParseEngineKind, AcceptsTheDocumentedNamesAndRefusesOthers) {
  EXPECT_EQ(*parse_engine_kind("uring"), EngineKind::uring);
  EXPECT_EQ(*parse_engine_kind("io_uring"), EngineKind::uring);
  EXPECT_EQ(*parse_engine_kind("psync"), EngineKind::psync);
  EXPECT_EQ(*parse_engine_kind("sync"), EngineKind::psync);
  EXPECT_EQ(*parse_engine_kind("auto"), EngineKind::automatic);
  auto bad = parse_engine_kind("libaio");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message().find("libaio"), std::string::npos);
}

TEST(FaultSpecFromEnv, UnsetMeansNoFault) {
  FaultEnv env(nullptr);
  auto spec = fault_spec_from_env();
  ASSERT_TRUE(spec);
  EXPECT_FALSE(spec->has_value());
}

TEST(FaultSpecFromEnv, ParsesFailTearBytesAndNocrash) {
  {
    FaultEnv env("fail:3");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::fail);
    EXPECT_EQ(s.nth_write, 3u);
    EXPECT_TRUE(s.crash);
  }
  {
    FaultEnv env("tear:7");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::tear);
    EXPECT_EQ(s.nth_write, 7u);
    EXPECT_EQ(s.tear_bytes, 0u);
  }
  {
    FaultEnv env("tear:2:1536:nocrash");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::tear);
    EXPECT_EQ(s.nth_write, 2u);
    EXPECT_EQ(s.tear_bytes, 1536u);
    EXPECT_FALSE(s.crash);
  }
  {
    FaultEnv env("fail:1:nocrash");
    auto s = **fault_spec_from_env();
    EXPECT_FALSE(s.crash);
  }
  {
    FaultEnv env("readfail:4");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::read_fail);
    EXPECT_EQ(s.nth_write, 4u);
    EXPECT_FALSE(s.crash);
  }
  {
    FaultEnv env("readsigint:12");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::read_sigint);
    EXPECT_EQ(s.nth_write, 12u);
    EXPECT_EQ(describe(s), "SIGINT is raised as read request 12 is queued, as if Ctrl-C");
  }
  {
    FaultEnv env("sigint:1");
    EXPECT_EQ(describe(**fault_spec_from_env()), "SIGINT is raised as write request 1 is queued, as if Ctrl-C");
  }
  {
    FaultEnv env("badrange:20971520:8192");
    auto s = **fault_spec_from_env();
    EXPECT_EQ(s.kind, FaultSpec::Kind::bad_range);
    EXPECT_EQ(s.bad_offset, 20971520u);
    EXPECT_EQ(s.bad_bytes, 8192u);
    EXPECT_FALSE(s.crash);
    EXPECT_EQ(describe(s), "every read of bytes 20971520 to 20979712 fails with an injected I/O error");
  }
}

TEST(FaultSpecFromEnv, MalformedIsInvalidArgumentQuotingTheValue) {
  for (const char* bad : {"fail",
                          "fail:0",
                          "fail:x",
                          "fail:1:2",
                          "tear:1:2:3",
                          "zap:1",
                          "tear:1:-5",
                          "nocrash",
                          "readfail",
                          "readfail:0",
                          "readfail:1:2",
                          "readfail:1:nocrash",
                          "badrange:1",
                          "badrange:1:0",
                          "badrange:x:1",
                          "badrange:1:2:3",
                          "badrange:1:2:nocrash",
                          "badrange:18446744073709551615:2",
                          "sigint",
                          "sigint:0",
                          "sigint:1:2",
                          "readsigint:1:nocrash",
                          "sigint:-1"}) {
    FaultEnv env(bad);
    auto spec = fault_spec_from_env();
    ASSERT_FALSE(spec) << bad;
    EXPECT_EQ(spec.error().code, Errc::invalid_argument) << bad;
    EXPECT_NE(spec.error().message().find(bad), std::string::npos) << spec.error().message();
  }
}

TEST(MakeEngine, MalformedFaultFailsBeforeAnyEngineIsMade) {
  FaultEnv env("fail:zero");
  auto e = make_engine(EngineKind::psync, -1, 4);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, Errc::invalid_argument);
}

TEST(MakeEngine, AutomaticAlwaysGivesAWorkingEngine) {
  FaultEnv env(nullptr);
  auto e = make_engine(EngineKind::automatic, -1, 4);
  ASSERT_TRUE(e) << e.error().message();
  std::string name = (*e)->name();
  EXPECT_TRUE(name == "uring" || name == "psync") << name;
  EXPECT_EQ((*e)->depth(), 4u);
}

TEST(MakeEngine, FaultEnvWrapsTheEngineSoTheNthWriteFails) {
  FaultEnv env("fail:1");
  TempImage img(64 << 10);
  Device dev = open_or_die(img.path(), rw_options());
  auto e = make_engine(EngineKind::psync, dev.fd(), 4);
  ASSERT_TRUE(e) << e.error().message();
  auto q = IoQueue::create(dev, std::move(e).value());
  ASSERT_TRUE(q);
  AlignedBuffer buf(4096);
  auto st = q->write(0, buf.span());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().sys_errno, EIO);
  EXPECT_EQ(img.contents(0, 4096), pattern(4096, 0x5a)) << "the failed write must not reach the disk";
}

class EngineContract : public EngineTest {};

TEST_P(EngineContract, QueueIsBusyAtDepthAndCommitThenReapReturnsEveryCompletion) {
  TempImage img(64 << 10);
  Device dev = open_or_die(img.path(), rw_options());
  auto e = inner(dev, 4);
  AlignedBuffer bufs[5] = {AlignedBuffer(4096), AlignedBuffer(4096), AlignedBuffer(4096), AlignedBuffer(4096),
                           AlignedBuffer(4096)};
  iovec iov[5];
  for (unsigned i = 0; i < 5; ++i) {
    iov[i] = {bufs[i].data(), 4096};
    IoRequest r{
        .op = IoOp::read, .offset = i * 4096ull, .iov = &iov[i], .iovcnt = 1, .bytes = 4096, .user_data = 100 + i};
    auto st = e->queue(r);
    if (i < 4) ASSERT_TRUE(st) << st.error().message();
    else {
      ASSERT_FALSE(st);
      EXPECT_EQ(st.error().code, Errc::busy);
    }
  }
  EXPECT_EQ(e->in_flight(), 4u);
  EXPECT_EQ(*e->commit(), 4u);
  IoCompletion out[8];
  unsigned got = 0;
  while (got < 4) got += *e->reap(std::span(out + got, 8 - got), 1);
  EXPECT_EQ(got, 4u);
  EXPECT_EQ(e->in_flight(), 0u);
  std::uint64_t seen = 0;
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].result, 4096);
    seen |= 1ull << (out[i].user_data - 100);
  }
  EXPECT_EQ(seen, 0xfu);
  auto want = img.contents(0, 16384);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(std::memcmp(bufs[i].data(), want.data() + i * 4096, 4096), 0) << i;
}

TEST_P(EngineContract, ErrorsComeBackAsNegativeErrnoInTheCompletion) {
  TempImage img(64 << 10);
  OpenOptions ro = rw_options();
  ro.write = false;
  Device dev = open_or_die(img.path(), ro);
  auto e = inner(dev, 4);
  AlignedBuffer buf(4096);
  // Writing through a read-only descriptor: the kernel says EBADF, and the
  // engine must hand that back in the completion, not fail the call.
  iovec iov{buf.data(), 4096};
  ASSERT_TRUE(e->queue({.op = IoOp::write, .offset = 0, .iov = &iov, .iovcnt = 1, .bytes = 4096, .user_data = 9}));
  ASSERT_TRUE(e->commit());
  IoCompletion c;
  ASSERT_EQ(*e->reap({&c, 1}, 1), 1u);
  EXPECT_EQ(c.user_data, 9u);
  EXPECT_EQ(c.result, -EBADF);
  EXPECT_EQ(e->in_flight(), 0u);
  EXPECT_EQ(img.contents(0, 4096), pattern(4096, 0x5a));
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineContract, ::testing::Values(EngineKind::uring, EngineKind::psync),
                         engine_param_name);

}  // namespace
}  // namespace fsio::test
