// Small writes, zeroing and batches for write_mkfs (see mkfs_io.hpp).
#include "ext/mkfs_io.hpp"

#include <fcntl.h>
#include <linux/falloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

constexpr std::size_t kZeroBuffer = 4u << 20;
constexpr std::uint64_t kZeroCall = 16u << 20;  // 4 s at a card's 4 MB/s

fsio::Error interrupted() { return make_error(Errc::interrupted, ""); }

// One fallocate call: the device may zero at its write speed (a card
// without WRITE ZEROES), so the calls are bounded and Ctrl-C is looked at
// between them.
fsio::Status fallocate_zeros(const fsio::Device& d, std::uint64_t off, std::uint64_t n, std::uint64_t* fallocated) {
  for (std::uint64_t k = 0; k < n;) {
    const std::uint64_t m = std::min<std::uint64_t>(n - k, kZeroCall);
    const off_t abs = off_t(d.offset() + off + k);
    if (::fallocate(d.fd(), FALLOC_FL_ZERO_RANGE, abs, off_t(m)) != 0 &&
        (d.is_block_device() || ::fallocate(d.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, abs, off_t(m)) != 0)) {
      if (k) return fsio::errno_error(d.path() + ": zeroing " + std::to_string(m) + " bytes at byte " + std::to_string(off + k));
      return fsio::errno_error("");
    }
    k += m;
    *fallocated += m;
    if (fsio::InterruptGuard::requested() && k < n) return interrupted();
  }
  return {};
}

}  // namespace

std::uint64_t io_unit(const fsio::IoQueue& q) {
  const fsio::Device& d = q.device();
  return std::max<std::uint64_t>(512, d.direct() ? d.topology().dio_offset_align : d.logical_sector_size());
}

fsio::Result<std::vector<std::byte>> read_bytes(fsio::IoQueue& q, std::uint64_t off, std::size_t n) {
  const std::uint64_t u = io_unit(q), a = off / u * u, z = (off + n + u - 1) / u * u;
  fsio::AlignedBuffer buf(z - a);
  FSIO_TRY(q.read(a, buf.span()));
  std::vector<std::byte> out(n);
  std::memcpy(out.data(), buf.data() + (off - a), n);
  return out;
}

fsio::Status write_bytes(fsio::IoQueue& q, std::uint64_t off, std::span<const std::byte> data, const char* what) {
  const std::uint64_t u = io_unit(q), a = off / u * u, z = (off + data.size() + u - 1) / u * u;
  fsio::AlignedBuffer buf(z - a);
  if (a != off || z != off + data.size()) FSIO_TRY_CTX(q.read(a, buf.span()), std::string("reading for ") + what);
  std::memcpy(buf.data() + (off - a), data.data(), data.size());
  FSIO_TRY_CTX(q.write(a, buf.span()), what);
  return {};
}

fsio::Status zero_bytes(fsio::IoQueue& q, std::uint64_t off, std::uint64_t n, std::uint64_t* fallocated,
                        std::uint64_t* written) {
  const fsio::Device& d = q.device();
  auto st = fallocate_zeros(d, off, n, fallocated);
  if (st || st.error().code == Errc::interrupted || !st.error().context.empty()) return st;
  const int err = st.error().sys_errno;
  if (err != EOPNOTSUPP && err != EINVAL && err != ENOSYS && err != ENODEV)
    return fsio::errno_error(err, d.path() + ": zeroing " + std::to_string(n) + " bytes at byte " + std::to_string(off));
  static const fsio::AlignedBuffer zeros(kZeroBuffer);
  auto plug = q.plug();
  for (std::uint64_t k = 0; k < n;) {
    const std::uint64_t m = std::min<std::uint64_t>(n - k, zeros.size());
    plug.write(off + k, zeros.span().first(m));
    k += m;
    if (plug.pending_bytes() >= 64u << 20 || k == n) {
      FSIO_TRY_CTX(plug.finish(), "writing zeros");
      if (fsio::InterruptGuard::requested() && k < n) return interrupted();
    }
  }
  *written += n;
  return {};
}

WriteBatch::WriteBatch(fsio::IoQueue& q, std::size_t arena, fsio::Progress* progress, const char* what)
    : q_(q), arena_(arena), plug_(q.plug()), progress_(progress), what_(what) {}

fsio::Status WriteBatch::submit() {
  if (plug_.pending() == 0) return {};
  const std::uint64_t n = plug_.pending_bytes();
  FSIO_TRY_CTX(plug_.finish(), what_);
  ++plugs_;
  bytes_ += n;
  if (progress_) progress_->add(n);
  used_ = pending_ = 0;
  if (fsio::InterruptGuard::requested()) return interrupted();
  return {};
}

fsio::Result<std::span<std::byte>> WriteBatch::take(std::uint64_t off, std::size_t n) {
  if (used_ + n > arena_.size()) FSIO_TRY(submit());
  FSIO_ASSERT(n <= arena_.size());
  const std::span<std::byte> s = arena_.span().subspan(used_, n);
  used_ += n;
  plug_.write(off, s);
  return s;
}

fsio::Status WriteBatch::write(std::uint64_t off, std::span<const std::byte> data) {
  plug_.write(off, data);
  pending_ += data.size();
  if (pending_ >= arena_.size()) return submit();
  return {};
}

fsio::Status WriteBatch::finish() { return submit(); }

}  // namespace ext
