// What `fsimg restore` reads, told by its first bytes, never by its name:
// an fsimg stream (stream.hpp), or a raw image: as it is, or compressed
// with zstd or xz (what distributions publish their images as).
//
// A raw image is read through RawInput, which hands out its bytes as they
// were before compression, front to back. Nothing here sizes memory by a
// number the input states: the decompressors work in buffers of fixed size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "cmd/img/stream.hpp"
#include "libfsio/result.hpp"

namespace img {

enum class InputKind { fsimg, raw, zstd, xz };

// "an fsimg stream", "a raw image", "a zstd-compressed raw image", ...
const char* describe(InputKind kind);

// By the magic at byte 0 (fsimg: the zstd skippable frame 0x184D2A5F, or
// "FSIH" at byte 8 where a damaged stream has lost the other; zstd: 28 B5
// 2F FD or any other skippable frame, RFC 8878 3.1; xz: FD 37 7A 58 5A 00,
// the .xz file format 2.1.1.1); anything else is raw. An empty input is
// Errc::corrupt. Reads nothing away from `in`.
fsio::Result<InputKind> detect_input(StreamReader& in);

class RawInput {
 public:
  virtual ~RawInput() = default;
  // Up to out.size() bytes of the image; fewer only at its end (0: ended).
  // A damaged or truncated compressed input is Errc::corrupt naming the
  // input and the compressed byte offset.
  virtual fsio::Result<std::size_t> read(std::span<std::byte> out) = 0;
  // Passes over n bytes of the image (a seek on a plain file; read and
  // dropped otherwise). Errc::corrupt when the image ends first.
  virtual fsio::Status skip(std::uint64_t n);
  // The image's size when it is known before it is read: a plain file or
  // block device, a zstd file whose frames state their content size, an xz
  // file (its index). nullopt from a pipe of raw or compressed bytes.
  std::optional<std::uint64_t> size() const { return size_; }
  // Bytes of the image handed out or skipped so far.
  std::uint64_t position() const { return position_; }

 protected:
  std::optional<std::uint64_t> size_;
  std::uint64_t position_ = 0;
};

// The image in `in` (detected as `kind`, not fsimg). A plain regular file
// or block device is read with pread at its own offsets (so skip() seeks);
// anything else through `in`, which must outlive the RawInput. `threads`:
// xz decoder threads (0: one per CPU; used only when the file has several
// blocks, as `xz -T0` makes them).
fsio::Result<std::unique_ptr<RawInput>> open_raw_input(StreamReader& in, InputKind kind, unsigned threads);

// The two compressed kinds (input_zstd.cpp, input_xz.cpp).
fsio::Result<std::unique_ptr<RawInput>> open_zstd_input(StreamReader& in);
fsio::Result<std::unique_ptr<RawInput>> open_xz_input(StreamReader& in, unsigned threads);

}  // namespace img
