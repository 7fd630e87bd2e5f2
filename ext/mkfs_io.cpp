// Small writes, zeroing and batches for write_mkfs (see mkfs_io.hpp).
#include "ext/mkfs_io.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

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
      if (k)
        return fsio::errno_error("zeroing " + std::to_string(m) + " bytes at byte " + std::to_string(off + k))
            .at(d.path());
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

fsio::Result<std::vector<std::vector<std::byte>>> read_ranges(
    fsio::IoQueue& q, const std::vector<std::pair<std::uint64_t, std::size_t>>& ranges) {
  const std::uint64_t u = io_unit(q);
  std::vector<fsio::AlignedBuffer> bufs;
  auto plug = q.plug();
  for (const auto& [off, n] : ranges) {
    const std::uint64_t a = off / u * u, z = (off + n + u - 1) / u * u;
    bufs.emplace_back(z - a);
    plug.read(a, bufs.back().span());
  }
  FSIO_TRY(plug.finish());
  std::vector<std::vector<std::byte>> out;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const auto [off, n] = ranges[k];
    const std::byte* from = bufs[k].data() + (off - off / u * u);
    out.emplace_back(from, from + n);
  }
  return out;
}

fsio::Status write_patches(fsio::IoQueue& q, const std::vector<Patch>& patches, const char* what) {
  const std::uint64_t u = io_unit(q);
  std::vector<fsio::AlignedBuffer> bufs;
  auto reads = q.plug();
  for (const Patch& p : patches) {
    const std::uint64_t a = p.off / u * u, z = (p.off + p.data.size() + u - 1) / u * u;
    bufs.emplace_back(z - a);
    if (a != p.off || z != p.off + p.data.size()) reads.read(a, bufs.back().span());
  }
  FSIO_TRY_CTX(reads.finish(), std::string("reading for ") + what);
  auto writes = q.plug();
  for (std::size_t k = 0; k < patches.size(); ++k) {
    const Patch& p = patches[k];
    const std::uint64_t a = p.off / u * u;
    std::memcpy(bufs[k].data() + (p.off - a), p.data.data(), p.data.size());
    writes.write(a, bufs[k].span());
  }
  FSIO_TRY_CTX(writes.finish(), what);
  return {};
}

fsio::Status zero_bytes(fsio::IoQueue& q, std::uint64_t off, std::uint64_t n, std::uint64_t* fallocated,
                        std::uint64_t* written) {
  const fsio::Device& d = q.device();
  auto st = fallocate_zeros(d, off, n, fallocated);
  if (st || st.error().code == Errc::interrupted || !st.error().context.empty()) return st;
  const int err = st.error().sys_errno;
  if (err != EOPNOTSUPP && err != EINVAL && err != ENOSYS && err != ENODEV)
    return fsio::errno_error(err, "zeroing " + std::to_string(n) + " bytes at byte " + std::to_string(off))
        .at(d.path());
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

fsio::Status discard_target(const fsio::Device& d, std::uint64_t off, std::uint64_t n) {
  if (d.is_block_device()) return d.discard(off, n);
  const std::uint64_t base = d.offset(), end = base + off + n;
  // Pages a probe read (libblkid's) make preallocated extents count as data
  // for SEEK_DATA; they hold nothing that is not on the disk.
  (void)::posix_fadvise(d.fd(), off_t(base + off), off_t(n), POSIX_FADV_DONTNEED);
  std::uint64_t at = base + off;
  while (at < end) {
    const off_t data = ::lseek(d.fd(), off_t(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) return {};          // nothing but holes from here
      return d.discard(at - base, end - at);  // no SEEK_DATA here: punch it all
    }
    if (std::uint64_t(data) >= end) return {};
    off_t hole = ::lseek(d.fd(), data, SEEK_HOLE);
    if (hole < 0) return fsio::errno_error("SEEK_HOLE at byte " + std::to_string(data)).at(d.path());
    const std::uint64_t stop = std::min<std::uint64_t>(std::uint64_t(hole), end);
    FSIO_TRY(d.discard(std::uint64_t(data) - base, stop - std::uint64_t(data)));
    at = stop;
  }
  return {};
}

WriteBatch::WriteBatch(fsio::IoQueue& q, std::size_t arena, std::size_t limit, fsio::Progress* progress,
                       const char* what)
    : arena_(arena), limit_(std::max(limit, arena)), plug_(q.plug()), progress_(progress), what_(what) {}

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
  if (used_ + n > arena_.size() || pending_ + n > limit_) FSIO_TRY(submit());
  FSIO_ASSERT(n <= arena_.size());
  const std::span<std::byte> s = arena_.span().subspan(used_, n);
  used_ += n;
  pending_ += n;
  plug_.write(off, s);
  return s;
}

fsio::Status WriteBatch::write(std::uint64_t off, std::span<const std::byte> data) {
  if (pending_ + data.size() > limit_) FSIO_TRY(submit());
  plug_.write(off, data);
  pending_ += data.size();
  return {};
}

fsio::Status WriteBatch::finish() { return submit(); }

}  // namespace ext
