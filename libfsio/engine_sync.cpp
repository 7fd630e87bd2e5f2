// The synchronous engine (after fio's engines/sync.c, psyncv flavour), and
// InlineEngine under it.
//
// queue() only records the request; commit() performs each recorded request
// with one preadv2/pwritev2/fdatasync call and stores its completion; reap()
// hands the stored completions out. Because IoQueue has already sorted and
// merged the batch, this is the "sorted, merged preadv/pwritev" path of the
// design, one syscall per merged request.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <deque>
#include <vector>

#include "libfsio/engine.hpp"

namespace fsio {

Status InlineEngine::queue(const IoRequest& req) {
  if (in_flight() >= depth_) return make_error(Errc::busy, std::string(name_) + " queue full");
  queued_.push_back(req);
  return {};
}

Result<unsigned> InlineEngine::commit() {
  const auto n = unsigned(queued_.size());
  for (const IoRequest& req : queued_) done_.push_back({req.user_data, carry_out(req)});
  queued_.clear();
  return n;
}

Result<unsigned> InlineEngine::reap(std::span<IoCompletion> out, unsigned min_complete) {
  const std::size_t need = std::min<std::size_t>(min_complete, out.size());
  if (need > done_.size() && !queued_.empty()) (void)commit();
  FSIO_ASSERT(need <= done_.size());
  unsigned n = 0;
  while (n < out.size() && !done_.empty()) {
    out[n++] = done_.front();
    done_.pop_front();
  }
  return n;
}

namespace {

class SyncEngine final : public InlineEngine {
 public:
  SyncEngine(int fd, unsigned depth) : InlineEngine("psync", depth), fd_(fd) {}

 private:
  std::int64_t carry_out(const IoRequest& req) override {
    for (;;) {
      ++syscalls_;
      ssize_t ret = 0;
      switch (req.op) {
        case IoOp::read: ret = preadv2(fd_, req.iov, int(req.iovcnt), off_t(req.offset), 0); break;
        case IoOp::write:
          ret = pwritev2(fd_, req.iov, int(req.iovcnt), off_t(req.offset), req.dsync ? RWF_DSYNC : 0);
          break;
        case IoOp::flush: ret = req.datasync ? fdatasync(fd_) : fsync(fd_); break;
      }
      if (ret >= 0) return ret;
      if (errno != EINTR) return -errno;
    }
  }

  int fd_;
};

}  // namespace

std::unique_ptr<Engine> make_sync_engine(int fd, unsigned depth) { return std::make_unique<SyncEngine>(fd, depth); }

}  // namespace fsio
