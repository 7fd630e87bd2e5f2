// Engine choice under the environment: io_uring refused by the kernel (the
// fallback to psync must be clean), FSIO_ENGINE, and the notices tools print
// for FSIO_FAULT and FSIO_ENGINE.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "io_test_util.hpp"
#include "libfsio/buffer.hpp"

namespace fsio::test {
namespace {

// Sets an environment variable for one scope and restores it.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~Env() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Makes io_uring_setup fail with ENOSYS in this process from now on, as a
// container's seccomp profile or kernel.io_uring_disabled=2 does. False
// when seccomp is not available.
bool refuse_io_uring_setup() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// In a child (the filter cannot be undone): stdin closed, so the device is
// opened on descriptor 0, then a queue on the automatic engine writes and
// flushes through it. Exit codes name what went wrong.
enum Child : int { ok = 0, no_seccomp = 20, not_fd0, no_queue, not_psync, write_failed, fd_closed, wrong_data };

int child(const std::string& path) {
  if (!refuse_io_uring_setup()) return no_seccomp;
  ::close(0);
  OpenOptions o = rw_options(false);
  auto dev = Device::open(path, o);
  if (!dev || dev->fd() != 0) return not_fd0;
  auto q = IoQueue::create(*dev);
  if (!q) return no_queue;
  if (std::string(q->engine().name()) != "psync") return not_psync;
  AlignedBuffer buf(4096);
  std::memset(buf.data(), 0xA5, 4096);
  if (!q->write(8192, buf.span()) || !q->flush()) return write_failed;
  if (::fcntl(0, F_GETFD) < 0) return fd_closed;
  unsigned char b = 0;
  if (::pread(0, &b, 1, 8192) != 1 || b != 0xA5) return wrong_data;
  return ok;
}

TEST(UringUnavailable, AutomaticFallsBackToPsyncAndLeavesDescriptorZeroOpen) {
  Env no_engine("FSIO_ENGINE", nullptr);
  Env no_fault("FSIO_FAULT", nullptr);
  TempImage img(64 << 10);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(child(img.path()));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died by signal " << WTERMSIG(status);
  const int rc = WEXITSTATUS(status);
  if (rc == no_seccomp) GTEST_SKIP() << "seccomp filters are not available here";
  EXPECT_NE(rc, fd_closed) << "descriptor 0 (the device) was closed by the failed io_uring setup";
  EXPECT_NE(rc, write_failed) << "the write through descriptor 0 failed";
  EXPECT_EQ(rc, ok);
}

TEST(UringUnavailable, AskingForUringExplicitlyIsAnErrorNotAFallback) {
  TempImage img(64 << 10);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!refuse_io_uring_setup()) ::_exit(no_seccomp);
    auto e = make_uring_engine(1, 4);
    ::_exit(!e && e.error().code == Errc::unsupported && ::fcntl(0, F_GETFD) >= 0 ? ok : fd_closed);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == no_seccomp) GTEST_SKIP() << "seccomp filters are not available here";
  EXPECT_EQ(WEXITSTATUS(status), ok);
}

TEST(FsioEngine, ChoosesTheEngineWhereTheToolLeftItAutomatic) {
  Env fault("FSIO_FAULT", nullptr);
  {
    Env e("FSIO_ENGINE", "psync");
    auto engine = make_engine(EngineKind::automatic, -1, 4);
    ASSERT_TRUE(engine) << engine.error().message();
    EXPECT_STREQ((*engine)->name(), "psync");
  }
  {
    Env e("FSIO_ENGINE", "psync");  // an explicit choice wins over the environment
    std::string why;
    if (auto uring = make_inner(EngineKind::uring, -1, 4, &why); !uring) GTEST_SKIP() << why;
    auto engine = make_engine(EngineKind::uring, -1, 4);
    ASSERT_TRUE(engine) << engine.error().message();
    EXPECT_STREQ((*engine)->name(), "uring");
  }
}

TEST(FsioEngine, MalformedIsAUsageErrorNamingTheVariable) {
  Env e("FSIO_ENGINE", "libaio");
  auto engine = make_engine(EngineKind::automatic, -1, 4);
  ASSERT_FALSE(engine);
  EXPECT_EQ(engine.error().code, Errc::invalid_argument);
  EXPECT_NE(engine.error().message().find("FSIO_ENGINE"), std::string::npos) << engine.error().message();
  auto notes = environment_overrides();
  ASSERT_FALSE(notes);
  EXPECT_NE(notes.error().message().find("libaio"), std::string::npos);
}

TEST(EnvironmentOverrides, NothingSetMeansNothingToSay) {
  Env e("FSIO_ENGINE", nullptr);
  Env f("FSIO_FAULT", nullptr);
  auto notes = environment_overrides();
  ASSERT_TRUE(notes);
  EXPECT_TRUE(notes->empty());
}

TEST(EnvironmentOverrides, EachSetVariableGetsOneSentenceSayingWhatItDoes) {
  Env e("FSIO_ENGINE", "psync");
  Env f("FSIO_FAULT", "tear:3:1024");
  auto notes = environment_overrides();
  ASSERT_TRUE(notes) << notes.error().message();
  ASSERT_EQ(notes->size(), 2u);
  EXPECT_EQ((*notes)[0],
            "FSIO_FAULT=tear:3:1024 is set: test fault injection is on: write request 3 is torn (1024 bytes reach "
            "the disk) and fails, and every write and flush after it, as if power was lost there; such errors are "
            "not the disk's");
  EXPECT_NE((*notes)[1].find("FSIO_ENGINE=psync is set"), std::string::npos) << (*notes)[1];
  Env r("FSIO_FAULT", "readfail:7");
  notes = environment_overrides();
  ASSERT_TRUE(notes);
  EXPECT_NE((*notes)[0].find("read request 7 fails with an injected I/O error"), std::string::npos) << (*notes)[0];
}

}  // namespace
}  // namespace fsio::test
