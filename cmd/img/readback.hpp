// --verify for a restore to several targets: every range written is read
// back from each target and compared with the checksums taken while it was
// written (written.hpp), never with a second read of the input.
//
// The reads bypass the page cache: O_DIRECT, each range widened to the
// device's direct-I/O unit. A target that cannot do O_DIRECT (a file on
// tmpfs) has its cached pages dropped first: fsync and
// POSIX_FADV_DONTNEED for a file, BLKFLSBUF for a block device; the report
// says which, so a verification that read the cache is never taken for one
// that read the device.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "cmd/img/written.hpp"
#include "libfsio/engine.hpp"

namespace img {

struct Difference {
  std::uint64_t offset = 0;  // image offset: the byte itself, or the chunk's first byte when !exact
  std::uint64_t length = 0;  // the chunk (data) compared by checksum
  bool exact = false;
  std::string text;  // "byte 8392704 (0x801000) is 0x5A, 0 was written", ...
};

struct ReadbackReport {
  bool direct = false;
  std::string cache_note;   // without O_DIRECT: why, and how the cache was dropped
  std::uint64_t bytes = 0;  // read back and compared
  double seconds = 0;
  std::optional<Difference> difference;  // the first; nullopt: every byte as written
};

// Reads back every extent of `map` from `path` (the window starting at
// `offset`), stopping at the first difference. `progress`: bytes compared.
fsio::Result<ReadbackReport> read_back(const std::string& path, std::uint64_t offset, const WrittenMap& map,
                                       fsio::EngineKind engine, std::atomic<std::uint64_t>* progress);

// A difference found by checksum names only its 4 KiB chunk; this reads
// the chunk from `bad` and from `good` (a target whose read-back matched
// every checksum, so it holds what was written there) and names the first
// byte that differs and both values. `difference` is updated in place.
fsio::Status pinpoint(const std::string& bad, const std::string& good, std::uint64_t offset, Difference& difference);

}  // namespace img
