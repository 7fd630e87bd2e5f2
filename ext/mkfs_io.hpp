// The I/O write_mkfs needs beyond IoQueue's plugs: writes smaller than the
// device's direct-I/O unit (read-modify-write of the units they touch),
// zeroing by fallocate with written zeros as the fallback, and a batch
// that copies blocks into one aligned arena per plug. Internal to ext/.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"

namespace ext {

// The unit a write of `n` bytes at `off` must be widened to: the direct-I/O
// alignment (at least 512, a sector, which a write cannot tear).
std::uint64_t io_unit(const fsio::IoQueue& q);

// Reads [off, off + n) whatever its alignment.
fsio::Result<std::vector<std::byte>> read_bytes(fsio::IoQueue& q, std::uint64_t off, std::size_t n);

// Writes `data` at `off` in one request, reading the units it only partly
// covers first. `what` says which step failed.
fsio::Status write_bytes(fsio::IoQueue& q, std::uint64_t off, std::span<const std::byte> data, const char* what);

// Small writes (superblocks: 1 KiB each) submitted together: one plug reads
// every unit they only partly cover, one plug writes them all.
struct Patch {
  std::uint64_t off;
  std::vector<std::byte> data;
};
fsio::Status write_patches(fsio::IoQueue& q, const std::vector<Patch>& patches, const char* what);
// Reads [off, off + n) for each of `ranges` in one plug (n small).
fsio::Result<std::vector<std::vector<std::byte>>> read_ranges(
    fsio::IoQueue& q, const std::vector<std::pair<std::uint64_t, std::size_t>>& ranges);

// Makes [off, off + n) read as zeros: FALLOC_FL_ZERO_RANGE (mke2fs's
// unix_zeroout), else a hole punched in a file, else written zeros.
// Adds to *fallocated or *written.
fsio::Status zero_bytes(fsio::IoQueue& q, std::uint64_t off, std::uint64_t n, std::uint64_t* fallocated,
                        std::uint64_t* written);

// mke2fs's discard of [off, off + n) of the window: BLKDISCARD on a
// device; on a file, a hole punched over each data region (SEEK_DATA,
// SEEK_HOLE): what reads as zeros already (holes, preallocated unwritten
// extents) is left as it is, allocation and all, where mke2fs punches it
// too. The bytes read the same either way.
fsio::Status discard_target(const fsio::Device& d, std::uint64_t off, std::uint64_t n);

// Writes gathered into plugs of at most `limit` bytes: blocks copied into
// an aligned arena of `arena` bytes (a full arena is submitted before more
// is taken) and buffers that outlive the batch; InterruptGuard is looked at
// between plugs.
class WriteBatch {
 public:
  WriteBatch(fsio::IoQueue& q, std::size_t arena, std::size_t limit, fsio::Progress* progress, const char* what);
  // Space for n bytes to be written at `off`; valid until the next take or finish.
  fsio::Result<std::span<std::byte>> take(std::uint64_t off, std::size_t n);
  // A write from a buffer that outlives the batch (not copied).
  fsio::Status write(std::uint64_t off, std::span<const std::byte> data);
  fsio::Status finish();
  unsigned plugs() const { return plugs_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  fsio::Status submit();
  fsio::AlignedBuffer arena_;
  std::size_t limit_;
  std::size_t used_ = 0, pending_ = 0;
  fsio::IoQueue::Plug plug_;
  fsio::Progress* progress_;
  const char* what_;
  unsigned plugs_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace ext
