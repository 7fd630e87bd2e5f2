// fio's ftruncate engine (engines/ftruncate.c in fio 3.33): a write request
// at OFFSET is ftruncate(fd, OFFSET), so the file grows and shrinks as the
// offsets go and no data moves; a read fails with EINVAL, as in fio. It is a
// synchronous engine: each request is carried out when it is committed.
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

class FtruncateEngine final : public fsio::Engine {
 public:
  FtruncateEngine(int fd, unsigned depth) : fd_(fd), depth_(depth) {}
  const char* name() const override { return "ftruncate"; }
  unsigned depth() const override { return depth_; }
  unsigned in_flight() const override { return unsigned(queued_.size() + done_.size()); }
  fsio::Status queue(const fsio::IoRequest& req) override {
    if (in_flight() >= depth_) return fsio::make_error(fsio::Errc::busy, "ftruncate engine: queue full");
    queued_.push_back(req);
    return {};
  }
  fsio::Result<unsigned> commit() override {
    const auto n = unsigned(queued_.size());
    for (const auto& req : queued_) done_.push_back({req.user_data, carry_out(req)});
    queued_.clear();
    return n;
  }
  fsio::Result<unsigned> reap(std::span<fsio::IoCompletion> out, unsigned) override {
    unsigned n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return n;
  }
  std::uint64_t syscalls() const override { return syscalls_; }

 private:
  // The request's full length on success, else -errno (fio's io_u->error).
  std::int64_t carry_out(const fsio::IoRequest& req) {
    ++syscalls_;
    int rc = 0;
    if (req.op == fsio::IoOp::write) rc = ::ftruncate(fd_, off_t(req.offset));
    else if (req.op == fsio::IoOp::flush) rc = req.datasync ? ::fdatasync(fd_) : ::fsync(fd_);
    else return -EINVAL;  // fio: "if (io_u->ddir != DDIR_WRITE) io_u->error = EINVAL"
    if (rc != 0) return -errno;
    return req.op == fsio::IoOp::flush ? 0 : std::int64_t(req.bytes);
  }

  int fd_;
  unsigned depth_;
  std::deque<fsio::IoRequest> queued_;
  std::deque<fsio::IoCompletion> done_;
  std::uint64_t syscalls_ = 0;
};

}  // namespace

std::unique_ptr<fsio::Engine> make_ftruncate_engine(int fd, unsigned depth) {
  return std::make_unique<FtruncateEngine>(fd, depth);
}

}  // namespace bench
