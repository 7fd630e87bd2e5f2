// Fan-out: one decoded image, many targets (restore to several devices).
//
//   input thread(s)    decode once: fsimg frames, raw / zstd / xz bytes,
//                      bmap ranges checked -> Batches of Pieces
//   Sender             records each piece's checksums (WrittenMap), holds
//                      the first 1 MiB back (HeadHold), hands every batch
//                      to every live target's Lane
//   one thread a target  LaneWriter: plugged writes on its own IoQueue
//
// A Batch is shared, not copied: its buffer goes back to the pool when the
// last target is done with it. A Lane holds at most kLaneDepth batches, so
// the input waits for the slowest target (memory stays bounded: a few
// batches, whatever the number of targets), and a target that fails is
// dropped: its lane refuses further batches and the others go on.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "libfsio/buffer.hpp"
#include "libfsio/result.hpp"

namespace img {

// Bytes [offset, offset + length) of the image: `data` (nullptr: zeros).
// `unused`: a region the image does not hold (a gap in an fsimg map or a
// bmap), zeroed unless keep_unused; zeros that are not unused are part of
// the image and always end up on the target.
struct Piece {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  const std::byte* data = nullptr;
  bool unused = false;
};

struct Batch {
  std::vector<Piece> pieces;         // in offset order, apart
  std::shared_ptr<const void> keep;  // what the pieces' data points into
  std::uint64_t end = 0;             // everything before this image offset has been handed out
};
using BatchPtr = std::shared_ptr<const Batch>;

inline constexpr std::size_t kLaneDepth = 3;

// The first kHeadBytes of the image (where every filesystem signature
// lives), copied aside as pieces pass and written to each target last.
// Kept per 512 bytes: what the image puts there, and whether it is data,
// zeros of the image, or unused (zeroed unless keep_unused).
class HeadHold {
 public:
  explicit HeadHold(std::uint64_t head_end);
  // Copies the part of p below the head's end aside; returns the rest
  // (length 0 when p lies wholly inside the head).
  Piece take(const Piece& p);
  struct Run {
    std::uint64_t offset;
    std::span<const std::byte> bytes;
  };
  // The runs a target writes: data always, image zeros unless the target
  // reads zeros already, unused zeros unless that or keep_unused.
  std::vector<Run> runs(bool keep_unused, bool reads_zeros) const;
  std::uint64_t end() const { return end_; }

 private:
  enum Kind : std::uint8_t { none, data, zero, unused };
  std::uint64_t end_;
  std::uint64_t filled_ = 0;  // end of the last piece taken (an image may end inside the head)
  fsio::AlignedBuffer bytes_;
  std::vector<Kind> kinds_;
};

// The queue between the input and one target's thread.
class Lane {
 public:
  // Input side. Blocks while the lane holds kLaneDepth batches; false once
  // the target has failed (the batch is not taken).
  bool push(BatchPtr b);
  // No more batches; `complete`: the input ended whole (the target may
  // write its head), else it stopped (damage, Ctrl-C, every target failed).
  void close(bool complete);
  bool failed() const;
  bool complete() const;

  // Target side: the next batch; nullptr once closed and drained.
  BatchPtr pop();
  // The target failed: drops what is queued; push() refuses from now on.
  void fail();

 private:
  mutable std::mutex m_;
  std::condition_variable changed_;
  std::deque<BatchPtr> q_;
  bool closed_ = false, failed_ = false, complete_ = false;
};

}  // namespace img
