// fio's ftruncate engine (engines/ftruncate.c in fio 3.33): a write request
// at OFFSET is ftruncate(fd, OFFSET), so the file grows and shrinks as the
// offsets go and no data moves; a read fails with EINVAL, as in fio. It is a
// synchronous engine: each request is carried out when it is committed.
#include <unistd.h>

#include <cerrno>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

class FtruncateEngine final : public fsio::InlineEngine {
 public:
  FtruncateEngine(int fd, unsigned depth) : InlineEngine("ftruncate", depth), fd_(fd) {}

 private:
  // The request's full length on success, else -errno (fio's io_u->error).
  std::int64_t carry_out(const fsio::IoRequest& req) override {
    ++syscalls_;
    int rc = 0;
    if (req.op == fsio::IoOp::write) rc = ::ftruncate(fd_, off_t(req.offset));
    else if (req.op == fsio::IoOp::flush) rc = req.datasync ? ::fdatasync(fd_) : ::fsync(fd_);
    else return -EINVAL;  // fio: "if (io_u->ddir != DDIR_WRITE) io_u->error = EINVAL"
    if (rc != 0) return -errno;
    return req.op == fsio::IoOp::flush ? 0 : std::int64_t(req.bytes);
  }

  int fd_;
};

}  // namespace

std::unique_ptr<fsio::Engine> make_ftruncate_engine(int fd, unsigned depth) {
  return std::make_unique<FtruncateEngine>(fd, depth);
}

}  // namespace bench
