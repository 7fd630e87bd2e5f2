// What every fuzz target needs: the fuzzer's bytes as a device the code
// under test opens by path, held in memory (memfd_create), so a target
// touches no file and each run starts from exactly the input.
//
// The code opens "/proc/self/fd/N": a regular file to Device::open, with
// the same checks, topology and I/O paths as an image file on disk. One
// memfd per process is reused from run to run (libFuzzer runs one input at
// a time in one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fsio::fuzz {

class MemImage {
 public:
  // The process's image, now holding exactly `bytes`, followed by zeros up
  // to `size` when size is larger (a hole: costs no memory until written).
  static MemImage& load(std::span<const std::uint8_t> bytes, std::uint64_t size = 0);

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  std::uint64_t size() const;
  // The image's bytes now (after the code under test ran).
  std::vector<std::uint8_t> contents() const;

 private:
  MemImage();
  int fd_ = -1;
  std::string path_;
};

// Sizes the images say they have, so a seed can be stored without its
// zero tail (a 1 MiB image whose metadata ends at 40 KiB is kept as 40 KiB)
// and the device still has the size the filesystem claims. A size above
// kMaxPadded is not padded: the input's own length stands and the
// truncated-image checks see it.
inline constexpr std::uint64_t kMaxPadded = 1ull << 30;
// FAT: BPB_BytsPerSec times BPB_TotSec16 (or BPB_TotSec32 when that is 0).
std::uint64_t fat_declared_size(std::span<const std::uint8_t> image);
// ext: s_blocks_count (hi half with INCOMPAT_64BIT) times the block size.
std::uint64_t ext_declared_size(std::span<const std::uint8_t> image);
// The padded size load() should get: declared when input < declared <= kMaxPadded.
std::uint64_t padded_size(std::uint64_t input, std::uint64_t declared);

// Splits fuzzer bytes into NUL- or newline-separated words (command lines).
std::vector<std::string> split_words(std::span<const std::uint8_t> bytes);

}  // namespace fsio::fuzz
