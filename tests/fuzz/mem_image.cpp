#include "tests/fuzz/mem_image.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace fsio::fuzz {
namespace {

std::uint64_t le(std::span<const std::uint8_t> b, std::size_t at, unsigned bytes) {
  std::uint64_t v = 0;
  if (at + bytes > b.size()) return 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t(b[at + i]) << (8 * i);
  return v;
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::abort();
}

}  // namespace

MemImage::MemImage() {
  fd_ = ::memfd_create("fsio-fuzz", MFD_CLOEXEC);
  if (fd_ < 0) die("memfd_create");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemImage& MemImage::load(std::span<const std::uint8_t> bytes, std::uint64_t size) {
  static MemImage image;
  if (::ftruncate(image.fd_, 0) != 0) die("ftruncate");
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(image.fd_, bytes.data() + done, bytes.size() - done, off_t(done));
    if (n <= 0) die("pwrite");
    done += std::size_t(n);
  }
  if (size > bytes.size() && ::ftruncate(image.fd_, off_t(size)) != 0) die("ftruncate");
  return image;
}

std::uint64_t MemImage::size() const {
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  return end < 0 ? 0 : std::uint64_t(end);
}

std::vector<std::uint8_t> MemImage::contents() const {
  std::vector<std::uint8_t> out(size());
  for (std::size_t done = 0; done < out.size();) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, off_t(done));
    if (n <= 0) die("pread");
    done += std::size_t(n);
  }
  return out;
}

std::uint64_t fat_declared_size(std::span<const std::uint8_t> image) {
  const std::uint64_t sector = le(image, 0x0B, 2);
  const std::uint64_t total16 = le(image, 0x13, 2);
  return sector * (total16 ? total16 : le(image, 0x20, 4));
}

std::uint64_t ext_declared_size(std::span<const std::uint8_t> image) {
  constexpr std::size_t sb = 1024;
  const std::uint64_t log = le(image, sb + 0x18, 4);
  if (log > 6) return 0;  // above 64 KiB: not a block size, let open say so
  std::uint64_t blocks = le(image, sb + 0x04, 4);
  if (le(image, sb + 0x60, 4) & 0x80) blocks |= le(image, sb + 0x150, 4) << 32;  // INCOMPAT_64BIT
  if (blocks > kMaxPadded) return 0;
  return blocks * (1024ull << log);
}

std::uint64_t padded_size(std::uint64_t input, std::uint64_t declared) {
  return declared > input && declared <= kMaxPadded ? declared : input;
}

std::vector<std::string> split_words(std::span<const std::uint8_t> bytes) {
  std::vector<std::string> words(1);
  for (const std::uint8_t c : bytes) {
    if (c == 0 || c == '\n') words.emplace_back();
    else words.back().push_back(char(c));
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace fsio::fuzz

// Every target: the synchronous engine (an io_uring ring per run would
// cost more than most runs), and no test override from the environment.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("FSIO_ENGINE", "psync", 1);
  ::unsetenv("FSIO_FAULT");
  return 0;
}
