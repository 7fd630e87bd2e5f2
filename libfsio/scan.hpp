// Reading a range of a device to find what cannot be read: the bad-block
// scan of mkfs.fat -c and mke2fs -c, done the way the rest of libfsio does
// I/O. mkfs.fat reads 16 KiB per read() and, after a failure, one 1 KiB
// block at a time; here the range is read in batches of large merged
// requests (1 MiB each, 16 per batch, O_DIRECT when the Device is direct, so
// the page cache neither hides a bad sector nor fills up), and only a batch
// that fails is read again, chunk by chunk, and a failing chunk halved until
// the unreadable units are found (about 2 log2(chunk/unit) reads for one
// bad unit).
#pragma once

#include <cstdint>
#include <vector>

#include "libfsio/io_queue.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"

namespace fsio {

struct ScanOptions {
  // The granularity of the answer, in bytes: a power of two, at least the
  // device's DIO alignment when it is direct (the caller picks it: mkfs.fat
  // counts 1024-byte blocks).
  std::uint64_t unit = 1024;
  std::uint64_t chunk = 1u << 20;  // bytes per request before merging; a multiple of unit
  unsigned batch = 16;             // chunks per plug
};

struct ScanReport {
  std::vector<std::uint64_t> bad;    // window offsets of the units that could not be read, ascending
  std::uint64_t bytes_read = 0;      // including re-reads
  std::uint64_t retried_chunks = 0;  // chunks read again because their batch failed
};

// Reads [offset, offset + length) of the queue's device. A read that fails
// with an I/O error (Errc::io: EIO, ENODATA, a torn or failed request) makes
// its unit bad; any other error is returned. The last unit may be shorter
// than `unit` (the range's end). Checks InterruptGuard between batches:
// Errc::interrupted. Progress, when given, advances by the bytes scanned.
Result<ScanReport> scan_readable(IoQueue& queue, std::uint64_t offset, std::uint64_t length, Progress* progress,
                                 const ScanOptions& options = {});

}  // namespace fsio
