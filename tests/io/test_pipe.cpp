// libfsio/pipe.hpp: reads and writes on pipes and sockets that a stop
// request ends however long the other end stalls. A write that blocked in
// write(2) on a full pipe would never return: the stalled-pipe case has a
// watchdog that closes the reading end after 20 s, which ends such a write
// with EPIPE, and the case fails naming it.
#include "libfsio/pipe.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using fsio::Errc;
using fsio::FdKind;

struct PipeEnds {
  int r = -1, w = -1;
  PipeEnds() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
  }
  ~PipeEnds() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
};

std::vector<std::byte> pipe_test_bytes(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + i / 4096) & 0xff);
  return v;
}

// Reads fd to its end, whatever the writer's pieces.
std::vector<std::byte> drain_fd(int fd) {
  std::vector<std::byte> got;
  std::byte buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return got;
    got.insert(got.end(), buf, buf + n);
  }
}

TEST(Pipe, KindOfFilePipeAndSocket) {
  PipeEnds p;
  EXPECT_EQ(fsio::fd_kind(p.r), FdKind::pipe);
  EXPECT_EQ(fsio::fd_kind(p.w), FdKind::pipe);
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  EXPECT_EQ(fsio::fd_kind(sv[0]), FdKind::socket);
  ::close(sv[0]);
  ::close(sv[1]);
  const int f = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(f, 0);
  EXPECT_EQ(fsio::fd_kind(f), FdKind::other);
  ::close(f);
  EXPECT_EQ(fsio::fd_kind(-1), FdKind::other);
}

TEST(Pipe, WidenAsksForOneMiB) {
  PipeEnds p;
  fsio::widen_pipe(p.w);
  // Linux's default is 64 KiB; 1 MiB is /proc/sys/fs/pipe-max-size's
  // default, which root may exceed anyway.
  EXPECT_EQ(::fcntl(p.w, F_GETPIPE_SZ), 1 << 20);
}

TEST(Pipe, WriteAllThroughAPipeArrivesWhole) {
  PipeEnds p;
  const auto data = pipe_test_bytes(5 << 20);  // five times the widest pipe
  std::vector<std::byte> got;
  std::thread reader([&] { got = drain_fd(p.r); });
  EXPECT_TRUE(fsio::write_all(p.w, FdKind::pipe, data, "pipe", 0));
  ::close(p.w);
  p.w = -1;
  reader.join();
  EXPECT_TRUE(got == data);
}

TEST(Pipe, WriteAllThroughASocketArrivesWhole) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const auto data = pipe_test_bytes(3 << 20);
  std::vector<std::byte> got;
  std::thread reader([&] { got = drain_fd(sv[1]); });
  EXPECT_TRUE(fsio::write_all(sv[0], FdKind::socket, data, "socket", 0));
  ::shutdown(sv[0], SHUT_WR);
  reader.join();
  ::close(sv[0]);
  ::close(sv[1]);
  EXPECT_TRUE(got == data);
}

// The reader never reads: the pipe fills, and the write must end when
// asked, having written only whole prefixes of the data.
TEST(Pipe, WriteToAStalledPipeStopsWhenAsked) {
  ::signal(SIGPIPE, SIG_IGN);  // the watchdog's EPIPE must not kill the run
  for (const bool wide : {false, true}) {
    PipeEnds p;
    if (wide) fsio::widen_pipe(p.w);
    const auto data = pipe_test_bytes(4 << 20);
    std::atomic<int> asked{0};
    std::atomic<bool> done{false}, fired{false};
    std::thread watchdog([&] {
      for (int i = 0; i < 2000 && !done; ++i) ::usleep(10000);
      if (!done) {
        fired = true;
        ::close(p.r);  // the blocked write(2) ends with EPIPE
      }
    });
    auto st = fsio::write_all(p.w, FdKind::pipe, data, "out", 100, [&] { return ++asked > 5; });
    done = true;
    watchdog.join();
    ASSERT_FALSE(fired) << "write_all blocked in write(2) on a full pipe (wide " << wide << ")";
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, Errc::interrupted);
    EXPECT_NE(st.error().message().find("out: interrupted while waiting to write"), std::string::npos)
        << st.error().message();
    EXPECT_GT(asked.load(), 5);
    ::close(p.w);
    p.w = -1;
    const auto got = drain_fd(p.r);
    ASSERT_GT(got.size(), 0u);
    ASSERT_LE(got.size(), std::size_t(::fcntl(p.r, F_GETPIPE_SZ)));
    EXPECT_EQ(std::memcmp(got.data(), data.data(), got.size()), 0);
  }
}

TEST(Pipe, WriteToAStalledSocketStopsWhenAsked) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const auto data = pipe_test_bytes(32 << 20);  // more than any socket buffer
  auto st = fsio::write_all(sv[0], FdKind::socket, data, "sock", 0, [n = 0]() mutable { return ++n > 3; });
  ::close(sv[0]);
  ::close(sv[1]);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::interrupted);
}

TEST(Pipe, ReadFromAStalledPipeStopsWhenAsked) {
  PipeEnds p;
  std::byte buf[16];
  int asked = 0;
  auto n = fsio::read_some(p.r, FdKind::pipe, buf, "in", 0, [&] { return ++asked > 2; });
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, Errc::interrupted);
  EXPECT_NE(n.error().message().find("in: interrupted while waiting to read"), std::string::npos);
  EXPECT_EQ(asked, 3);
}

TEST(Pipe, ReadTakesWhatIsThereThenTheEnd) {
  PipeEnds p;
  ASSERT_EQ(::write(p.w, "abc", 3), 3);
  std::byte buf[16];
  auto n = fsio::read_some(p.r, FdKind::pipe, buf, "in", 0, [] { return false; });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 3u);  // what is there, without waiting for the rest
  ::close(p.w);
  p.w = -1;
  n = fsio::read_some(p.r, FdKind::pipe, buf, "in", 3, [] { return false; });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
}

TEST(Pipe, WriteToAPipeWithNoReaderIsEpipe) {
  PipeEnds p;
  ::close(p.r);
  p.r = -1;
  ::signal(SIGPIPE, SIG_IGN);
  const auto data = pipe_test_bytes(1000);
  auto st = fsio::write_all(p.w, FdKind::pipe, data, "out", 7);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().sys_errno, EPIPE);
  EXPECT_NE(st.error().message().find("out: write at byte 7"), std::string::npos) << st.error().message();
}

}  // namespace
