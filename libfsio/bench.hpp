// ddbench's engine: a fio-style benchmark of one Device as a library call.
//
// The data path talks to an Engine (engine.hpp) directly, the way fio's
// io_uring engine does: iodepth aligned buffers allocated once, iodepth
// requests kept in flight, refilled as completions are reaped (in batches),
// one timestamp per commit and per reap for completion latency, and no
// allocation per I/O. Random offsets walk a keyed permutation of the blocks,
// so every block of the range is touched exactly once per run, as fio's
// random map does. Sequential requests may be merged into one multi-iovec
// request, but only inside a --batch and unless --no-merge; the default
// submits each request as soon as the queue has room, like fio.
//
// The last request of a range that ends at the end of the device is clamped
// by Device::clamp, so a read covers the target to its real end.
//
// run_bench polls InterruptGuard::requested(): on SIGINT/SIGTERM it stops
// issuing, reaps what is in flight and returns what was done with
// `interrupted` set. Single-threaded; Progress::add is the only thing it
// shares with another thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/pattern.hpp"
#include "libfsio/result.hpp"
#include "libfsio/stats.hpp"

namespace fsio {

class Progress;

enum class BenchRw { read, write, randread, randwrite };
Result<BenchRw> parse_bench_rw(std::string_view text);  // fio's names
const char* bench_rw_name(BenchRw rw);
inline bool bench_writes(BenchRw rw) { return rw == BenchRw::write || rw == BenchRw::randwrite; }
inline bool bench_random(BenchRw rw) { return rw == BenchRw::randread || rw == BenchRw::randwrite; }

struct BenchOptions {
  BenchRw rw = BenchRw::read;
  std::uint64_t bs = 1u << 20;      // bytes per request
  std::uint64_t size = 0;           // bytes to cover from offset; 0: to the end of the target
  std::uint64_t offset = 0;         // start of the range, bytes into the target
  unsigned iodepth = 32;            // requests in flight
  EngineKind engine = EngineKind::automatic;
  bool direct = true;               // O_DIRECT (falls back where the filesystem refuses it)
  bool sync = false;                // every write carries RWF_DSYNC
  unsigned batch = 0;               // requests per submit; 0: submit whenever there is room
  bool merge = true;                // merge contiguous requests inside a batch
  double runtime = 0;               // seconds; stop issuing after this; 0: no cap
  bool time_based = false;          // go over the range again until runtime is up (fio's time_based)
  bool verify = false;              // write: stamp, then read back and check; read: check
  std::uint64_t seed = 0x66736962;  // stamped into every verify sector ("fsib")
  std::optional<std::uint64_t> create_size;  // create/extend the target file first
  bool force = false;               // write over a filesystem or partition table
};

// Checks that need no device: ranges of bs, iodepth, batch, runtime.
Status validate(const BenchOptions& options);

// The byte range a run covers, resolved against a device of `device_size`
// bytes whose direct I/O needs `align`-byte offsets and lengths (1 when
// buffered). The range may end off the alignment only at the device's end.
struct BenchRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t blocks = 0;  // ceil((end - begin) / bs)
};
Result<BenchRange> plan_range(const BenchOptions& options, std::uint64_t device_size, std::uint32_t align);

// Opens the target the way `options` needs it: read-write for a write or a
// create, direct or buffered. A target in use or read-only is refused first
// (Device::open's refusals, whatever options.force says); then a write over
// a filesystem or partition table is refused (Errc::busy, naming it) unless
// options.force.
Result<Device> open_bench_target(const std::string& path, const BenchOptions& options);

// The order blocks are visited in: identity for sequential runs; for random
// ones a keyed permutation of [0, n) (a bijection on the smallest power of
// two >= n, cycle-walked until it lands below n). Every block exactly once,
// like fio's random map, at a few multiplies per offset instead of a bitmap.
class BlockOrder {
 public:
  BlockOrder(std::uint64_t n, bool random, std::uint64_t key);
  std::uint64_t operator()(std::uint64_t i) const {
    if (!random_) return i;
    std::uint64_t x = i;
    do x = step(x); while (x >= n_);
    return x;
  }

 private:
  std::uint64_t step(std::uint64_t x) const;
  std::uint64_t n_;
  bool random_;
  std::uint64_t mask_ = 0;
  unsigned shift_ = 1;
  std::array<std::uint64_t, 3> keys_{};
};

// Completion latencies in fio's log-linear buckets (FIO_IO_U_PLAT_BITS = 6):
// exact below 128 ns, then 64 buckets per power of two, so a percentile is
// within 1/128 of the true value. Fixed size, no allocation on add().
class LatencyHistogram {
 public:
  static constexpr unsigned sub_bits = 6;
  static constexpr unsigned sub_buckets = 1u << sub_bits;
  static constexpr unsigned buckets = (64 - sub_bits + 1) * sub_buckets;

  void add(std::uint64_t ns, std::uint64_t count = 1);
  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? sum_ / double(count_) : 0; }
  // The value below which `pct` percent of the samples lie (fio's rule: the
  // first bucket whose cumulative count reaches pct/100 of all samples),
  // reported as the bucket's midpoint, clamped to [min, max]. 0 when empty.
  std::uint64_t percentile(double pct) const;

  static unsigned bucket_of(std::uint64_t ns);
  static std::uint64_t bucket_low(unsigned index);   // smallest value in the bucket
  static std::uint64_t bucket_high(unsigned index);  // largest

 private:
  std::array<std::uint64_t, buckets> hist_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
  double sum_ = 0;
};

struct VerifyResult {
  bool complete = false;                     // every byte meant to be checked was (not interrupted)
  std::uint64_t bytes_checked = 0;
  std::uint64_t bad_blocks = 0;              // requests whose data did not match
  std::optional<PatternMismatch> first;      // the lowest-offset mismatch found
};

struct BenchResult {
  BenchRw rw = BenchRw::read;
  std::string engine;                 // the engine's name()
  bool direct = false;                // O_DIRECT in effect
  std::string note;                   // e.g. the device's direct-I/O fallback
  std::uint64_t bs = 0;
  unsigned iodepth = 0;
  BenchRange range;
  std::uint64_t io_bytes = 0;         // bytes transferred by the measured pass
  std::uint64_t ios = 0;              // requests (of up to bs) completed
  std::uint64_t eod_truncated = 0;    // bytes of a partial last sector the EOD guard left out
  double elapsed = 0;                 // seconds, first submit to last completion
  LatencyHistogram clat;              // ns per request, submit to completion
  IoStats stats;                      // IoQueue's counter names for the measured pass
  bool interrupted = false;           // SIGINT/SIGTERM stopped the run
  bool runtime_capped = false;        // --runtime stopped it (before the range ended, or --time-based)
  std::optional<VerifyResult> verify;

  // --verify passed: complete and no mismatch. An interrupted verify is not ok.
  bool verify_ok() const { return verify && verify->complete && !verify->first; }
  double bw_bytes() const { return elapsed > 0 ? double(io_bytes) / elapsed : 0; }
  double iops() const { return elapsed > 0 ? double(ios) / elapsed : 0; }
  std::uint64_t runtime_ms() const { return std::uint64_t(elapsed * 1000 + 0.5); }
};

// Runs the benchmark on an open device (see open_bench_target). Errors carry
// the offset and size of the failed request and the device path. A verify
// mismatch is not an error: it is reported in result.verify.
Result<BenchResult> run_bench(Device& device, const BenchOptions& options, Progress* progress = nullptr);
// The same on a caller-made engine over device.fd() (options.engine is
// ignored): tests inject short-transferring or failing engines this way.
Result<BenchResult> run_bench(Device& device, const BenchOptions& options, std::unique_ptr<Engine> engine,
                              Progress* progress = nullptr);

}  // namespace fsio
