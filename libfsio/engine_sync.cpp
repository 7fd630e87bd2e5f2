// The synchronous engine (after fio's engines/sync.c, psyncv flavour).
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
namespace {

class SyncEngine final : public Engine {
 public:
  SyncEngine(int fd, unsigned depth) : fd_(fd), depth_(depth == 0 ? 1 : depth) {}

  const char* name() const override { return "psync"; }
  unsigned depth() const override { return depth_; }
  unsigned in_flight() const override { return unsigned(queued_.size() + done_.size()); }
  std::uint64_t syscalls() const override { return syscalls_; }

  Status queue(const IoRequest& req) override {
    if (in_flight() >= depth_) return make_error(Errc::busy, "psync queue full");
    queued_.push_back(req);
    return {};
  }

  Result<unsigned> commit() override {
    auto n = unsigned(queued_.size());
    for (const IoRequest& req : queued_) done_.push_back({req.user_data, execute(req)});
    queued_.clear();
    return n;
  }

  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override {
    // Everything committed has already completed. Like io_uring, a reap that
    // needs more than that performs what is still queued; asking for more
    // than was ever queued would hang io_uring, so it is a bug here too.
    std::size_t need = std::min<std::size_t>(min_complete, out.size());
    if (need > done_.size() && !queued_.empty()) (void)commit();
    FSIO_ASSERT(need <= done_.size());
    unsigned n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return n;
  }

 private:
  std::int64_t execute(const IoRequest& req) {
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
  unsigned depth_;
  std::vector<IoRequest> queued_;
  std::deque<IoCompletion> done_;
  std::uint64_t syscalls_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_sync_engine(int fd, unsigned depth) { return std::make_unique<SyncEngine>(fd, depth); }

}  // namespace fsio
