// ddbench's engine: a fio-style benchmark of one Device as a library call.
//
// The data path talks to an Engine (engine.hpp) directly, the way fio's
// io_uring engine does: iodepth aligned buffers allocated once, iodepth
// requests kept in flight, refilled as completions are reaped (in batches),
// one timestamp per commit and per reap for submission and completion
// latency, and no allocation per I/O. Random offsets walk a keyed
// permutation of the blocks, so every block of the range is touched exactly
// once per loop, as fio's random map does. Sequential requests may be
// merged into one multi-iovec request, but only inside a --batch and unless
// --no-merge; the default submits each request as soon as the queue has
// room, like fio. Mixed workloads (rw, randrw) draw each request's direction
// against rwmixread and report each direction apart, as fio does.
//
// The last request of a range that ends at the end of the device is clamped
// by Device::clamp, so a read covers the target to its real end.
//
// run_bench polls InterruptGuard::requested(): on SIGINT/SIGTERM it stops
// issuing, reaps what is in flight and returns what was done with
// `interrupted` set. A run uses its calling thread only (several jobs run
// on several threads, jobs.hpp); Progress::add is the only thing it
// shares with another thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/bench/buffer_fill.hpp"
#include "cmd/bench/distribution.hpp"
#include "cmd/bench/latency_target.hpp"
#include "cmd/bench/pattern.hpp"
#include "cmd/bench/priority.hpp"
#include "cmd/bench/steadystate.hpp"
#include "cmd/bench/throttle.hpp"
#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/result.hpp"
#include "libfsio/stats.hpp"

namespace fsio {
class Progress;
}

namespace bench {

// fio's rw= values. rw (also spelled readwrite) and randrw mix reads and
// writes, rwmixread percent of them reads, chosen per request. trimwrite and
// randtrimwrite trim a block, then write it (fio's TD_DDIR_TRIMWRITE).
enum class BenchRw { read, write, randread, randwrite, rw, randrw, trimwrite, randtrimwrite };
fsio::Result<BenchRw> parse_bench_rw(std::string_view text);  // fio's names
const char* bench_rw_name(BenchRw rw);
inline bool bench_mixed(BenchRw rw) { return rw == BenchRw::rw || rw == BenchRw::randrw; }
inline bool bench_trims(BenchRw rw) { return rw == BenchRw::trimwrite || rw == BenchRw::randtrimwrite; }
// Any writes (the target is opened for writing).
inline bool bench_writes(BenchRw rw) {
  return rw == BenchRw::write || rw == BenchRw::randwrite || bench_mixed(rw) || bench_trims(rw);
}
inline bool bench_reads(BenchRw rw) { return !bench_writes(rw) || bench_mixed(rw); }
inline bool bench_random(BenchRw rw) {
  return rw == BenchRw::randread || rw == BenchRw::randwrite || rw == BenchRw::randrw || rw == BenchRw::randtrimwrite;
}

// A data direction, indexing per-direction options and results as fio does.
enum BenchDir : unsigned { dir_read = 0, dir_write = 1, dir_trim = 2 };
inline constexpr unsigned bench_dirs = 3;
inline const char* bench_dir_name(BenchDir d) { return d == dir_read ? "read" : d == dir_write ? "write" : "trim"; }
// Whether a workload makes requests in direction d.
inline bool bench_active(BenchRw rw, BenchDir d) {
  return d == dir_read ? bench_reads(rw) : d == dir_write ? bench_writes(rw) : bench_trims(rw);
}

// One entry of fio's bssplit: `percent` of the requests are `bs` bytes.
struct BsSplit {
  std::uint64_t bs = 0;
  unsigned percent = 0;
};

// fio's bsrange for one direction: sizes from min to max (0: not in use).
struct BsRange {
  std::uint64_t min = 0, max = 0;
};

// fio's continue_on_error and ignore_error: a failed request of a kind in
// continue_mask whose errno is in that kind's list (by default EIO and
// EILSEQ) is counted and the job goes on; any other failure ends it.
inline constexpr unsigned error_read = 1, error_write = 2, error_verify = 4;
struct ErrorPolicy {
  unsigned continue_mask = 0;
  std::array<std::vector<int>, 3> ignore;  // [read], [write], [verify]; empty: EIO and EILSEQ
  bool dump = true;                        // error_dump: say each one on stderr
  bool given = false;                      // either option appeared (fio's JSON then has total_err)
  bool ignorable(unsigned kind_bit, int err) const;
};

struct BenchOptions {
  BenchRw rw = BenchRw::read;
  std::uint64_t bs = 1u << 20;  // bytes per request
  // Per direction (fio's bs=R,W,T and bssplit=...,...,...): a size distribution
  // that replaces bs for that direction when not empty. Percents add to 100.
  std::array<std::vector<BsSplit>, bench_dirs> bssplit;
  // Per direction (fio's bsrange=MIN-MAX[,MIN-MAX[,MIN-MAX]]): when max is not 0, sizes
  // are drawn as fio draws them (min + max x U[0,1), rounded down to a
  // multiple of min, at most max), replacing bs and bssplit.
  std::array<BsRange, bench_dirs> bsrange;
  // fio's blockalign for random I/O: offsets are multiples of this (0: of the
  // smallest block size); any other value turns the random map off, as in fio.
  std::uint64_t blockalign = 0;
  // fio's zonemode=strided on sequential I/O: zone_size bytes in a zone
  // (of zone_range bytes, starting over inside it), then on to the zone
  // zone_range + zone_skip further, wrapping at the end (0: no zones).
  std::uint64_t zone_size = 0, zone_range = 0, zone_skip = 0;
  std::int64_t seq_add = 0;   // fio's rw=TYPE:N on sequential I/O: bytes skipped (< 0: back) after each request
  std::uint64_t size = 0;     // bytes to cover from offset; 0: to the end of the target
  std::uint64_t offset = 0;   // start of the range, bytes into the target
  std::uint64_t io_size = 0;  // bytes to transfer per loop (fio io_size); 0: the range once
  unsigned iodepth = 32;      // requests in flight
  fsio::EngineKind engine = fsio::EngineKind::automatic;
  bool direct = true;                     // O_DIRECT (falls back where the filesystem refuses it)
  bool sync = false;                      // every write carries RWF_DSYNC
  unsigned rwmixread = 50;                // rw/randrw: percent of requests that read
  unsigned batch = 0;                     // requests per submit; 0: submit whenever there is room
  bool merge = true;                      // merge contiguous requests inside a batch
  double runtime = 0;                     // seconds; stop issuing after this; 0: no cap
  bool time_based = false;                // go over the range again until runtime is up (fio's time_based)
  double ramp_time = 0;                   // seconds run before anything is measured (fio ramp_time)
  unsigned loops = 1;                     // the whole job this many times (fio loops)
  unsigned fsync_every = 0;               // a flush after every N writes (fio fsync=N / fdatasync=N)
  bool fsync_data_only = true;            // that flush is fdatasync (fio fdatasync=), else fsync
  bool end_fsync = false;                 // fsync once the writes are done (fio end_fsync)
  bool norandommap = false;               // random offsets may repeat (fio norandommap)
  RandomDistribution distribution;        // fio random_distribution; not uniform: blocks may repeat
  bool invalidate = true;                 // drop the range from the page cache first (fio invalidate)
  bool fadvise = true;                    // advise the access pattern (fio fadvise_hint)
  bool verify = false;                    // write: stamp, then read back and check; read: check
  bool do_verify = true;                  // a verify write reads back (fio do_verify=0: only stamps)
  bool verify_dump = false;               // write each bad block and what it should hold to files (fio)
  bool serialize_overlap = false;         // fio serialize_overlap: accepted only at iodepth 1
  bool verify_fatal = false;              // stop at the first mismatch (fio verify_fatal), else count all
  std::vector<std::byte> verify_pattern;  // fio verify_pattern: fills each sector after its stamp (empty: PRNG)
  std::uint64_t verify_backlog = 0;       // check the writes every this many of them, in the pass (fio); 0: after
  bool gtod_reduce = false;               // fio gtod_reduce: no latencies, no bw/iops windows reported
  BenchRate rate;                         // fio rate, rate_iops, rate_min, rate_process
  BenchFlow flow;                         // fio flow, flow_id, flow_sleep
  PriorityOptions priority;               // fio prioclass, prio and the cmdprio options (priority.hpp)
  std::uint64_t thinktime_us = 0;         // fio thinktime: after each request, drain, then sleep
  std::uint64_t number_ios = 0;           // fio number_ios: stop after this many requests x loops (0: no cap)
  ErrorPolicy errors;                     // fio continue_on_error, ignore_error, error_dump
  SteadyStateOptions steadystate;         // fio ss, ss_dur, ss_ramp
  SteadyStateProbe* ss_probe = nullptr;   // with ss_dur: what the monitor reads once a second
  std::array<std::uint64_t, bench_dirs> max_latency_ns{};  // fio max_latency: a slower read or write ends the job
  LatencyTargetOptions latency;                            // fio latency_target, _window, _percentile, _run
  // Set by another job that ends (fio exitall): stop issuing, finish what is
  // in flight, report what was done. nullptr: nothing ends this job early.
  const std::atomic<bool>* terminate = nullptr;
  bool null_engine = false;                  // fio's null engine: requests complete at once, no data moves
  bool ftruncate_engine = false;             // fio's ftruncate engine: a write at OFFSET is ftruncate(OFFSET)
  BufferContents buffers;                    // compressible or duplicate write data (buffer_fill.hpp)
  std::uint64_t seed = 0x66736962;           // stamped into every verify sector ("fsib"); keys the random order
  std::uint64_t order_salt = 0;              // mixed into the random order's key only (copies of a job differ)
  std::optional<std::uint64_t> create_size;  // create/extend the target file first
  bool force = false;                        // write over a filesystem, partition table or text file
  bool exclusive = true;                     // O_EXCL on a block device opened for writing (off for a
                                             // second job on a device this run has already claimed)
  // Measurement windows (fio bw_avg_time/iops_avg_time and log_avg_msec):
  // bandwidth and IOPS per window of stat_window_ms for bw_min/max/mean,
  // and per window of log_window_ms (0: none) for logs and plots.
  unsigned stat_window_ms = 500;
  unsigned log_window_ms = 0;
  bool log_ios = false;  // keep every request's latency (logs without log_avg_msec)

  // The largest request either direction makes (buffers are this big).
  std::uint64_t max_bs() const;
  // The smallest: the granule of the random map.
  std::uint64_t min_bs() const;
};

// Checks that need no device: ranges of bs, iodepth, batch, runtime.
fsio::Status validate(const BenchOptions& options);

// The byte range a run covers, resolved against a device of `device_size`
// bytes whose direct I/O needs `align`-byte offsets and lengths (1 when
// buffered). The range may end off the alignment only at the device's end.
struct BenchRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t blocks = 0;  // ceil((end - begin) / bs)
};
fsio::Result<BenchRange> resolve_range(const BenchOptions& options, std::uint64_t device_size, std::uint32_t align);

// Opens the target the way `options` needs it: read-write for a write or a
// create, direct or buffered. A target in use or read-only is refused first
// (Device::open's refusals, whatever options.force says); then a write over
// a filesystem or partition table is refused (Errc::busy, naming it) unless
// options.force.
fsio::Result<fsio::Device> open_bench_target(const std::string& path, const BenchOptions& options);

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
    do x = step(x);
    while (x >= n_);
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

// min, max, mean and standard deviation of latencies, as fio's calc_lat
// reports them (stddev with n - 1). No allocation.
class LatencyStats {
 public:
  void add(std::uint64_t ns, std::uint64_t count = 1) {
    n_ += count;
    const double v = double(ns);
    sum_ += v * double(count);
    sumsq_ += v * v * double(count);
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }
  void merge(const LatencyStats& other);
  std::uint64_t count() const { return n_; }
  std::uint64_t min() const { return n_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return n_ ? sum_ / double(n_) : 0; }
  double stddev() const;
  double sum() const { return sum_; }

 private:
  std::uint64_t n_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
  double sum_ = 0;
  double sumsq_ = 0;
};

// Completion latencies in fio's log-linear buckets (FIO_IO_U_PLAT_BITS = 6):
// exact below 128 ns, then 64 buckets per power of two, so a percentile is
// within 1/128 of the true value. Fixed size, no allocation on add().
class LatencyHistogram {
 public:
  static constexpr unsigned sub_bits = 6;
  static constexpr unsigned sub_buckets = 1u << sub_bits;
  static constexpr unsigned buckets = (64 - sub_bits + 1) * sub_buckets;

  void add(std::uint64_t ns, std::uint64_t count = 1) {
    hist_[bucket_of(ns)] += count;
    stats_.add(ns, count);
  }
  void merge(const LatencyHistogram& other);
  std::uint64_t count() const { return stats_.count(); }
  std::uint64_t min() const { return stats_.min(); }
  std::uint64_t max() const { return stats_.max(); }
  double mean() const { return stats_.mean(); }
  double stddev() const { return stats_.stddev(); }
  const LatencyStats& stats() const { return stats_; }
  // The value below which `pct` percent of the samples lie (fio's rule: the
  // first bucket whose cumulative count reaches pct/100 of all samples),
  // reported as fio reports it (bucket_value), clamped to [min, max]. 0 when empty.
  std::uint64_t percentile(double pct) const;
  std::uint64_t bucket_count(unsigned index) const { return hist_[index]; }

  static unsigned bucket_of(std::uint64_t ns) {
    // Values below 2^(sub_bits+1) get a bucket each; above, a power of two
    // [2^m, 2^(m+1)) is split into sub_buckets equal parts (fio's plat_val_to_idx).
    if (ns < 2 * sub_buckets) return unsigned(ns);
    const unsigned msb = unsigned(63 - __builtin_clzll(ns));
    const unsigned shift = msb - sub_bits;
    return (shift + 1) * sub_buckets + unsigned((ns >> shift) & (sub_buckets - 1));
  }
  static std::uint64_t bucket_low(unsigned index);   // smallest value in the bucket
  static std::uint64_t bucket_high(unsigned index);  // largest
  // The value fio reports for a bucket (json+ "bins" keys, percentiles): its
  // low end plus half its width (fio's plat_idx_to_val).
  static std::uint64_t bucket_value(unsigned index);

 private:
  std::array<std::uint64_t, buckets> hist_{};
  LatencyStats stats_;
};

// fio's latency_ns / latency_us / latency_ms tables: how many requests
// took under 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 ns, then the same
// in us, then in ms plus under 2000 ms and 2000 ms or more (of total latency).
struct LatencyBuckets {
  static constexpr unsigned ns_n = 10, us_n = 10, ms_n = 12;
  std::array<std::uint64_t, ns_n + us_n + ms_n> count{};
  void add(std::uint64_t ns, std::uint64_t n = 1);
  void merge(const LatencyBuckets& other);
};

// fio's IO depths tables: 7 buckets each. level: requests by how many were
// in flight once they were submitted (1, 2, 4, 8, 16, 32, >=64; fio's
// io_u_mark_depth); submit and complete: requests per submit call and per
// reap (0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
struct DepthCounts {
  std::array<std::uint64_t, 7> level{}, submit{}, complete{};
  void add_level(unsigned in_flight, std::uint64_t requests = 1);
  void add_submit(unsigned n) { ++submit[batch_bucket(n)]; }
  void add_complete(unsigned n) { ++complete[batch_bucket(n)]; }
  void merge(const DepthCounts& other);
  static unsigned batch_bucket(unsigned n);
};

// One measurement window of one direction: what completed in it.
struct BenchSample {
  std::uint64_t t_ms = 0;  // end of the window, ms after the measured start
  BenchDir dir = dir_read;
  std::uint64_t bytes = 0;
  std::uint64_t ios = 0;
  double lat_sum = 0, clat_sum = 0, slat_sum = 0;  // ns, summed over the ios
  double bw_kib(unsigned window_ms) const { return window_ms ? double(bytes) * 1000.0 / window_ms / 1024.0 : 0; }
  double iops(unsigned window_ms) const { return window_ms ? double(ios) * 1000.0 / window_ms : 0; }
};

// One request, for logs without log_avg_msec (fio logs every I/O then).
struct BenchIoEvent {
  std::uint64_t t_ns = 0;  // completion, after the measured start
  std::uint64_t offset = 0;
  std::uint32_t bytes = 0;
  BenchDir dir = dir_read;
  std::uint64_t clat = 0, slat = 0;  // ns; total latency is their sum
  std::uint16_t ioprio = 0;          // the request's priority value (priority.hpp), 0: none set
};

struct VerifyResult {
  bool complete = false;  // every byte meant to be checked was (not interrupted)
  std::uint64_t bytes_checked = 0;
  std::uint64_t bad_blocks = 0;          // requests whose data did not match
  std::optional<PatternMismatch> first;  // the lowest-offset mismatch found
  std::vector<std::string> dumps;        // verify_dump: the files written (NAME.OFFSET.received/expected)
};

// What one direction did in the measured part of a run (fio's read/write objects).
struct BenchDirResult {
  std::uint64_t io_bytes = 0;
  std::uint64_t ios = 0;
  LatencyHistogram clat;      // submit to completion
  LatencyStats slat;          // queued to submitted (io_uring only; empty for psync)
  LatencyStats lat;           // queued to completion
  std::uint64_t dropped = 0;  // requests lost on the way (the net engine's UDP sequence gaps; fio's drop_ios)
  // With cmdprio: clat per priority value, [0] the job's own, in fio's
  // order (PriorityPlan::values); empty without.
  struct Prio {
    std::uint16_t ioprio = 0;
    LatencyHistogram clat;
  };
  std::vector<Prio> prios;
};

// CPU the run's thread used (getrusage RUSAGE_THREAD), as fio's cpu line.
struct BenchCpu {
  double usr = 0, sys = 0;  // seconds
  std::uint64_t ctx = 0, majf = 0, minf = 0;
};

struct BenchResult {
  BenchRw rw = BenchRw::read;
  std::string engine;   // the engine's name()
  bool direct = false;  // O_DIRECT in effect
  std::string note;     // e.g. the device's direct-I/O fallback
  std::uint64_t bs = 0;
  unsigned iodepth = 0;
  BenchRange range;
  std::uint64_t io_bytes = 0;       // bytes transferred by the measured pass (both directions)
  std::uint64_t ios = 0;            // requests (of up to bs) completed
  std::uint64_t eod_truncated = 0;  // bytes of a partial last sector the EOD guard left out
  double elapsed = 0;               // seconds, first submit (after ramp_time) to last completion
  // A pure write's verify read-back, in seconds: fio counts its reads as the
  // job's reads (read.*, over this runtime) and its time in job_runtime.
  double verify_elapsed = 0;
  bool backlog_reads = false;                  // verify_backlog's reads, counted as the job's reads during the pass
  LatencyHistogram clat;                       // ns per request, submit to completion, both directions
  std::array<BenchDirResult, bench_dirs> dir;  // [dir_read], [dir_write], [dir_trim]
  LatencyHistogram sync_lat;                   // fsync/fdatasync requests (fio's sync object)
  LatencyBuckets lat_buckets;
  DepthCounts depths;
  BenchCpu cpu;
  unsigned stat_window_ms = 0, log_window_ms = 0;
  std::vector<BenchSample> stat_samples;  // per stat window and direction
  std::vector<BenchSample> log_samples;   // per log window and direction
  std::vector<BenchIoEvent> io_events;    // with log_ios
  fsio::IoStats stats;                    // IoQueue's counter names for the measured pass
  bool interrupted = false;               // SIGINT/SIGTERM stopped the run
  // fio's FIO_NOIO engines (cpuio, exec): requests counted, no bytes, and
  // the direction's runtime, bandwidth and IOPS reported as 0, as fio does.
  bool no_io = false;
  bool runtime_capped = false;  // --runtime stopped it (before the range ended, or --time-based)
  std::optional<VerifyResult> verify;
  std::optional<SteadyStateReport> steadystate;  // with ss_dur: the job's (or its group's) judgement
  std::uint64_t total_err = 0;                   // requests that failed and were gone on after (continue_on_error)
  int first_error = 0;                           // the first one's errno
  std::vector<std::string> errors;               // error_dump: the first 100 of them, said as errors are
  unsigned latency_depth = 0;                    // latency_target: the depth the search settled at (else iodepth)

  // --verify passed: complete and no mismatch. An interrupted verify is not ok.
  bool verify_ok() const { return verify && verify->complete && !verify->first; }
  double bw_bytes() const { return elapsed > 0 ? double(io_bytes) / elapsed : 0; }
  double iops() const { return elapsed > 0 ? double(ios) / elapsed : 0; }
  std::uint64_t runtime_ms() const { return std::uint64_t(elapsed * 1000 + 0.5); }
  // Per direction, as fio reports them: a pure write's reads are its verify
  // reads (the read-back, over its own runtime, or verify_backlog's checks).
  bool read_back() const { return verify_elapsed > 0 && !bench_reads(rw); }
  bool verify_reads_only() const { return read_back() || (backlog_reads && !bench_reads(rw)); }
  bool dir_active(BenchDir d) const { return bench_active(rw, d) || (d == dir_read && verify_reads_only()); }
  double dir_elapsed(BenchDir d) const { return d == dir_read && read_back() ? verify_elapsed : elapsed; }
  std::uint64_t dir_runtime_ms(BenchDir d) const { return std::uint64_t(dir_elapsed(d) * 1000 + 0.5); }
  double job_elapsed() const { return elapsed + verify_elapsed; }
  std::uint64_t job_runtime_ms() const { return std::uint64_t(job_elapsed() * 1000 + 0.5); }
};

// fio's null engine (null_engine.cpp): requests complete at once, in full,
// touching nothing; its target is an empty memfd of `size` bytes named for
// errors by `name` (the job's file, which is never made).
std::unique_ptr<fsio::Engine> make_null_engine(unsigned depth);
fsio::Result<fsio::Device> open_null_target(const std::string& name, std::uint64_t size);
// fio's ftruncate engine (ftruncate_engine.cpp) over `fd`: a write request
// at OFFSET is ftruncate(fd, OFFSET), completing in full; a read fails with
// EINVAL; a flush is fsync or fdatasync.
std::unique_ptr<fsio::Engine> make_ftruncate_engine(int fd, unsigned depth);

// Runs the benchmark on an open device (see open_bench_target). Errors carry
// the offset and size of the failed request and the device path. A verify
// mismatch is not an error: it is reported in result.verify.
fsio::Result<BenchResult> run_bench(fsio::Device& device, const BenchOptions& options,
                                    fsio::Progress* progress = nullptr);
// The same on a caller-made engine over device.fd() (options.engine is
// ignored): tests inject short-transferring or failing engines this way.
fsio::Result<BenchResult> run_bench(fsio::Device& device, const BenchOptions& options,
                                    std::unique_ptr<fsio::Engine> engine, fsio::Progress* progress = nullptr);

}  // namespace bench
