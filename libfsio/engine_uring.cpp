// The io_uring engine (after fio's engines/io_uring.c), through liburing.
//
// queue() only fills SQEs in shared memory; commit() hands all of them to the
// kernel with one io_uring_submit; reap() takes CQEs straight from the shared
// ring and enters the kernel only when fewer than min_complete are there.
// syscalls() counts the io_uring_enter calls we make: the whole point of the
// engine is to make that number small, so it must be honest.
#include <liburing.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libfsio/engine.hpp"

namespace fsio {
namespace {

class UringEngine final : public Engine {
 public:
  UringEngine(int fd, unsigned depth) : fd_(fd), depth_(depth) {}
  ~UringEngine() override {
    // A ring that was never set up has ring_fd 0 in its zeroed struct:
    // io_uring_queue_exit would close descriptor 0, which may be anything
    // (with stdin closed, the device itself).
    if (!ready_) return;
    // Never leave the kernel writing into buffers the caller is about to
    // free: IoQueue reaps everything, so this only waits after a failed reap.
    if (submitted_ > 0) {
      io_uring_cqe* cqe = nullptr;
      while (submitted_ > 0 && io_uring_wait_cqe(&ring_, &cqe) == 0) {
        io_uring_cqe_seen(&ring_, cqe);
        --submitted_;
      }
    }
    io_uring_queue_exit(&ring_);
  }

  Status init() {
    // COOP_TASKRUN (5.19) avoids interrupting us to run completion work;
    // SINGLE_ISSUER (6.0) lets the kernel skip locking. SINGLE_ISSUER binds
    // the ring to one task, so the ring starts disabled and is enabled by the
    // first commit(): the thread that uses the engine owns it, not the one
    // that created it. Older kernels refuse unknown flags with EINVAL, so we
    // step down to plainer rings.
    const unsigned attempts[] = {
        IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_R_DISABLED,
        IORING_SETUP_COOP_TASKRUN,
        0,
    };
    int ret = -EINVAL;
    for (unsigned flags : attempts) {
      io_uring_params params{};
      params.flags = flags;
      ret = io_uring_queue_init_params(depth_, &ring_, &params);
      if (ret == 0) {
        ready_ = true;
        disabled_ = (flags & IORING_SETUP_R_DISABLED) != 0;
        return {};
      }
      if (ret != -EINVAL) break;
    }
    return Error{Errc::unsupported, -ret, "io_uring with " + std::to_string(depth_) + " entries"};
  }

  const char* name() const override { return "uring"; }
  unsigned depth() const override { return depth_; }
  unsigned in_flight() const override { return queued_ + submitted_; }
  std::uint64_t syscalls() const override { return syscalls_; }

  Status queue(const IoRequest& req) override {
    if (in_flight() >= depth_) return make_error(Errc::busy, "io_uring queue full");
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    // The SQ ring has at least depth_ entries and we never have more than
    // depth_ outstanding, so an SQE is always free here.
    FSIO_ASSERT(sqe != nullptr);
    switch (req.op) {
      case IoOp::flush: io_uring_prep_fsync(sqe, fd_, req.datasync ? IORING_FSYNC_DATASYNC : 0); break;
      case IoOp::read:
        if (req.iovcnt == 1)
          io_uring_prep_read(sqe, fd_, req.iov[0].iov_base, unsigned(req.iov[0].iov_len), req.offset);
        else io_uring_prep_readv(sqe, fd_, req.iov, req.iovcnt, req.offset);
        break;
      case IoOp::write:
        // RWF_DSYNC travels in rw_flags, which IORING_OP_WRITEV honours on
        // every kernel that has io_uring; the plain WRITE op is used only
        // without it.
        if (req.iovcnt == 1 && !req.dsync)
          io_uring_prep_write(sqe, fd_, req.iov[0].iov_base, unsigned(req.iov[0].iov_len), req.offset);
        else io_uring_prep_writev2(sqe, fd_, req.iov, req.iovcnt, req.offset, req.dsync ? RWF_DSYNC : 0);
        break;
    }
    sqe->ioprio = req.ioprio;  // after prep, which zeroes it
    io_uring_sqe_set_data64(sqe, req.user_data);
    ++queued_;
    return {};
  }

  Result<unsigned> commit() override {
    if (queued_ == 0) return 0u;
    if (disabled_) {
      ++syscalls_;
      // liburing 2.3 declares io_uring_enable_rings but does not export it
      // from the shared library, so register directly.
      if (syscall(__NR_io_uring_register, ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) < 0)
        return errno_error("enable io_uring");
      disabled_ = false;
    }
    for (;;) {
      ++syscalls_;
      int ret = io_uring_submit(&ring_);
      if (ret == -EINTR) continue;
      // EAGAIN/EBUSY: the kernel is short of resources or the CQ ring is
      // full; the SQEs stay in the ring and reap() submits them while waiting.
      if (ret == -EAGAIN || ret == -EBUSY) return 0u;
      if (ret < 0) return errno_error(-ret, "io_uring_submit");
      move_submitted(unsigned(ret));
      return unsigned(ret);
    }
  }

  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override {
    unsigned got = take_ready(out);
    while (got < min_complete && got < out.size()) {
      FSIO_ASSERT(in_flight() > 0);  // waiting for nothing would hang
      unsigned want = min_complete - got;
      if (want > in_flight()) want = in_flight();
      // submit_and_wait also pushes SQEs a refused submit left behind.
      ++syscalls_;
      int ret = io_uring_submit_and_wait(&ring_, want);
      if (ret == -EINTR) continue;
      if (ret < 0) return errno_error(-ret, "io_uring wait");
      move_submitted(unsigned(ret));
      got += take_ready(out.subspan(got));
    }
    return got;
  }

 private:
  void move_submitted(unsigned n) {
    if (n > queued_) n = queued_;
    queued_ -= n;
    submitted_ += n;
  }

  // Copy CQEs already in the shared ring; no syscall. (liburing's
  // io_uring_peek_batch_cqe may enter the kernel to flush task work, which
  // would be a syscall we did not count.)
  unsigned take_ready(std::span<IoCompletion> out) {
    unsigned n = 0;
    unsigned head = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == out.size()) break;
      out[n].user_data = io_uring_cqe_get_data64(cqe);
      out[n].result = cqe->res;
      ++n;
    }
    io_uring_cq_advance(&ring_, n);
    submitted_ -= n;
    return n;
  }

  io_uring ring_{};
  int fd_;
  unsigned depth_;
  bool ready_ = false;  // io_uring_queue_init succeeded: ring_ is ours to exit
  bool disabled_ = false;
  unsigned queued_ = 0;     // SQEs prepared, not yet taken by the kernel
  unsigned submitted_ = 0;  // taken by the kernel, CQE not yet reaped
  std::uint64_t syscalls_ = 0;
};

}  // namespace

Result<std::unique_ptr<Engine>> make_uring_engine(int fd, unsigned depth) {
  if (depth == 0) return make_error(Errc::invalid_argument, "io_uring depth must be at least 1");
  auto engine = std::make_unique<UringEngine>(fd, depth);
  FSIO_TRY(engine->init());
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace fsio
