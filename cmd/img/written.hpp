// WrittenMap: what every target was sent, kept as checksums so that
// --verify compares each target's bytes with what was written, not with a
// second read of the input (which may be a pipe, and may have changed).
//
// Data: one CRC-32C per 4 KiB chunk, counted from the start of each data
// extent (4 bytes per 4 KiB written: 1/1024 of the data). Zeros (of the
// image, or unused regions zeroed): only the range, which must read as 0.
// Built by the one thread that hands pieces out, in offset order; read by
// the verifying threads once every write is done.
#pragma once

#include <cstdint>
#include <vector>

#include "cmd/img/fanout.hpp"

namespace img {

inline constexpr std::uint64_t kCheckChunk = 4096;

class WrittenMap {
 public:
  struct Extent {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    bool zero = false;
    std::size_t first_crc = 0;  // data: crcs()[first_crc] covers [offset, offset + 4 KiB)
  };

  // A piece every target will hold: data, image zeros, or unused zeros
  // (left out with keep_unused: not written, so not checked).
  void add(const Piece& p, bool keep_unused);
  const std::vector<Extent>& extents() const { return extents_; }
  const std::vector<std::uint32_t>& crcs() const { return crcs_; }
  std::uint64_t bytes() const { return bytes_; }
  // The CRC-32C that add() keeps for a chunk of data.
  static std::uint32_t chunk_crc(const std::byte* data, std::uint64_t length);

 private:
  std::vector<Extent> extents_;
  std::vector<std::uint32_t> crcs_;
  std::uint64_t bytes_ = 0;
};

}  // namespace img
