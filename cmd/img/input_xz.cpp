// A raw image compressed with xz (the .xz file format), decompressed as it
// streams in by liblzma: several concatenated streams allowed (as xz -d
// does), every block's check verified, on several threads when the file
// holds several blocks (xz -T0 makes them).
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "cmd/img/input.hpp"
#include "cmd/img/save.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

const char* lzma_text(lzma_ret r) {
  switch (r) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_MEMLIMIT_ERROR: return "memory limit reached";
    case LZMA_FORMAT_ERROR: return "not in the .xz format";
    case LZMA_OPTIONS_ERROR: return "unsupported options (a newer xz?)";
    case LZMA_DATA_ERROR: return "compressed data is corrupt";
    case LZMA_BUF_ERROR: return "truncated: the stream ends inside a block";
    default: return "liblzma error";
  }
}

// The uncompressed size of a regular .xz file, from its index (read at its
// end: lzma_file_info_decoder asks for the positions it needs); nullopt
// when it is not a file or the index cannot be read (the stream decoder
// then names the damage as it meets it).
std::optional<std::uint64_t> xz_file_size(StreamReader& in) {
  struct stat st {};
  if (::fstat(in.fd(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const off_t at = ::lseek(in.fd(), 0, SEEK_CUR);
  if (at < 0) return std::nullopt;
  const std::uint64_t start = std::uint64_t(at) - in.offset() - in.buffered();
  if (start >= std::uint64_t(st.st_size)) return std::nullopt;
  const std::uint64_t file = std::uint64_t(st.st_size) - start;
  lzma_stream s = LZMA_STREAM_INIT;
  lzma_index* index = nullptr;
  if (lzma_file_info_decoder(&s, &index, UINT64_MAX, file) != LZMA_OK) return std::nullopt;
  std::vector<std::uint8_t> buf(1u << 16);
  std::uint64_t pos = 0;
  std::optional<std::uint64_t> size;
  for (;;) {
    if (s.avail_in == 0) {
      const ssize_t n = ::pread(in.fd(), buf.data(), buf.size(), off_t(start + pos));
      if (n <= 0) break;
      pos += std::uint64_t(n);
      s.next_in = buf.data();
      s.avail_in = std::size_t(n);
    }
    const lzma_ret r = lzma_code(&s, LZMA_RUN);
    if (r == LZMA_SEEK_NEEDED) {
      pos = s.seek_pos;
      s.avail_in = 0;
      continue;
    }
    if (r == LZMA_STREAM_END) size = lzma_index_uncompressed_size(index);
    if (r != LZMA_OK) break;
  }
  if (index) lzma_index_end(index, nullptr);
  lzma_end(&s);
  return size;
}

class XzInput final : public RawInput {
 public:
  explicit XzInput(StreamReader& in) : in_(in), inbuf_(1u << 16) { size_ = xz_file_size(in); }
  ~XzInput() override { lzma_end(&s_); }
  lzma_stream& stream() { return s_; }

  fsio::Result<std::size_t> read(std::span<std::byte> out) override {
    s_.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    s_.avail_out = out.size();
    while (s_.avail_out > 0 && !done_) {
      if (s_.avail_in == 0 && !ended_) {
        const std::size_t n = FSIO_TRY(in_.read_some(inbuf_));
        s_.next_in = reinterpret_cast<const std::uint8_t*>(inbuf_.data());
        s_.avail_in = n;
        ended_ = n == 0;
      }
      const lzma_ret r = lzma_code(&s_, ended_ ? LZMA_FINISH : LZMA_RUN);
      if (r == LZMA_STREAM_END) done_ = true;
      else if (r != LZMA_OK) return error(r, out.size() - s_.avail_out);
    }
    const std::size_t n = out.size() - s_.avail_out;
    position_ += n;
    return n;
  }

 private:
  // `out`: bytes decompressed by this read() so far, not yet handed out.
  fsio::Error error(lzma_ret r, std::size_t out) const {
    return make_error(Errc::corrupt, in_.name() + ": xz, near compressed byte " + std::to_string(in_.offset()) +
                                         " (image byte " + std::to_string(position_ + out) + "): " + lzma_text(r));
  }

  StreamReader& in_;
  std::vector<std::byte> inbuf_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool ended_ = false, done_ = false;
};

}  // namespace

fsio::Result<std::unique_ptr<RawInput>> open_xz_input(StreamReader& in, unsigned threads) {
  auto x = std::make_unique<XzInput>(in);
  lzma_mt mt{};
  mt.flags = LZMA_CONCATENATED;
  mt.threads = resolve_threads(threads);
  // Threads only while their buffers stay within a quarter of the memory;
  // past that liblzma decodes on one thread, never refuses.
  mt.memlimit_threading = std::max<std::uint64_t>(lzma_physmem() / 4, 64u << 20);
  mt.memlimit_stop = UINT64_MAX;
  const lzma_ret r = lzma_stream_decoder_mt(&x->stream(), &mt);
  if (r != LZMA_OK) return make_error(Errc::io, in.name() + ": cannot start an xz decoder: " + lzma_text(r));
  return std::unique_ptr<RawInput>(std::move(x));
}

}  // namespace img
