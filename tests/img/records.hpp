// fsimg records built byte by byte from cmd/img/FORMAT.md's tables, not
// through cmd/img's structs: the expectations of test_format.cpp and
// test_stream.cpp. The CRC-32C is a bitwise one written from RFC 3720
// (reflected polynomial 0x82F63B78, initial value and final XOR ~0),
// checked against the RFC's vectors in test_format.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace img_records {

using Bytes = std::vector<std::uint8_t>;

inline std::uint32_t crc32c_bitwise(const std::uint8_t* p, std::size_t n, std::uint32_t crc = 0) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
  }
  return ~crc;
}

// Writes a little-endian value of `width` bytes at `offset`.
inline void put(Bytes& b, std::size_t offset, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) b[offset + i] = std::uint8_t(value >> (8 * i));
}

inline void put_text(Bytes& b, std::size_t offset, const std::string& text) {
  std::memcpy(b.data() + offset, text.data(), text.size());
}

// The record's CRC field (at `crc_at` of the fixed part) recomputed: CRC-32C
// of the fixed part with the field as 0, continued over the bytes after it.
inline void seal(Bytes& rec, std::size_t fixed, std::size_t crc_at) {
  put(rec, crc_at, 0, 4);
  std::uint32_t crc = crc32c_bitwise(rec.data(), fixed);
  crc = crc32c_bitwise(rec.data() + fixed, rec.size() - fixed, crc);
  put(rec, crc_at, crc, 4);
}

// A skippable-frame head: le32 0x184D2A5F, le32 size.
inline Bytes framed(const Bytes& rec) {
  Bytes out(8);
  put(out, 0, 0x184D2A5F, 4);
  put(out, 4, rec.size(), 4);
  out.insert(out.end(), rec.begin(), rec.end());
  return out;
}

// The example image of both test files: ext (fs_type 2), 4 KiB blocks,
// image_bytes 41060 = 10 * 4096 + 100, so block_count ceil(41060 / 4096) = 11;
// a source of 1 MiB; the map runs {0, 2} and {5, 3} (5 blocks), encoded as
// varint pairs (gap, length) = (0, 2), (5 - 2 = 3, 3): 00 02 03 03;
// frames of 64 KiB; level 3; created 1700000000; tool "fsimg 0.1.0".
inline Bytes header_record() {
  Bytes r(128);
  put_text(r, 0x00, "FSIH");
  put(r, 0x04, 1, 2);           // version
  put(r, 0x06, 128, 2);         // fixed_bytes
  put(r, 0x08, 2, 4);           // fs_type ext
  put(r, 0x0C, 4096, 4);        // block_size
  put(r, 0x10, 1 << 20, 8);     // source_bytes
  put(r, 0x18, 41060, 8);       // image_bytes
  put(r, 0x20, 11, 8);          // block_count
  put(r, 0x28, 5, 8);           // mapped_blocks
  put(r, 0x30, 2, 8);           // run_count
  put(r, 0x38, 4, 8);           // map_bytes
  put(r, 0x40, 65536, 4);       // frame_bytes
  put(r, 0x44, 3, 4);           // level
  put(r, 0x48, 1700000000, 8);  // created
  put_text(r, 0x50, "fsimg 0.1.0");
  put(r, 0x78, 0, 4);  // flags
  r.insert(r.end(), {0x00, 0x02, 0x03, 0x03});
  seal(r, 128, 0x7C);
  return r;
}

// Frame 0: map ordinals 0-4 (5 blocks); ordinals 1 and 2 are all zeros
// (one zero run, relative (1, 2): varints 01 02), so 3 blocks = 12288 bytes
// are stored, in a zstd frame of 100 bytes.
inline Bytes frame_index_record() {
  Bytes r(64);
  put_text(r, 0x00, "FSIF");
  put(r, 0x04, 0, 4);      // sequence
  put(r, 0x08, 0, 8);      // first_block
  put(r, 0x10, 5, 8);      // covered_blocks
  put(r, 0x18, 12288, 8);  // stored_bytes
  put(r, 0x20, 100, 8);    // compressed_bytes
  put(r, 0x28, 1, 8);      // zero_runs
  put(r, 0x30, 2, 8);      // zero_map_bytes
  put(r, 0x38, 0, 4);      // reserved
  r.insert(r.end(), {0x01, 0x02});
  seal(r, 64, 0x3C);
  return r;
}

// The end: 1 frame, 5 blocks, 12288 stored, 100 compressed; the stream
// before it is the header (8 + 132), the index (8 + 66) and the frame (100): 314.
inline Bytes end_record() {
  Bytes r(48);
  put_text(r, 0x00, "FSIE");
  put(r, 0x04, 1, 4);
  put(r, 0x08, 5, 8);
  put(r, 0x10, 12288, 8);
  put(r, 0x18, 100, 8);
  put(r, 0x20, 314, 8);
  put(r, 0x28, 0, 4);
  seal(r, 48, 0x2C);
  return r;
}

}  // namespace img_records
