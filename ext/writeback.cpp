// The dirty buffer and bounded writeback passes.
#include "ext/writeback.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

namespace ext {
namespace {

bool all_zero(const std::byte* p, std::size_t n) {
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  return acc == 0;
}

}  // namespace

FileWriter::FileWriter(Filesystem& fs, Allocator& alloc, std::uint64_t goal, const WritebackOptions& o,
                       std::optional<std::uint64_t> size)
    : fs_(fs), alloc_(alloc), goal_(goal), o_(o), bs_(fs.layout().block_size) {
  std::uint64_t cap = std::max<std::uint64_t>(o_.dirty_limit, bs_);
  if (size) cap = std::min(cap, *size + bs_);
  cap_ = (cap + bs_ - 1) / bs_ * bs_;
  // Memory follows the data, not the option: nothing is allocated before the
  // first byte, and input of unknown size starts small and doubles.
  first_ = size ? cap_ : kFirstBuffer;
  o_.chunk = std::max<std::uint64_t>(o_.chunk / bs_ * bs_, bs_);
}

void FileWriter::grow(fsio::AlignedBuffer& buf, std::uint64_t keep, std::uint64_t limit) const {
  const std::uint64_t want = std::min(limit, std::max<std::uint64_t>(first_, 2 * std::uint64_t(buf.size())));
  fsio::AlignedBuffer bigger((want + bs_ - 1) / bs_ * bs_);
  if (keep > 0) std::memcpy(bigger.data(), buf.data(), keep);
  buf = std::move(bigger);
}

fsio::Result<std::span<std::byte>> FileWriter::space() {
  if (fill_ == buf_.size() && buf_.size() < cap_) grow(buf_, fill_, cap_);
  if (fill_ == buf_.size()) {
    FSIO_TRY(drain(buf_.span(), fill_, false));
    base_ += fill_;
    fill_ = 0;
  }
  return buf_.span().subspan(fill_);
}

void FileWriter::produced(std::size_t n) {
  FSIO_ASSERT(fill_ + n <= buf_.size());
  fill_ += n;
  ++stats_.segments;
}

fsio::Status FileWriter::write(std::span<const std::byte> data) {
  while (!data.empty()) {
    auto room = FSIO_TRY(space());
    const std::size_t n = std::min(room.size(), data.size());
    std::memcpy(room.data(), data.data(), n);
    fill_ += n;
    data = data.subspan(n);
  }
  ++stats_.segments;
  return {};
}

fsio::Status DataBatch::adopt(fsio::AlignedBuffer buf) {
  bufs_.push_back(std::move(buf));
  if (plug_.pending_bytes() >= limit_) return flush();
  return {};
}

fsio::Status DataBatch::flush() {
  auto st = plug_.finish();
  bufs_.clear();
  return st;
}

fsio::Status FileWriter::finish() {
  const std::uint64_t whole = (fill_ + bs_ - 1) / bs_ * bs_;
  if (whole > 0) std::memset(buf_.data() + fill_, 0, whole - fill_);  // the tail of the last block reads as zeros
  // A file that fits its buffer joins the batch instead of a plug of its own.
  batched_ = o_.batch != nullptr && base_ == 0;
  FSIO_TRY(drain(buf_.span(), whole, true));
  // An empty file wrote nothing: its buffer has no request to outlive.
  if (batched_ && whole > 0) FSIO_TRY(o_.batch->adopt(std::move(buf_)));
  return {};
}

fsio::Status FileWriter::drain(std::span<std::byte> data, std::uint64_t bytes, bool last) {
  const std::uint64_t nblocks = bytes / bs_;
  const std::uint64_t per_pass = o_.chunk / bs_;
  if ((base_ / bs_ + nblocks) > (std::uint64_t(1) << 32))
    return fsio::make_error(fsio::Errc::invalid_argument, "ext: a file of more than 2^32 blocks cannot be mapped");
  for (std::uint64_t b = 0; b < nblocks; b += per_pass) {
    if (interrupted && interrupted())
      return fsio::make_error(fsio::Errc::interrupted,
                              "ext: interrupted; nothing was linked, the filesystem is unchanged");
    // A pass's blocks are all allocated before its data is submitted; a
    // later pass could meet a bitmap no allocation has checked yet, with
    // this pass's data already written: check them all first.
    const bool final_pass = last && b + per_pass >= nblocks;
    if (!final_pass && !batched_ && !bitmaps_checked_) {
      FSIO_TRY(alloc_.check_all_bitmaps());
      bitmaps_checked_ = true;
    }
    FSIO_TRY(pass(data.subspan(b * bs_), base_ / bs_ + b, std::min(per_pass, nblocks - b)));
  }
  return {};
}

// One pass (the kernel's nr_to_write budget): map the runs of the window,
// queue each as one request, submit them together.
fsio::Status FileWriter::pass(std::span<std::byte> data, std::uint64_t logical, std::uint64_t nblocks) {
  auto own = fs_.queue().plug();
  auto& plug = batched_ ? o_.batch->plug() : own;
  std::uint64_t run = 0;  // start of the current run of data blocks, relative to the window
  for (std::uint64_t k = 0; k < nblocks && o_.sparse; ++k) {
    if (all_zero(data.data() + k * bs_, bs_)) {
      if (k > run) FSIO_TRY(map_and_queue(plug, data.subspan(run * bs_), logical + run, k - run));
      run = k + 1;
      ++stats_.hole_blocks;
    }
  }
  if (nblocks > run) FSIO_TRY(map_and_queue(plug, data.subspan(run * bs_), logical + run, nblocks - run));
  if (!batched_) FSIO_TRY(plug.finish());
  ++stats_.passes;
  if (progress) progress->add(nblocks * bs_);
  return {};
}

fsio::Status FileWriter::map_and_queue(fsio::IoQueue::Plug& plug, std::span<std::byte> data, std::uint64_t logical,
                                       std::uint64_t n) {
  std::uint64_t at = 0;  // blocks of `data` queued so far
  while (n > 0) {
    const BlockRun run = FSIO_TRY(alloc_.alloc_blocks(goal_, std::uint32_t(std::min<std::uint64_t>(n, 1u << 30))));
    plug.write(run.start * bs_, data.subspan(at * bs_, std::size_t(run.len) * bs_));
    if (!extents_.empty() && extents_.back().logical + std::uint64_t(extents_.back().len) == logical &&
        extents_.back().physical + extents_.back().len == run.start &&
        extents_.back().len + run.len <= kMaxInitExtentLen) {
      extents_.back().len += run.len;
    } else {
      extents_.push_back(Extent{std::uint32_t(logical), run.len, run.start, false});
    }
    goal_ = run.start + run.len;
    data_blocks_ += run.len;
    stats_.blocks_committed += run.len;
    ++stats_.runs;
    at += run.len;
    logical += run.len;
    n -= run.len;
  }
  return {};
}

namespace {

// The two halves of the dirty buffer, handed between the reader thread
// (fills a free half, growing it as the input arrives) and the writeback
// thread (drains a filled one). A half belongs to the reader while it is
// not `filled`, to the writeback thread while it is.
struct Halves {
  std::mutex m;
  std::condition_variable cv;
  fsio::AlignedBuffer buf[2];
  std::uint64_t bytes[2] = {};
  bool filled[2] = {};
  bool eof[2] = {};
  bool stop = false;
  std::optional<fsio::Error> error;
  std::uint64_t segments = 0;
};

void read_halves(Source& src, std::uint64_t half, const std::function<void(fsio::AlignedBuffer&, std::uint64_t)>& grow,
                 Halves& h) {
  for (int i = 0;; i ^= 1) {
    {
      std::unique_lock lock(h.m);
      h.cv.wait(lock, [&] { return !h.filled[i] || h.stop; });
      if (h.stop) return;
    }
    fsio::AlignedBuffer& buf = h.buf[i];
    std::uint64_t n = 0, segments = 0;
    bool eof = false;
    std::optional<fsio::Error> err;
    while (n < half) {
      if (n == buf.size()) grow(buf, n);
      auto r = src.read(buf.span().subspan(n));
      if (!r) {
        err = std::move(r).error();
        break;
      }
      if (*r == 0) {
        eof = true;
        break;
      }
      n += *r;
      ++segments;
    }
    std::lock_guard lock(h.m);
    h.bytes[i] = n;
    h.filled[i] = true;
    h.eof[i] = eof || err.has_value();
    h.segments += segments;
    if (err) h.error = std::move(err);
    h.cv.notify_all();
    if (h.eof[i]) return;
  }
}

}  // namespace

fsio::Status FileWriter::stream(Source& src) {
  const std::uint64_t half = cap_ / 2 / bs_ * bs_;
  if (half == 0 || (src.size() && *src.size() <= cap_)) {
    // Input that fits the buffer (a file of known size): one buffer, no second thread.
    for (;;) {
      auto room = FSIO_TRY(space());
      const std::size_t n = FSIO_TRY(src.read(room));
      if (n == 0) break;
      produced(n);
    }
    return finish();
  }
  Halves h;
  std::thread reader(
      read_halves, std::ref(src), half,
      [this, half](fsio::AlignedBuffer& b, std::uint64_t keep) { grow(b, keep, half); }, std::ref(h));
  fsio::Status st;
  for (int i = 0;; i ^= 1) {
    std::uint64_t bytes = 0;
    bool eof = false;
    {
      // Waiting for input is where Ctrl-C usually finds us: poll for it.
      std::unique_lock lock(h.m);
      while (!h.filled[i] && !(interrupted && interrupted())) h.cv.wait_for(lock, std::chrono::milliseconds(100));
      if (!h.filled[i]) {
        st = fsio::make_error(fsio::Errc::interrupted,
                              "ext: interrupted; nothing was linked, the filesystem is unchanged");
        break;
      }
      if (h.error) {
        st = *h.error;
        break;
      }
      bytes = h.bytes[i];
      eof = h.eof[i];
    }
    const std::uint64_t whole = (bytes + bs_ - 1) / bs_ * bs_;
    if (whole > 0) std::memset(h.buf[i].data() + bytes, 0, whole - bytes);  // the last block's tail reads as zeros
    st = drain(h.buf[i].span(), whole, eof);
    if (!st) break;
    base_ += bytes;
    std::lock_guard lock(h.m);
    h.filled[i] = false;
    h.cv.notify_all();
    if (eof) break;
  }
  {
    std::lock_guard lock(h.m);
    h.stop = true;
    h.cv.notify_all();
  }
  if (!st) src.cancel();
  reader.join();
  stats_.segments += h.segments;
  return st;
}

}  // namespace ext
