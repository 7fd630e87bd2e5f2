// bmaptool's block map: which blocks of a raw image hold data, and the
// checksum of each range of them (`bmaptool create`, bmap-tools 3.x;
// format versions 1.3 (SHA-1), 1.4 and 2.0 (ChecksumType)).
//
//   <bmap version="2.0">
//     <ImageSize> 8388608 </ImageSize>        bytes
//     <BlockSize> 4096 </BlockSize>
//     <BlocksCount> 2048 </BlocksCount>       ceil(ImageSize / BlockSize)
//     <MappedBlocksCount> 81 </MappedBlocksCount>
//     <ChecksumType> sha256 </ChecksumType>
//     <BmapFileChecksum> 53b9... </BmapFileChecksum>   of the file with this value as '0's
//     <BlockMap>
//       <Range chksum="9b35..."> 0-80 </Range>         blocks, inclusive; "12" alone is one
//     </BlockMap>
//   </bmap>
//
// The XML is read by expat (a streaming parser: no tree is built, the
// ranges are kept as they come). Everything bmaptool itself checks is
// checked, and more: the ranges sorted, apart, inside the image, summing
// to MappedBlocksCount; each checksum of the type's length in hex.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace img {

struct BmapRange {
  std::uint64_t first = 0, last = 0;  // blocks, inclusive
  std::string checksum;               // lower-case hex; empty before format 1.3
};

struct Bmap {
  std::string version;
  std::uint64_t image_size = 0;
  std::uint64_t block_size = 0;
  std::uint64_t blocks_count = 0;
  std::uint64_t mapped_blocks = 0;
  std::string checksum_type;  // "sha256", "sha1", or empty (no checksums)
  std::vector<BmapRange> ranges;
};

// Parses and checks a bmap file's text, including its own checksum
// (BmapFileChecksum). Errc::corrupt naming the file and what is wrong;
// Errc::unsupported for a newer major version or an unknown checksum type.
fsio::Result<Bmap> parse_bmap(std::span<const char> text, const std::string& name);
// Reads the file, then parse_bmap.
fsio::Result<Bmap> read_bmap(const std::string& path);

// A running checksum of the type a bmap names (OpenSSL's libcrypto, whose
// SHA-256 uses the CPU's SHA extensions where it has them).
class Digest {
 public:
  static fsio::Result<Digest> make(const std::string& type);
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;
  ~Digest();
  void update(std::span<const std::byte> data);
  // The lower-case hex of everything updated since make() or the last
  // finish(); starts over.
  std::string finish();
  std::size_t hex_length() const;

 private:
  struct Impl;
  explicit Digest(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace img
