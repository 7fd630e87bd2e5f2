// Saving: the mapped blocks of a source, read in large direct batched
// reads, all-zero blocks elided, cut into frames of at most frame_bytes,
// each compressed as an independent zstd frame (content size and checksum)
// by a pool of workers, written in order to a descriptor.
//
//   reader thread   IoQueue plugs of up to frame_bytes, zero elision
//   T workers       ZSTD_compress2, one context each (level, checksum)
//   caller's thread writes index record + frame, in order
//
// At most T + 1 frames are in the pool at once. A frame's raw buffer goes
// back to the reader as soon as it is compressed, and output buffers are
// not zero-filled, so memory is bounded by (T + 2) * frame_bytes of raw
// frames plus (T + 2) compressed frames (resident only as far as zstd
// wrote them: about a third of frame_bytes at level 3) plus the map. Ctrl-C
// (fsio::InterruptGuard) stops the reader after its current batch: the
// result is Errc::interrupted and the output holds no end record, so no
// reader takes it for a whole image.
#pragma once

#include <cstdint>
#include <string>

#include "cmd/img/source.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/stats.hpp"

namespace img {

struct SaveOptions {
  int level = 3;                          // zstd level
  unsigned threads = 0;                   // compression workers; 0: one per CPU
  std::uint32_t frame_bytes = 16u << 20;  // stored bytes per frame (a multiple of the block size)
  std::string tool = "fsimg";             // the header's tool field
  std::uint64_t created = 0;              // seconds since 1970
  fsio::EngineKind engine = fsio::EngineKind::automatic;
  fsio::Progress* progress = nullptr;  // advanced by the map bytes of each frame written
};

struct SaveReport {
  std::uint32_t frames = 0;
  unsigned threads = 0;
  std::uint64_t mapped_bytes = 0;      // bytes of the map (read from the source)
  std::uint64_t zero_bytes = 0;        // of which all-zero blocks, elided
  std::uint64_t stored_bytes = 0;      // compressed into the frames
  std::uint64_t compressed_bytes = 0;  // the zstd frames
  std::uint64_t stream_bytes = 0;      // everything written
  bool direct = false;                 // source read with O_DIRECT
  fsio::IoStats read_stats;
  double seconds = 0;
};

// Zero threads means one per CPU (std::thread::hardware_concurrency).
unsigned resolve_threads(unsigned threads);

// Writes the image of `source` (header, frames, end record) to out_fd;
// `out_name` names it in errors.
fsio::Result<SaveReport> save(Source& source, int out_fd, const std::string& out_name, const SaveOptions& options);

// True when every byte of data is zero.
bool all_zero(std::span<const std::byte> data);

}  // namespace img
