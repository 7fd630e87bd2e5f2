// Feeds: the input of a restore to several targets, decoded once and
// handed out as batches of pieces (fanout.hpp).
//
//   feed_stream  an fsimg stream: frames decompressed and checked on T
//                workers (decode.hpp); each frame's buffer becomes a batch
//                as it is, swapped for an empty one, never copied
//   feed_raw     a raw image (plain, zstd, xz) in 8 MiB chunks; all-zero
//                blocks become zero pieces, written as zeros (restore.hpp)
//   feed_bmap    the ranges of a bmap only: each range read whole and its
//                checksum checked before any of it is handed out; the gaps
//                between ranges are unused
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cmd/img/bmap.hpp"
#include "cmd/img/fanout.hpp"
#include "cmd/img/input.hpp"
#include "cmd/img/stream.hpp"
#include "cmd/img/written.hpp"

namespace img {

inline constexpr std::uint64_t kRawChunk = 8u << 20;
// A bmap range is held whole in memory until its checksum is known; one
// longer than this is refused before anything is written.
inline constexpr std::uint64_t kMaxHeldRange = 1u << 30;

// Hands batches to every live lane: records each piece in `written` (when
// verifying), keeps the head aside, and waits for the slowest lane.
// Errc::interrupted on Ctrl-C; Errc::io once every lane has failed.
class Sender {
 public:
  Sender(std::vector<Lane*> lanes, HeadHold& head, WrittenMap* written, bool keep_unused)
      : lanes_(std::move(lanes)), head_(head), written_(written), keep_unused_(keep_unused) {}
  // pieces: in offset order, after every piece sent before; `keep` holds
  // the memory their data points into until every lane is done with it.
  fsio::Status send(std::vector<Piece> pieces, std::shared_ptr<const void> keep, std::uint64_t end);
  std::uint64_t end() const { return end_; }

 private:
  std::vector<Lane*> lanes_;
  HeadHold& head_;
  WrittenMap* written_;
  bool keep_unused_;
  std::uint64_t end_ = 0;
};

fsio::Status feed_stream(ImageReader& reader, unsigned threads, Sender& s);
// `block`: the unit all-zero runs are found in (4096, or 512 for an image
// whose size is not a multiple of 4096).
fsio::Status feed_raw(RawInput& in, std::uint64_t block, Sender& s);
fsio::Status feed_bmap(RawInput& in, const Bmap& map, Sender& s);

// Splits bytes [base, base + n) of the image, held at `data`, into data and
// all-zero pieces of whole `block`s (the last may be shorter).
std::vector<Piece> split_zeros(const std::byte* data, std::uint64_t n, std::uint64_t base, std::uint64_t block);

}  // namespace img
