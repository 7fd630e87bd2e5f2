// BlockWriter: fill whole blocks before committing them.
//
// The lesson of "improve generic_file_buffered_write": a stream of small or
// offset segments must not cost one commit (and one read-modify-write) per
// segment. Bytes are gathered into the open block; the block is committed
// once it is full or the stream moves elsewhere, and only a block that is
// still partial at that point is read from the device and merged.
#include "libfsio/block_writer.hpp"

#include <algorithm>
#include <cstring>

namespace fsio {

BlockWriter::BlockWriter(IoQueue& queue, std::uint32_t block_size, std::uint64_t batch_bytes)
    : q_(queue), bs_(block_size), batch_bytes_(std::max<std::uint64_t>(batch_bytes, block_size)) {
  FSIO_ASSERT(block_size > 0);
}

namespace {

// Add [begin, end) to a sorted list of disjoint ranges, joining neighbours.
void add_range(std::vector<std::pair<std::uint32_t, std::uint32_t>>& ranges, std::uint32_t begin, std::uint32_t end) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  out.reserve(ranges.size() + 1);
  bool placed = false;
  for (auto [b, e] : ranges) {
    if (e < begin) {
      out.emplace_back(b, e);
    } else if (end < b) {
      if (!placed) out.emplace_back(begin, end);
      placed = true;
      out.emplace_back(b, e);
    } else {  // overlapping or touching: absorb into the new range
      begin = std::min(begin, b);
      end = std::max(end, e);
    }
  }
  if (!placed) out.emplace_back(begin, end);
  std::sort(out.begin(), out.end());
  ranges = std::move(out);
}

}  // namespace

Status BlockWriter::write(std::uint64_t offset, std::span<const std::byte> data) {
  ++segments_;
  while (!data.empty()) {
    std::uint64_t block = offset / bs_;
    auto in = std::uint32_t(offset % bs_);
    auto n = std::uint32_t(std::min<std::uint64_t>(bs_ - in, data.size()));

    if (auto staged = staged_.find(block); staged != staged_.end()) {
      // Already committed but not yet written: the later bytes win in place.
      std::memcpy(staged->second.data() + in, data.data(), n);
    } else {
      if (open_ && open_block_ != block) FSIO_TRY(commit_open_block());
      if (!open_) {
        open_ = true;
        open_block_ = block;
        open_buf_ = AlignedBuffer(bs_);
        covered_.clear();
      }
      std::memcpy(open_buf_.data() + in, data.data(), n);
      add_range(covered_, in, in + n);
      // A full block needs no read; commit it now rather than holding it.
      if (covered_.size() == 1 && covered_[0] == std::pair<std::uint32_t, std::uint32_t>{0, bs_})
        FSIO_TRY(commit_open_block());
    }
    offset += n;
    data = data.subspan(n);
  }
  return {};
}

Status BlockWriter::finish() {
  if (open_) FSIO_TRY(commit_open_block());
  return submit_batch();
}

Status BlockWriter::commit_open_block() {
  FSIO_ASSERT(open_);
  open_ = false;
  bool full = covered_.size() == 1 && covered_[0] == std::pair<std::uint32_t, std::uint32_t>{0, bs_};
  if (!full) {
    // Read-modify-write: the device's bytes, overlaid with ours. A block
    // straddling the end of the device reads zeros past the end (the queue's
    // guard) and is written back truncated.
    AlignedBuffer disk(bs_);
    FSIO_TRY(q_.read(open_block_ * bs_, disk.span()));
    ++edge_reads_;
    for (auto [b, e] : covered_) std::memcpy(disk.data() + b, open_buf_.data() + b, e - b);
    open_buf_ = std::move(disk);
  }
  // A staged block is updated in place and never reopened, so this is new.
  bool inserted = staged_.emplace(open_block_, std::move(open_buf_)).second;
  FSIO_ASSERT(inserted);
  covered_.clear();
  staged_bytes_ += bs_;
  ++commits_;
  if (staged_bytes_ >= batch_bytes_) FSIO_TRY(submit_batch());
  return {};
}

// One plug per batch: IoQueue sorts the blocks and merges neighbours into
// requests of up to max_request bytes.
Status BlockWriter::submit_batch() {
  if (staged_.empty()) return {};
  auto plug = q_.plug();
  for (auto& [block, buf] : staged_) plug.write(block * bs_, buf.span());
  auto status = plug.finish();
  // Dropped even on failure: the caller gets the error, and retrying the same
  // blocks behind its back would hide it.
  staged_.clear();
  staged_bytes_ = 0;
  return status;
}

}  // namespace fsio
