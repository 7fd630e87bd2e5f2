// A raw image compressed with zstd (RFC 8878), decompressed as it streams
// in: one or more frames, skippable frames passed over, each frame's
// checksum checked by libzstd when the frame has one.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "cmd/img/input.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

// The sum of the content sizes the frames of a regular file state (walked
// frame by frame through the mapped file: a frame's header has its content
// size, ZSTD_findFrameCompressedSize its length; a skippable frame holds
// none); nullopt when a frame does not say, or for anything not a file.
std::optional<std::uint64_t> frames_size(const char* p, std::size_t n) {
  std::uint64_t total = 0;
  while (n > 0) {
    const unsigned long long size = ZSTD_getFrameContentSize(p, n);
    const std::size_t frame = ZSTD_findFrameCompressedSize(p, n);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(frame)) return std::nullopt;
    total += size;
    p += frame;
    n -= frame;
  }
  return total;
}

std::optional<std::uint64_t> zstd_file_size(StreamReader& in) {
  struct stat st {};
  if (::fstat(in.fd(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return std::nullopt;
  const off_t at = ::lseek(in.fd(), 0, SEEK_CUR);
  if (at < 0) return std::nullopt;
  const std::uint64_t start = std::uint64_t(at) - in.offset() - in.buffered();
  if (start >= std::uint64_t(st.st_size)) return std::nullopt;
  void* map = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, in.fd(), 0);
  if (map == MAP_FAILED) return std::nullopt;
  const auto size = frames_size(static_cast<const char*>(map) + start, std::size_t(st.st_size - start));
  ::munmap(map, std::size_t(st.st_size));
  return size;
}

class ZstdInput final : public RawInput {
 public:
  ZstdInput(StreamReader& in, ZSTD_DStream* d) : in_(in), d_(d), inbuf_(ZSTD_DStreamInSize()) {
    size_ = zstd_file_size(in);
  }
  ~ZstdInput() override { ZSTD_freeDStream(d_); }

  fsio::Result<std::size_t> read(std::span<std::byte> out) override {
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    while (ob.pos < ob.size) {
      if (ib_.pos == ib_.size && !ended_) {
        const std::size_t n = FSIO_TRY(in_.read_some(inbuf_));
        ib_ = {inbuf_.data(), n, 0};
        ended_ = n == 0;
      }
      const std::size_t before = ob.pos, consumed = ib_.pos;
      const std::size_t r = ZSTD_decompressStream(d_, &ob, &ib_);
      if (ZSTD_isError(r)) return error(ZSTD_getErrorName(r), ob.pos);
      // A call that moved nothing (after a frame's end, with no input left)
      // answers for a next frame that never began.
      if (ob.pos != before || ib_.pos != consumed) last_ = r;
      if (ended_ && ib_.pos == ib_.size && ob.pos == before) {
        // Nothing more in, nothing more out: the end, whole or cut.
        if (last_ != 0) return error("truncated: the stream ends inside a frame", ob.pos);
        break;
      }
    }
    position_ += ob.pos;
    return ob.pos;
  }

 private:
  // `out`: bytes decompressed by this read() so far, not yet handed out.
  fsio::Error error(const std::string& why, std::size_t out) const {
    return make_error(Errc::corrupt, in_.name() + ": zstd, near compressed byte " + std::to_string(in_.offset()) +
                                         " (image byte " + std::to_string(position_ + out) + "): " + why);
  }

  StreamReader& in_;
  ZSTD_DStream* d_;
  std::vector<std::byte> inbuf_;
  ZSTD_inBuffer ib_{nullptr, 0, 0};
  bool ended_ = false;
  std::size_t last_ = 0;  // ZSTD_decompressStream's last answer: 0 at a frame's end
};

}  // namespace

fsio::Result<std::unique_ptr<RawInput>> open_zstd_input(StreamReader& in) {
  ZSTD_DStream* d = ZSTD_createDStream();
  if (d == nullptr) return make_error(Errc::io, in.name() + ": cannot create a zstd decoder");
  // libzstd's default window limit (2^27 bytes) is zstd -d's: a frame
  // made with --long=28 or more is refused as zstd -d refuses it.
  return std::unique_ptr<RawInput>(std::make_unique<ZstdInput>(in, d));
}

}  // namespace img
