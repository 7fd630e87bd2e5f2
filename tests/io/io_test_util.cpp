#include "io_test_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace fsio::test {

std::byte pattern_byte(std::uint64_t position, std::uint64_t seed) {
  std::uint64_t x = (position + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 29;
  return std::byte(x & 0xff);
}

std::vector<std::byte> pattern(std::uint64_t length, std::uint64_t seed) {
  std::vector<std::byte> out(length);
  for (std::uint64_t i = 0; i < length; ++i) out[i] = pattern_byte(i, seed);
  return out;
}

TempImage::TempImage(std::uint64_t size, std::uint8_t seed) : size_(size) {
  // /tmp is on disk here; prefer TMPDIR when set.
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir ? dir : "/tmp") + "/fsio-io-XXXXXX";
  int fd = mkstemp(tmpl.data());
  if (fd < 0) std::abort();
  path_ = tmpl;
  auto bytes = pattern(size, seed);
  if (pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) std::abort();
  close(fd);
}

TempImage::~TempImage() { unlink(path_.c_str()); }

std::vector<std::byte> TempImage::contents(std::uint64_t offset, std::uint64_t length) const {
  std::vector<std::byte> out(length);
  int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) std::abort();
  ssize_t n = pread(fd, out.data(), length, off_t(offset));
  close(fd);
  out.resize(n < 0 ? 0 : std::size_t(n));
  return out;
}

OpenOptions rw_options(bool direct) {
  OpenOptions o;
  o.write = true;
  o.direct = direct;
  o.allow_mounted = true;
  return o;
}

Device open_or_die(const std::string& path, const OpenOptions& options) {
  auto dev = Device::open(path, options);
  if (!dev) {
    ADD_FAILURE() << "open " << path << ": " << dev.error().message();
    std::abort();
  }
  return std::move(dev).value();
}

std::unique_ptr<Engine> make_inner(EngineKind kind, int fd, unsigned depth, std::string* why) {
  if (kind == EngineKind::psync) return make_sync_engine(fd, depth);
  auto engine = make_uring_engine(fd, depth);
  if (!engine) {
    if (why) *why = engine.error().message();
    return nullptr;
  }
  return std::move(engine).value();
}

const char* engine_label(EngineKind kind) {
  switch (kind) {
    case EngineKind::uring: return "uring";
    case EngineKind::psync: return "psync";
    case EngineKind::automatic: return "auto";
  }
  return "?";
}

std::string engine_param_name(const ::testing::TestParamInfo<EngineKind>& info) { return engine_label(info.param); }

void EngineTest::SetUp() {
  if (GetParam() != EngineKind::uring) return;
  std::string why;
  if (!make_inner(EngineKind::uring, -1, 4, &why)) GTEST_SKIP() << "io_uring unavailable here: " << why;
}

std::unique_ptr<Engine> EngineTest::inner(Device& dev, unsigned depth) {
  auto e = make_inner(GetParam(), dev.fd(), depth, nullptr);
  if (!e) std::abort();  // SetUp skipped already if the ring cannot be made
  return e;
}

IoQueue EngineTest::make_queue_with(Device& dev, std::unique_ptr<Engine> engine, QueueOptions options) {
  auto q = IoQueue::create(dev, std::move(engine), options);
  if (!q) std::abort();
  return std::move(q).value();
}

IoQueue EngineTest::make_queue(Device& dev, QueueOptions options) {
  options.engine = GetParam();
  return make_queue_with(dev, inner(dev, options.depth), options);
}

Status RecordingEngine::queue(const IoRequest& req) {
  auto st = inner_->queue(req);
  if (st && seen) seen->push_back({req.op, req.offset, req.bytes, req.iovcnt, req.dsync});
  return st;
}

Result<unsigned> RecordingEngine::commit() {
  if (commits) ++*commits;
  return inner_->commit();
}

Result<unsigned> RecordingEngine::reap(std::span<IoCompletion> out, unsigned min_complete) {
  return inner_->reap(out, min_complete);
}

Status ShortEngine::queue(const IoRequest& req) {
  if (in_flight() >= depth()) return make_error(Errc::busy, "short engine full");
  queued_.push_back(req);
  return {};
}

Result<unsigned> ShortEngine::commit() {
  for (const IoRequest& req : queued_) {
    std::int64_t res = 0;
    if (req.op == IoOp::flush) {
      ++syscalls_;
      res = fdatasync(fd_) == 0 ? 0 : -errno;
    } else if (!zero_) {
      std::uint64_t want = std::max<std::uint64_t>(req.bytes / 2 / 512 * 512, std::min<std::uint64_t>(512, req.bytes));
      std::vector<iovec> iov;
      for (unsigned i = 0; i < req.iovcnt && want > 0; ++i) {
        iovec v = req.iov[i];
        v.iov_len = std::min<std::uint64_t>(v.iov_len, want);
        want -= v.iov_len;
        iov.push_back(v);
      }
      ++syscalls_;
      ssize_t n = req.op == IoOp::read ? preadv(fd_, iov.data(), int(iov.size()), off_t(req.offset))
                                       : pwritev(fd_, iov.data(), int(iov.size()), off_t(req.offset));
      res = n < 0 ? -errno : n;
    }
    done_.push_back({req.user_data, res});
  }
  auto n = unsigned(queued_.size());
  queued_.clear();
  return n;
}

Result<unsigned> ShortEngine::reap(std::span<IoCompletion> out, unsigned) {
  unsigned n = 0;
  while (n < out.size() && !done_.empty()) {
    out[n++] = done_.back();
    done_.pop_back();
  }
  return n;
}

}  // namespace fsio::test
