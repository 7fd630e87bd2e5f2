#include "cmd/img/lane_writer.hpp"

#include <algorithm>

#include "cmd/img/target.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

LaneWriter::LaneWriter(fsio::Device& dev, fsio::IoQueue* queue, bool keep_unused, bool reads_zeros)
    : dev_(dev), q_(queue), keep_unused_(keep_unused), reads_zeros_(reads_zeros) {
  if (!q_) return;
  zeros_ = fsio::AlignedBuffer(kZeroBuffer);
  plug_.emplace(q_->plug());
  flusher_.emplace([d = &dev_] { return d->flush(); });
}

fsio::Status LaneWriter::submit() {
  if (!plug_) return {};
  FSIO_TRY(flusher_->status());
  unflushed_ += plug_->pending_bytes();
  FSIO_TRY(plug_->finish());
  if (unflushed_ >= kFlushEvery) {
    flusher_->request();
    unflushed_ = 0;
  }
  return {};
}

// O_DIRECT needs the offset, the length and the buffer aligned to the
// device's unit; the one piece that is not (the image's last, ending
// inside a sector) and everything after it go through the page cache.
fsio::Status LaneWriter::fit_direct(std::uint64_t offset, std::uint64_t length, const std::byte* data) {
  if (!dev_.direct()) return {};
  const fsio::Topology& t = dev_.topology();
  const bool fits = (dev_.offset() + offset) % t.dio_offset_align == 0 && length % t.dio_offset_align == 0 &&
                    reinterpret_cast<std::uintptr_t>(data) % t.dio_mem_align == 0;
  if (fits) return {};
  FSIO_TRY(submit());
  return dev_.use_buffered("the image's bytes at " + fsio::format_hex(offset) +
                           " do not fit the device's direct-I/O unit");
}

fsio::Status LaneWriter::write(std::uint64_t offset, std::span<const std::byte> bytes) {
  if (offset + bytes.size() > dev_.size())
    return make_error(Errc::invalid_argument, "the image goes on past the target's end (" +
                                                  std::to_string(dev_.size()) + " bytes; the image has bytes at " +
                                                  std::to_string(offset + bytes.size() - 1) +
                                                  "): the target is smaller than the image");
  if (!plug_) return {};
  FSIO_TRY(fit_direct(offset, bytes.size(), bytes.data()));
  plug_->write(offset, bytes);
  if (plug_->pending_bytes() >= kPlugBytes) FSIO_TRY(submit());
  return {};
}

fsio::Status LaneWriter::zero(std::uint64_t offset, std::uint64_t length) {
  const bool inside = offset + length <= dev_.size();  // past the end, write() names the error
  if (q_ && inside && FSIO_TRY(zero_without_data(dev_, offset, length, zero_range_ok_, counts_.zeroing))) {
    counts_.zero_punched += length;
    return {};
  }
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t n = std::min(kZeroBuffer, length - done);
    FSIO_TRY(write(offset + done, {zeros_.data(), n}));  // no buffer in a dry run: nothing is written
    done += n;
  }
  counts_.zero_written += length;
  return {};
}

fsio::Status LaneWriter::piece(const Piece& p) {
  if (p.length == 0) return {};
  if (p.data) {
    FSIO_TRY(write(p.offset, {p.data, p.length}));
    counts_.data_bytes += p.length;
    return {};
  }
  if (p.unused && keep_unused_) {
    counts_.kept_bytes += p.length;
    return {};
  }
  if (reads_zeros_) {
    counts_.zero_skipped += p.length;
    return {};
  }
  return zero(p.offset, p.length);
}

fsio::Status LaneWriter::batch(const Batch& b) {
  for (const Piece& p : b.pieces) FSIO_TRY(piece(p));
  // The batch's buffer may go back to the pool after this call: its writes go now.
  FSIO_TRY(submit());
  position_.store(b.end, std::memory_order_relaxed);
  return {};
}

fsio::Status LaneWriter::finish(const HeadHold& head, std::uint64_t image_end) {
  if (image_end > position()) FSIO_TRY(piece({position(), image_end - position(), nullptr, true}));
  FSIO_TRY(submit());
  if (q_) {
    FSIO_TRY(flusher_->stop());
    FSIO_TRY(q_->flush());
  }
  writing_head_ = true;
  for (const auto& r : head.runs(keep_unused_, reads_zeros_)) {
    FSIO_TRY(write(r.offset, r.bytes));
    counts_.head_bytes += r.bytes.size();
  }
  FSIO_TRY(submit());
  if (q_) FSIO_TRY(q_->flush());
  position_.store(std::max(position(), image_end), std::memory_order_relaxed);
  return {};
}

}  // namespace img
