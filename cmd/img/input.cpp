// Telling an input's kind, and reading a raw image as it is (input.hpp).
#include "cmd/img/input.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "cmd/img/format.hpp"
#include "libfsio/endian.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint32_t kZstdMagic = 0xFD2FB528;  // RFC 8878 3.1.1
constexpr std::array<unsigned char, 6> kXzMagic = {0xFD, '7', 'z', 'X', 'Z', 0x00};

std::uint32_t le32_at(const std::byte* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

// A regular file or a block device read with pread from where the stream
// started: skip() seeks, and reading only a bmap's ranges reads only them.
class FileInput final : public RawInput {
 public:
  FileInput(int fd, std::string name, std::uint64_t start, std::uint64_t size)
      : fd_(fd), name_(std::move(name)), start_(start) {
    size_ = size;
    ::posix_fadvise(fd, off_t(start), 0, POSIX_FADV_SEQUENTIAL);
  }

  fsio::Result<std::size_t> read(std::span<std::byte> out) override {
    std::size_t done = 0;
    const std::uint64_t left = *size_ - position_;
    out = out.first(std::size_t(std::min<std::uint64_t>(out.size(), left)));
    while (done < out.size()) {
      const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, off_t(start_ + position_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fsio::errno_error(name_ + ": read at byte " + std::to_string(position_));
      if (n == 0)
        return make_error(Errc::corrupt, name_ + ": ends at byte " + std::to_string(position_) + ", before its size (" +
                                             std::to_string(*size_) + " bytes) when it was opened: it shrank");
      done += std::size_t(n);
      position_ += std::uint64_t(n);
    }
    return done;
  }

  fsio::Status skip(std::uint64_t n) override {
    if (n > *size_ - position_)
      return make_error(Errc::corrupt, name_ + ": ends at byte " + std::to_string(*size_) + ", before byte " +
                                           std::to_string(position_ + n));
    position_ += n;
    return {};
  }

 private:
  int fd_;
  std::string name_;
  std::uint64_t start_;
};

// Anything else (a pipe, a socket, a character device): the bytes as they
// come, through the stream reader (Ctrl-C ends a wait on it).
class PipeInput final : public RawInput {
 public:
  explicit PipeInput(StreamReader& in) : in_(in) {}
  fsio::Result<std::size_t> read(std::span<std::byte> out) override {
    const std::size_t n = FSIO_TRY(in_.read_some(out));
    position_ += n;
    return n;
  }

 private:
  StreamReader& in_;
};

// The size of a regular file or a block device behind fd; nullopt for
// anything else.
fsio::Result<std::optional<std::uint64_t>> seekable_size(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fsio::errno_error(name + ": fstat");
  if (S_ISREG(st.st_mode)) return std::optional<std::uint64_t>(std::uint64_t(st.st_size));
  if (S_ISBLK(st.st_mode)) {
    std::uint64_t size = 0;
    if (::ioctl(fd, BLKGETSIZE64, &size) != 0) return fsio::errno_error(name + ": BLKGETSIZE64");
    return std::optional<std::uint64_t>(size);
  }
  return std::optional<std::uint64_t>();
}

}  // namespace

const char* describe(InputKind kind) {
  switch (kind) {
    case InputKind::fsimg: return "an fsimg stream";
    case InputKind::raw: return "a raw image";
    case InputKind::zstd: return "a zstd-compressed raw image";
    case InputKind::xz: return "an xz-compressed raw image";
  }
  return "?";
}

fsio::Result<InputKind> detect_input(StreamReader& in) {
  std::array<std::byte, 12> head{};
  const std::size_t n = FSIO_TRY(in.peek(head));
  if (n == 0) return make_error(Errc::corrupt, in.name() + ": empty: the input ends at byte 0, no image in it");
  if (n >= kXzMagic.size() && std::memcmp(head.data(), kXzMagic.data(), kXzMagic.size()) == 0) return InputKind::xz;
  // fsimg's header is the skippable frame 0x184D2A5F holding "FSIH". Either
  // half is enough: a stream cut or damaged in the other is still an fsimg
  // stream, and its reader names the damage, where taking it for a zstd or
  // a raw image would restore its records as data.
  const bool fsih = n >= 12 && std::memcmp(head.data() + 8, "FSIH", 4) == 0;
  const std::uint32_t magic = n >= 4 ? le32_at(head.data()) : 0;
  if (fsih || (n >= 4 && magic == kSkippableMagic) || (n < 4 && std::memcmp(head.data(), "\x5F\x2A\x4D\x18", n) == 0))
    return InputKind::fsimg;
  if (n < 4) return InputKind::raw;
  // zstd: its frame magic, or any other skippable frame (0x184D2A50..5E).
  if (magic == kZstdMagic || (magic & 0xFFFFFFF0u) == 0x184D2A50u) return InputKind::zstd;
  return InputKind::raw;
}

fsio::Status RawInput::skip(std::uint64_t n) {
  std::vector<std::byte> sink(std::size_t(std::min<std::uint64_t>(n, 1u << 20)));
  for (std::uint64_t done = 0; done < n;) {
    const auto step = std::size_t(std::min<std::uint64_t>(n - done, sink.size()));
    const std::size_t got = FSIO_TRY(read({sink.data(), step}));
    if (got == 0)
      return make_error(Errc::corrupt, "the image ends at byte " + std::to_string(position_) + ", before byte " +
                                           std::to_string(position_ + (n - done)));
    done += got;
  }
  return {};
}

fsio::Result<std::unique_ptr<RawInput>> open_raw_input(StreamReader& in, InputKind kind, unsigned threads) {
  FSIO_ASSERT(kind != InputKind::fsimg);
  if (kind == InputKind::zstd) return open_zstd_input(in);
  if (kind == InputKind::xz) return open_xz_input(in, threads);
  const auto size = FSIO_TRY(seekable_size(in.fd(), in.name()));
  const off_t at = size ? ::lseek(in.fd(), 0, SEEK_CUR) : -1;
  if (!size || at < 0) return std::unique_ptr<RawInput>(std::make_unique<PipeInput>(in));
  // Where the stream began in the file: standard input may be a file
  // opened at any offset, and the peek that told the kind has read ahead.
  const std::uint64_t start = std::uint64_t(at) - in.offset() - in.buffered();
  if (start > *size) return make_error(Errc::invalid_argument, in.name() + ": positioned past its end");
  return std::unique_ptr<RawInput>(std::make_unique<FileInput>(in.fd(), in.name(), start, *size - start));
}

}  // namespace img
