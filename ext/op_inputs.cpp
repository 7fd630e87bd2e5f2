// What the operations take from the host: a file descriptor as a Source,
// the time (SOURCE_DATE_EPOCH or the clock), and the check that the inodes
// can hold the times they will store.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

FdSource::FdSource(int fd, std::string name) : fd_(fd), kind_(fsio::fd_kind(fd)), name_(std::move(name)) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size_ = std::uint64_t(st.st_size);
  fsio::widen_pipe(fd);
}

fsio::Result<std::size_t> FdSource::read(std::span<std::byte> buf) {
  if (cancelled_) return std::size_t(0);
  auto n = fsio::read_some(fd_, kind_, buf, name_, offset_, [this] { return cancelled_.load(); });
  if (!n && cancelled_) return std::size_t(0);  // the writer gave up first; its error is the one said
  if (n) offset_ += *n;
  return n;
}

fsio::Status check_op_times(const Layout& l, const Timestamp& now, const std::optional<Timestamp>& mtime) {
  FSIO_TRY(check_time(l, now.sec, "the time " + std::to_string(now.sec)));
  if (mtime) FSIO_TRY(check_time(l, mtime->sec, "the modification time " + std::to_string(mtime->sec)));
  return {};
}
fsio::Status check_op_times(const Layout& l, const PutOptions& o) { return check_op_times(l, o.now, o.mtime); }

}  // namespace ext
