#include "libfsio/pipe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "libfsio/progress.hpp"

namespace fsio {
namespace {

constexpr int kPollMs = 100;  // how long a wait goes without asking whether to stop
constexpr int kWidePipe = 1 << 20;

// Waits until fd is ready for `events`, or has hung up or failed (the read
// or write that follows then says so).
Status wait_ready(int fd, short events, const std::string& name, const char* what, const StopFn& stop) {
  for (;;) {
    if (stop()) return make_error(Errc::interrupted, name + ": interrupted while waiting to " + what);
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, kPollMs);
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return errno_error(name + ": poll");
  }
}

// Bytes that a write to a pipe that poll() calls writable takes without
// blocking. The pipe holds F_GETPIPE_SZ / page of page-sized slots, and
// FIONREAD bytes sit in them; the first and last of those slots may be
// partly used, so two slots more than the bytes fill are counted as taken.
// Writable means one slot is free, and PIPE_BUF bytes always fit in it.
std::size_t pipe_room(int fd) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const int capacity = ::fcntl(fd, F_GETPIPE_SZ);
  int queued = 0;
  if (page <= 0 || capacity <= 0 || ::ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) return PIPE_BUF;
  const long free_slots = capacity / page - queued / page - 2;
  return free_slots > 0 ? std::size_t(free_slots * page) : PIPE_BUF;
}

}  // namespace

FdKind fd_kind(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return FdKind::other;
  if (S_ISFIFO(st.st_mode)) return FdKind::pipe;
  if (S_ISSOCK(st.st_mode)) return FdKind::socket;
  return FdKind::other;
}

void widen_pipe(int fd) {
  if (fd_kind(fd) == FdKind::pipe) (void)::fcntl(fd, F_SETPIPE_SZ, kWidePipe);
}

bool interrupt_requested() { return InterruptGuard::requested(); }

Result<std::size_t> read_some(int fd, FdKind kind, std::span<std::byte> out, const std::string& name,
                              std::uint64_t offset, const StopFn& stop) {
  for (;;) {
    if (kind != FdKind::other) FSIO_TRY(wait_ready(fd, POLLIN, name, "read", stop));
    const ssize_t got = ::read(fd, out.data(), out.size());
    if (got >= 0) return std::size_t(got);
    if (errno != EINTR && errno != EAGAIN) return errno_error(name + ": read at byte " + std::to_string(offset));
  }
}

Status write_all(int fd, FdKind kind, std::span<const std::byte> data, const std::string& name, std::uint64_t offset,
                 const StopFn& stop) {
  std::size_t done = 0;
  while (done < data.size()) {
    std::size_t n = data.size() - done;
    if (kind != FdKind::other) FSIO_TRY(wait_ready(fd, POLLOUT, name, "write", stop));
    if (kind == FdKind::pipe) n = std::min(n, pipe_room(fd));
    const ssize_t w = kind == FdKind::socket ? ::send(fd, data.data() + done, n, MSG_DONTWAIT | MSG_NOSIGNAL)
                                             : ::write(fd, data.data() + done, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return errno_error(name + ": write at byte " + std::to_string(offset + done));
    done += std::size_t(w);
  }
  return {};
}

}  // namespace fsio
