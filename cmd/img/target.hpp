// TargetWriter: turns the segments of checked frames into batched writes
// on the target (restore.hpp has the order and why).
//
// Data segments become plug writes straight from the frame buffer; zero
// segments of 1 MiB or more are zeroed without data (zero_range) where the
// target supports it, smaller ones are writes of a shared zero buffer that
// IoQueue merges with their neighbours; unused segments are skipped with
// keep_unused. Everything inside the first kHeadBytes is copied aside and
// written by finish() last. Every kFlushEvery bytes written, a Flusher
// drains the device's write cache in the background (flusher.hpp). Not
// thread-safe; one frame at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmd/img/decode.hpp"
#include "cmd/img/flusher.hpp"
#include "cmd/img/restore.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"

namespace img {

class TargetWriter {
 public:
  // queue nullptr: a dry run that only counts.
  TargetWriter(fsio::IoQueue* queue, const Header& h, bool keep_unused, fsio::Progress* progress);

  fsio::Status frame(const Decoded& frame);
  // The unused tail, flush, the held-back head, flush.
  fsio::Status finish();

  std::uint64_t position() const { return pos_; }  // image bytes handled
  // finish() has begun writing the held-back head: everything after it was
  // written and flushed, and a failure now is a write inside the head.
  bool writing_head() const { return writing_head_; }
  RestoreReport& report() { return rep_; }

 private:
  fsio::Status segment(const Segment& s);
  fsio::Status zero(std::uint64_t offset, std::uint64_t length);
  fsio::Status submit();
  void hold_head(const Segment& s);

  fsio::IoQueue* q_;
  const Header& h_;
  bool keep_unused_;
  fsio::Progress* progress_;
  MapCursor cursor_;
  std::uint64_t pos_ = 0;
  bool writing_head_ = false;
  std::uint64_t head_end_;
  fsio::AlignedBuffer head_;
  std::vector<bool> head_set_;  // per 512 bytes of the head: to be written
  fsio::AlignedBuffer zeros_;
  bool zero_range_ok_ = true;
  std::optional<fsio::IoQueue::Plug> plug_;
  std::uint64_t seen_ = 0;       // end of the last segment, for progress
  std::uint64_t unflushed_ = 0;  // written since the last background flush was asked for
  RestoreReport rep_;
  std::optional<Flusher> flusher_;  // last: stopped before the queue state above goes
};

// Makes [offset, offset + length) of the device window read as zeros without
// writing data: FALLOC_FL_PUNCH_HOLE (files: a hole; block devices: WRITE
// ZEROES with unmapping allowed, refused with EOPNOTSUPP when the device
// cannot do it without writing). Errc::unsupported when it cannot.
fsio::Status zero_range(const fsio::Device& dev, std::uint64_t offset, std::uint64_t length);

// A writer's zero run of `length` bytes: zero_range when it is kZeroRangeMin
// or more and the device has not yet said it cannot (`supported`, cleared
// the first time it does, so one run asks once). True when done, with
// `zeroing` set to how ("punch hole", "write zeroes"); false when the caller
// must write the zeros.
fsio::Result<bool> zero_without_data(const fsio::Device& dev, std::uint64_t offset, std::uint64_t length,
                                     bool& supported, std::string& zeroing);

// How the writers to a target batch (TargetWriter here, LaneWriter for a
// restore to several targets).
inline constexpr std::uint64_t kZeroBuffer = 1u << 20;    // the shared buffer zero writes come from
inline constexpr std::uint64_t kZeroRangeMin = 1u << 20;  // smaller zero runs are cheaper as writes
inline constexpr std::uint64_t kPlugBytes = 64u << 20;    // submit at least this often
// Measured on this project's VM (fsimg_vs_peers.sh, restores of 1.4 GB):
// every 32 or 64 MiB gave the same time, 128 MiB and more were slower
// (larger drains stall the writes behind them for longer), and a flush
// after every frame was slower too (each flush has a fixed cost).
inline constexpr std::uint64_t kFlushEvery = 64u << 20;

}  // namespace img
