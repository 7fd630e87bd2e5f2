// LaneWriter: one target's side of a restore to several targets
// (fanout.hpp): batches of pieces become plugged writes on the target's
// own IoQueue, in the order restore.hpp gives for one target: each batch's
// writes submitted before the next batch, the unused tail, a flush, the
// held-back head (HeadHold), a flush. Every 64 MiB written a Flusher
// drains the device's cache in the background (flusher.hpp).
//
// Zeros: skipped where the target reads zeros already (a file this run
// created), unused ones skipped with keep_unused; 1 MiB and more by
// zero_range (punch hole / WRITE ZEROES) where the target can, the rest as
// writes of a zero buffer. A piece past the target's end fails the target
// (an image whose size was not known before it was read). A piece the
// device's direct-I/O unit does not divide (an image ending inside a
// sector) turns O_DIRECT off for the rest (Device::use_buffered).
// Used by one thread; queue nullptr: a dry run that only counts.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "cmd/img/fanout.hpp"
#include "cmd/img/flusher.hpp"
#include "libfsio/io_queue.hpp"

namespace img {

struct LaneCounts {
  std::uint64_t data_bytes = 0;    // image data written
  std::uint64_t zero_written = 0;  // zeros written as data
  std::uint64_t zero_punched = 0;  // zeros by punch hole / WRITE ZEROES
  std::uint64_t zero_skipped = 0;  // zeros the target reads already (created by this run)
  std::uint64_t kept_bytes = 0;    // unused, left as it was (keep_unused)
  std::uint64_t head_bytes = 0;    // the first 1 MiB, written last (data and zeros)
  std::string zeroing = "written";
};

class LaneWriter {
 public:
  LaneWriter(fsio::Device& dev, fsio::IoQueue* queue, bool keep_unused, bool reads_zeros);

  fsio::Status batch(const Batch& b);
  // The unused tail [position, image_end) (image_end 0: none), flush, the
  // head, flush.
  fsio::Status finish(const HeadHold& head, std::uint64_t image_end);

  // Everything before this image offset is written (or was skipped).
  std::uint64_t position() const { return position_.load(std::memory_order_relaxed); }
  const std::atomic<std::uint64_t>& position_counter() const { return position_; }
  bool writing_head() const { return writing_head_; }
  const LaneCounts& counts() const { return counts_; }

 private:
  fsio::Status piece(const Piece& p);
  fsio::Status zero(std::uint64_t offset, std::uint64_t length);
  fsio::Status write(std::uint64_t offset, std::span<const std::byte> bytes);
  fsio::Status fit_direct(std::uint64_t offset, std::uint64_t length, const std::byte* data);
  fsio::Status submit();

  fsio::Device& dev_;
  fsio::IoQueue* q_;
  bool keep_unused_, reads_zeros_;
  std::optional<fsio::IoQueue::Plug> plug_;
  fsio::AlignedBuffer zeros_;
  bool zero_range_ok_ = true;
  std::uint64_t unflushed_ = 0;
  std::atomic<std::uint64_t> position_{0};
  bool writing_head_ = false;
  LaneCounts counts_;
  std::optional<Flusher> flusher_;  // last: stopped before the state above goes
};

}  // namespace img
