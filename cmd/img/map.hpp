// The block map: which blocks of the source an image holds, as sorted runs.
//
// A map is a list of runs of blocks (start, length), in block order, never
// touching or overlapping (adjacent runs are one run). Saving builds it
// with add(); the image header carries it encoded as varint (gap, length)
// pairs (FORMAT.md "Run lists"); a frame's list of elided zero blocks uses
// the same encoding. Every decoded list is checked: a bad one is
// Errc::corrupt naming the list, the run and the value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace img {

struct Run {
  std::uint64_t start = 0;   // first block
  std::uint64_t length = 0;  // blocks, >= 1
  std::uint64_t end() const { return start + length; }
  bool operator==(const Run&) const = default;
};

class BlockMap {
 public:
  // Appends blocks [start, start + length): start must not lie before the
  // end of the last run (a caller bug, asserted); a run that touches the
  // last one extends it. length 0 adds nothing.
  void add(std::uint64_t start, std::uint64_t length);
  const std::vector<Run>& runs() const { return runs_; }
  std::uint64_t blocks() const { return blocks_; }  // sum of the lengths
  bool empty() const { return runs_.empty(); }

 private:
  std::vector<Run> runs_;
  std::uint64_t blocks_ = 0;
};

// LEB128: 7 bits a byte, low first, high bit set on all but the last byte.
void put_varint(std::vector<std::byte>& out, std::uint64_t value);
// Reads one varint at `pos` (advanced past it). Errc::corrupt for a value
// that runs past the end, is longer than 10 bytes or overflows 64 bits.
fsio::Result<std::uint64_t> get_varint(std::span<const std::byte> in, std::size_t& pos, const std::string& what);

// Runs as varint pairs: (start - end of the previous run, length); the
// first gap counts from block 0.
std::vector<std::byte> encode_runs(const std::vector<Run>& runs);
// Decodes exactly `count` runs from all of `bytes` and checks them: every
// length >= 1, every gap after the first >= 1 (runs never touch), the end
// of the last run <= limit, and the lengths summing to `blocks`. `what`
// names the list in errors ("map", "frame 7 zero runs").
fsio::Result<std::vector<Run>> decode_runs(std::span<const std::byte> bytes, std::uint64_t count, std::uint64_t limit,
                                           std::uint64_t blocks, const std::string& what);

// Walks a map by ordinal: the n-th mapped block, counting from 0 across
// the runs. Frames name the blocks they carry by ordinal; the cursor turns
// them into device blocks. Moves forward only.
class MapCursor {
 public:
  explicit MapCursor(const std::vector<Run>& runs) : runs_(&runs) {}
  std::uint64_t ordinal() const { return ordinal_; }
  // The device runs holding ordinals [ordinal(), ordinal() + count), in
  // order, and moves past them. count must not run past the map's end (the
  // frame checks guarantee it; asserted).
  std::vector<Run> take(std::uint64_t count);

 private:
  const std::vector<Run>* runs_;
  std::size_t index_ = 0;     // current run
  std::uint64_t offset_ = 0;  // blocks into it
  std::uint64_t ordinal_ = 0;
};

}  // namespace img
