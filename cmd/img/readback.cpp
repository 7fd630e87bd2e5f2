#include "cmd/img/readback.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cmd/img/save.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kReadBatch = 16u << 20;  // a multiple of kCheckChunk

std::string at_text(std::uint64_t off) { return "byte " + std::to_string(off) + " (" + fsio::format_hex(off) + ")"; }

// A read-only Device that does not read the page cache: O_DIRECT, or, where
// that is refused, buffered with the cached pages dropped first.
fsio::Result<fsio::Device> open_uncached(const std::string& path, std::uint64_t offset, std::string* note) {
  fsio::OpenOptions oo;
  oo.offset = offset;
  auto dev = FSIO_TRY(fsio::Device::open(path, oo));
  if (dev.direct()) return dev;
  if (dev.is_block_device()) {
    if (::ioctl(dev.fd(), BLKFLSBUF, 0) != 0) return fsio::errno_error("drop the cache (BLKFLSBUF)").at(path);
    *note = dev.direct_fallback() + "; its cache was dropped first (BLKFLSBUF)";
    return dev;
  }
  if (::fsync(dev.fd()) != 0) return fsio::errno_error("fsync before dropping the cache").at(path);
  if (const int e = ::posix_fadvise(dev.fd(), 0, 0, POSIX_FADV_DONTNEED); e != 0)
    return fsio::errno_error(e, "drop the cache (POSIX_FADV_DONTNEED)").at(path);
  *note = dev.direct_fallback() + "; its cache was dropped first (fsync, POSIX_FADV_DONTNEED)";
  return dev;
}

// One part of an extent read back: image bytes [offset, offset + length)
// at buf + at (the read itself was widened to the direct-I/O unit).
struct Part {
  const WrittenMap::Extent* extent;
  std::uint64_t offset, length, at;
};

class Checker {
 public:
  Checker(fsio::IoQueue& q, const WrittenMap& map) : q_(q), map_(map), buf_(kReadBatch + 2 * align()) {}

  std::uint64_t align() const {
    return q_.device().direct() ? std::max<std::uint64_t>(q_.device().topology().dio_offset_align, 1) : 1;
  }
  // Adds the extent's bytes, checking each batch as it fills.
  fsio::Status add(const WrittenMap::Extent& e) {
    for (std::uint64_t done = 0; done < e.length && !diff_;) {
      const std::uint64_t n = std::min(e.length - done, kReadBatch);
      const std::uint64_t a = align(), begin = (e.offset + done) / a * a, end = (e.offset + done + n + a - 1) / a * a;
      if (used_ + (end - begin) > buf_.size()) FSIO_TRY(check());
      plug_.read(begin, buf_.span().subspan(used_, end - begin));
      parts_.push_back({&e, e.offset + done, n, used_ + (e.offset + done - begin)});
      used_ += end - begin;
      done += n;
    }
    return {};
  }
  fsio::Status check();
  std::uint64_t compared() const { return compared_; }
  std::optional<Difference>& difference() { return diff_; }
  std::atomic<std::uint64_t>* progress = nullptr;

 private:
  void compare(const Part& p, const std::byte* got);
  fsio::IoQueue& q_;
  const WrittenMap& map_;
  fsio::AlignedBuffer buf_;
  fsio::IoQueue::Plug plug_ = q_.plug();
  std::vector<Part> parts_;
  std::uint64_t used_ = 0, compared_ = 0;
  std::optional<Difference> diff_;
};

fsio::Status Checker::check() {
  if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
  FSIO_TRY(plug_.finish());
  for (const Part& p : parts_) {
    if (!diff_) compare(p, buf_.data() + p.at);
    compared_ += p.length;
    if (progress) progress->fetch_add(p.length, std::memory_order_relaxed);
  }
  parts_.clear();
  used_ = 0;
  return {};
}

void Checker::compare(const Part& p, const std::byte* got) {
  const WrittenMap::Extent& e = *p.extent;
  if (e.zero) {
    if (all_zero({got, p.length})) return;
    std::uint64_t i = 0;
    while (got[i] == std::byte{0}) ++i;
    char v[8];
    std::snprintf(v, sizeof v, "0x%02X", std::to_integer<unsigned>(got[i]));
    diff_ = Difference{p.offset + i, 1, true, at_text(p.offset + i) + " is " + v + ", zeros were written there"};
    return;
  }
  // p.offset - e.offset is a multiple of kCheckChunk (add() splits at kReadBatch).
  for (std::uint64_t at = 0; at < p.length; at += kCheckChunk) {
    const std::uint64_t n = std::min(kCheckChunk, p.length - at);
    const std::size_t k = e.first_crc + std::size_t((p.offset + at - e.offset) / kCheckChunk);
    if (WrittenMap::chunk_crc(got + at, n) == map_.crcs()[k]) continue;
    diff_ = Difference{p.offset + at, n, false,
                       "the " + std::to_string(n) + " bytes from " + at_text(p.offset + at) +
                           " differ from what was written (CRC-32C)"};
    return;
  }
}

}  // namespace

fsio::Result<ReadbackReport> read_back(const std::string& path, std::uint64_t offset, const WrittenMap& map,
                                       fsio::EngineKind engine, std::atomic<std::uint64_t>* progress) {
  const auto start = std::chrono::steady_clock::now();
  ReadbackReport rep;
  auto dev = FSIO_TRY(open_uncached(path, offset, &rep.cache_note));
  rep.direct = dev.direct();
  auto q = FSIO_TRY(fsio::IoQueue::create(dev, {.engine = engine}));
  Checker c(q, map);
  c.progress = progress;
  for (const auto& e : map.extents()) {
    FSIO_TRY(c.add(e));
    if (c.difference()) break;
  }
  if (!c.difference()) FSIO_TRY(c.check());
  rep.bytes = c.compared();
  rep.difference = c.difference();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

fsio::Status pinpoint(const std::string& bad, const std::string& good, std::uint64_t offset, Difference& d) {
  std::string note;
  auto b = FSIO_TRY(open_uncached(bad, offset, &note));
  auto g = FSIO_TRY(open_uncached(good, offset, &note));
  const std::uint64_t a = std::max<std::uint64_t>({b.topology().dio_offset_align, g.topology().dio_offset_align, 1});
  const std::uint64_t begin = d.offset / a * a, end = (d.offset + d.length + a - 1) / a * a;
  fsio::AlignedBuffer bb(end - begin), gb(end - begin);
  auto qb = FSIO_TRY(fsio::IoQueue::create(b));
  auto qg = FSIO_TRY(fsio::IoQueue::create(g));
  FSIO_TRY(qb.read(begin, bb.span()));
  FSIO_TRY(qg.read(begin, gb.span()));
  for (std::uint64_t i = d.offset - begin; i < d.offset - begin + d.length; ++i) {
    if (bb.data()[i] == gb.data()[i]) continue;
    char v[64];
    std::snprintf(v, sizeof v, " is 0x%02X, 0x%02X was written (", std::to_integer<unsigned>(bb.data()[i]),
                  std::to_integer<unsigned>(gb.data()[i]));
    d.offset = begin + i;
    d.length = 1;
    d.exact = true;
    d.text = at_text(d.offset) + v + "as " + good + " holds it, which verified)";
    return {};
  }
  return make_error(Errc::io, bad + ": the chunk at " + at_text(d.offset) + " now reads as " + good + " does");
}

}  // namespace img
