// The dirty buffer and bounded writeback passes.
#include "ext/writeback.hpp"

#include <algorithm>
#include <cstring>

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
                       std::uint64_t size_hint)
    : fs_(fs), alloc_(alloc), goal_(goal), o_(o), bs_(fs.layout().block_size) {
  std::uint64_t cap = std::max<std::uint64_t>(o_.dirty_limit, bs_);
  if (size_hint > 0) cap = std::min(cap, size_hint + bs_);
  cap = (cap + bs_ - 1) / bs_ * bs_;
  o_.chunk = std::max<std::uint64_t>(o_.chunk / bs_ * bs_, bs_);
  buf_ = fsio::AlignedBuffer(cap);
}

fsio::Result<std::span<std::byte>> FileWriter::space() {
  if (fill_ == buf_.size()) {
    FSIO_TRY(drain(fill_));
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

fsio::Status FileWriter::finish() {
  const std::uint64_t whole = (fill_ + bs_ - 1) / bs_ * bs_;
  std::memset(buf_.data() + fill_, 0, whole - fill_);  // the tail of the last block reads as zeros
  FSIO_TRY(drain(whole));
  return {};
}

fsio::Status FileWriter::drain(std::uint64_t bytes) {
  const std::uint64_t nblocks = bytes / bs_;
  const std::uint64_t per_pass = o_.chunk / bs_;
  if ((base_ / bs_ + nblocks) > (std::uint64_t(1) << 32))
    return fsio::make_error(fsio::Errc::invalid_argument, "ext: a file of more than 2^32 blocks cannot be mapped");
  for (std::uint64_t b = 0; b < nblocks; b += per_pass) {
    if (interrupted && interrupted())
      return fsio::make_error(fsio::Errc::interrupted, "ext: interrupted; nothing was linked, the filesystem is unchanged");
    FSIO_TRY(pass(b, std::min(per_pass, nblocks - b)));
  }
  return {};
}

// One pass (the kernel's nr_to_write budget): map the runs of the window,
// queue each as one request, submit them together.
fsio::Status FileWriter::pass(std::uint64_t first, std::uint64_t nblocks) {
  auto plug = fs_.queue().plug();
  std::uint64_t run_start = first;
  for (std::uint64_t b = first; b < first + nblocks; ++b) {
    if (!o_.sparse) continue;
    if (all_zero(buf_.data() + b * bs_, bs_)) {
      if (b > run_start) FSIO_TRY(map_and_queue(plug, run_start, b - run_start));
      run_start = b + 1;
      ++stats_.hole_blocks;
    }
  }
  if (first + nblocks > run_start) FSIO_TRY(map_and_queue(plug, run_start, first + nblocks - run_start));
  FSIO_TRY(plug.finish());
  ++stats_.passes;
  if (progress) progress->add(nblocks * bs_);
  return {};
}

fsio::Status FileWriter::map_and_queue(fsio::IoQueue::Plug& plug, std::uint64_t block_in_buf, std::uint64_t n) {
  while (n > 0) {
    const BlockRun run = FSIO_TRY(alloc_.alloc_blocks(goal_, std::uint32_t(std::min<std::uint64_t>(n, 1u << 30))));
    const std::uint64_t logical = base_ / bs_ + block_in_buf;
    plug.write(run.start * bs_, buf_.span().subspan(block_in_buf * bs_, std::size_t(run.len) * bs_));
    if (!extents_.empty() && extents_.back().logical + std::uint64_t(extents_.back().len) == logical &&
        extents_.back().physical + extents_.back().len == run.start && extents_.back().len + run.len <= kMaxInitExtentLen) {
      extents_.back().len += run.len;
    } else {
      extents_.push_back(Extent{std::uint32_t(logical), run.len, run.start, false});
    }
    goal_ = run.start + run.len;
    data_blocks_ += run.len;
    stats_.blocks_committed += run.len;
    ++stats_.runs;
    block_in_buf += run.len;
    n -= run.len;
  }
  return {};
}

}  // namespace ext
