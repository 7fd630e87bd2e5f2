// Reading an image back: frames decompressed and checked in parallel, and
// handed over in stream order, each only once it is known to be whole.
//
//   reader thread   ImageReader::next (record checks, sizes, order)
//   T workers       ZSTD_decompressDCtx: content size, checksum, one frame
//   caller's thread sink(frame), in order
//
// A frame reaches the sink only after its zstd checksum and its size have
// been checked, and only after every frame before it reached the sink:
// whatever the sink writes, it writes nothing past the first damage.
#pragma once

#include <cstdint>
#include <functional>

#include "cmd/img/stream.hpp"
#include "libfsio/buffer.hpp"

namespace img {

struct Decoded {
  FrameIndex index;
  std::uint64_t offset = 0;  // stream offset of its index record
  fsio::AlignedBuffer data;  // index.stored_bytes valid bytes
};

// Runs the pipeline until the end record, the first damage, the first
// error of the sink, or Ctrl-C (Errc::interrupted). Returns the end record.
fsio::Result<End> decode_frames(ImageReader& reader, unsigned threads,
                                const std::function<fsio::Status(Decoded&)>& sink);

// One segment of the device that a frame (or the gap before it) covers:
// bytes [offset, offset + length) of the image, holding `data` (nullptr:
// zeros). `unused` is a gap the map leaves out (zeros in the source's
// view); elided zero blocks inside the map are not unused.
struct Segment {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  const std::byte* data = nullptr;
  bool unused = false;
};

// Walks the device segments of one frame in order: the unused gap before
// each of its runs (from *pos, the end of what was walked before), then the
// run's stored and zero blocks. Advances the cursor and *pos.
fsio::Status walk_frame(const Header& h, MapCursor& cursor, const Decoded& frame, std::uint64_t* pos,
                        const std::function<fsio::Status(const Segment&)>& fn);

}  // namespace img
