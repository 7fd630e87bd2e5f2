// fio's null engine (fio HOWTO, "ioengine=null"): every request completes at
// once with its full length and no data moves, so a job measures ddbench's
// own overhead. There is no file: the job's range lives in an empty memfd
// of size= bytes, which the engine never reads or writes.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "cmd/bench/run.hpp"

namespace bench {
namespace {

class NullEngine final : public fsio::InlineEngine {
 public:
  explicit NullEngine(unsigned depth) : InlineEngine("null", depth) {}
  // Counted as one call a non-empty commit (the batch), not one a request.
  fsio::Result<unsigned> commit() override {
    const unsigned n = FSIO_TRY(InlineEngine::commit());
    if (n) ++syscalls_;
    return n;
  }

 private:
  std::int64_t carry_out(const fsio::IoRequest& req) override {
    return req.op == fsio::IoOp::flush ? 0 : std::int64_t(req.bytes);
  }
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
