// fio's null engine (fio HOWTO, "ioengine=null"): every request completes at
// once with its full length and no data moves, so a job measures ddbench's
// own overhead. There is no file: the job's range lives in an empty memfd
// of size= bytes, which the engine never reads or writes.
#include <sys/mman.h>
#include <unistd.h>

#include <deque>
#include <string>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

class NullEngine final : public fsio::Engine {
 public:
  explicit NullEngine(unsigned depth) : depth_(depth) {}
  const char* name() const override { return "null"; }
  unsigned depth() const override { return depth_; }
  unsigned in_flight() const override { return unsigned(queued_.size() + done_.size()); }
  fsio::Status queue(const fsio::IoRequest& req) override {
    if (in_flight() >= depth_) return fsio::make_error(fsio::Errc::busy, "null engine: queue full");
    queued_.push_back({req.user_data, std::int64_t(req.op == fsio::IoOp::flush ? 0 : req.bytes)});
    return {};
  }
  fsio::Result<unsigned> commit() override {
    const auto n = unsigned(queued_.size());
    done_.insert(done_.end(), queued_.begin(), queued_.end());
    queued_.clear();
    if (n) ++syscalls_;
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
  unsigned depth_;
  std::deque<fsio::IoCompletion> queued_, done_;
  std::uint64_t syscalls_ = 0;
};

}  // namespace

std::unique_ptr<fsio::Engine> make_null_engine(unsigned depth) { return std::make_unique<NullEngine>(depth); }

fsio::Result<fsio::Device> open_null_target(const std::string& name, std::uint64_t size) {
  const int fd = ::memfd_create("ddbench-null", MFD_CLOEXEC);
  if (fd < 0) return fsio::errno_error(errno, name + ": ioengine=null: memfd_create");
  if (::ftruncate(fd, off_t(size)) != 0) {
    const int e = errno;
    ::close(fd);
    return fsio::errno_error(e, name + ": ioengine=null: size the memfd to " + std::to_string(size) + " bytes");
  }
  fsio::OpenOptions open;
  open.write = true;
  open.direct = false;
  open.exclusive = false;
  auto dev = fsio::Device::open("/proc/self/fd/" + std::to_string(fd), open);
  ::close(fd);
  return dev;
}

}  // namespace bench
