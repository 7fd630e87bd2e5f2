// Counters every IoQueue keeps; tools print them with --stats / --json.
#pragma once

#include <cstdint>

namespace fsio {

struct IoStats {
  std::uint64_t requests_queued = 0;     // plug.read/write calls
  std::uint64_t requests_submitted = 0;  // after merging, handed to the engine
  std::uint64_t syscalls = 0;            // engine syscalls (submit, wait, preadv, ...)
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t flushes = 0;
  std::uint64_t retries = 0;  // short transfers resubmitted
  unsigned peak_in_flight = 0;
  double elapsed_seconds = 0;  // wall time spent inside finish()/flush()
};

}  // namespace fsio
