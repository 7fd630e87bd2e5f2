// fsimg stream decoding, as restore and verify read a stream: the header
// record and its block map (img::ImageReader::open), every frame index
// record and its zero runs, the zstd frames (img::decode_frames), the end
// record, and the device segments each frame covers (img::walk_frame) into
// a memory sink that checks they come in order and inside the image.
//
// Records carry CRC-32C checksums a fuzzer cannot guess, so before the
// input is read every record whose framing can be followed gets its
// checksum recomputed: the fuzzer's changes then reach the field checks
// behind the checksum, which is where the parsing is. (Streams with a
// wrong checksum are still read: the regression corpus replays them as
// they are, and a record the fix-up cannot frame is left alone.)
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "cmd/img/decode.hpp"
#include "cmd/img/format.hpp"
#include "cmd/img/stream.hpp"
#include "tests/fuzz/mem_image.hpp"

namespace {

std::uint64_t get(const std::vector<std::uint8_t>& b, std::size_t at, unsigned n) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= std::uint64_t(b[at + i]) << (8 * i);
  return v;
}

void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (unsigned i = 0; i < 4; ++i) b[at + i] = std::uint8_t(v >> (8 * i));
}

// Record `rec` (without its 8-byte head) of `size` bytes: fixed part of
// `fixed` bytes with the CRC at `crc_at`, then a tail of `tail` bytes.
void fix_crc(std::vector<std::uint8_t>& b, std::size_t rec, std::size_t size, std::size_t fixed, std::size_t crc_at,
             std::uint64_t tail) {
  if (size < fixed) return;
  tail = std::min<std::uint64_t>(tail, size - fixed);
  std::vector<std::byte> f(fixed);
  std::memcpy(f.data(), b.data() + rec, fixed);
  std::memset(f.data() + crc_at, 0, 4);
  const std::span<const std::byte> t(reinterpret_cast<const std::byte*>(b.data() + rec + fixed), std::size_t(tail));
  put32(b, rec + crc_at, img::crc32c(t, img::crc32c(f)));
}

void fix_checksums(std::vector<std::uint8_t>& b) {
  std::size_t pos = 0;
  while (pos + 8 <= b.size() && get(b, pos, 4) == img::kSkippableMagic) {
    const std::size_t size = std::size_t(std::min<std::uint64_t>(get(b, pos + 4, 4), b.size() - pos - 8));
    const std::size_t rec = pos + 8;
    pos = rec + size;
    if (size < 4) continue;
    if (std::memcmp(&b[rec], "FSIH", 4) == 0 && size >= sizeof(img::HeaderFixed)) {
      fix_crc(b, rec, size, sizeof(img::HeaderFixed), offsetof(img::HeaderFixed, header_crc), get(b, rec + 0x38, 8));
    } else if (std::memcmp(&b[rec], "FSIF", 4) == 0 && size >= sizeof(img::FrameIndexFixed)) {
      fix_crc(b, rec, size, sizeof(img::FrameIndexFixed), offsetof(img::FrameIndexFixed, index_crc),
              get(b, rec + 0x30, 8));
      const std::uint64_t compressed = get(b, rec + 0x20, 8);  // the zstd frame after this record
      if (compressed > b.size() - pos) return;
      pos += std::size_t(compressed);
    } else if (std::memcmp(&b[rec], "FSIE", 4) == 0 && size >= sizeof(img::EndFixed)) {
      fix_crc(b, rec, size, sizeof(img::EndFixed), offsetof(img::EndFixed, end_crc), 0);
    }
  }
}

[[noreturn]] void broken(const char* what, std::uint64_t a, std::uint64_t b) {
  std::fprintf(stderr, "fuzz_fsimg: %s (%llu, %llu)\n", what, (unsigned long long)a, (unsigned long long)b);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> stream(data, data + size);
  fix_checksums(stream);
  auto& image = fsio::fuzz::MemImage::load(stream);
  const int fd = ::open(image.path().c_str(), O_RDONLY | O_CLOEXEC);  // its own offset, from 0
  if (fd < 0) std::abort();
  img::StreamReader in(fd, "stream");
  auto reader = img::ImageReader::open(in);
  if (reader) {
    const img::Header& h = reader->header();
    img::MapCursor cursor(h.runs);
    std::uint64_t pos = 0, last_end = 0, sum = 0;
    (void)img::decode_frames(*reader, 1, [&](img::Decoded& f) -> fsio::Status {
      return img::walk_frame(h, cursor, f, &pos, [&](const img::Segment& s) -> fsio::Status {
        if (s.offset < last_end) broken("segment before the end of the one before", s.offset, last_end);
        if (s.offset + s.length > h.image_bytes) broken("segment past the image", s.offset + s.length, h.image_bytes);
        last_end = s.offset + s.length;
        for (std::uint64_t i = 0; s.data && i < s.length; i += 512) sum += std::to_integer<unsigned>(s.data[i]);
        return {};
      });
    });
  }
  ::close(fd);
  return 0;
}
