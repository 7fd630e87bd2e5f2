// Internal to run_bench: the data path of one pass over the workload, as
// fio's io_uring engine does it: iodepth buffers, requests kept in flight
// and refilled as completions are reaped, one timestamp per submit and per
// reap, no allocation per request (except the per-I/O log, when asked for).
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <optional>
#include <random>
#include <vector>

#include "cmd/bench/run.hpp"
#include "cmd/bench/throttle.hpp"
#include "cmd/bench/workload.hpp"
#include "libfsio/buffer.hpp"

namespace fsio {
class Progress;
}

namespace bench::detail {

// One buffer and, when it leads an engine request, that request.
struct Slot {
  std::byte* buf = nullptr;
  std::uint64_t offset = 0;  // window offset of this block
  std::uint64_t want = 0;    // bytes of this block that count
  std::uint64_t ask = 0;     // bytes asked of the kernel (a direct read's tail: aligned up)
  BenchDir dir = dir_read;
  std::uint16_t ioprio = 0;  // the request's priority value (priority.hpp)
  unsigned prio_index = 0;   // into PriorityPlan::values(dir)
  // As the lead of an engine request (members[0] is the lead itself):
  iovec* iov = nullptr;  // capacity: max_merge
  unsigned iovcnt = 0;
  unsigned* members = nullptr;
  unsigned nmembers = 0;
  std::uint64_t req_offset = 0;  // window offset still to transfer
  std::uint64_t req_bytes = 0;   // bytes asked of the kernel
  std::uint64_t req_want = 0;    // bytes that must arrive for the request to be complete
  std::uint64_t t_start = 0;     // queued (fio's start_time)
  std::uint64_t t_submit = 0;    // submitted (fio's issue_time)
};

struct PassSpec {
  bool readback = false;    // the verify read-back: replay the write pass as reads
  std::uint64_t bytes = 0;  // readback: bytes to read back
  bool stamp = false;       // write the verify pattern into each buffer
  bool check = false;       // check each read buffer against the pattern
  bool measured = true;     // latencies and stats land in the result
  // Not measured, but its completions count in their direction's bytes,
  // requests and latencies, and its time in BenchResult::verify_elapsed: a
  // pure write's verify read-back, whose reads fio reports as the job's.
  bool counted = false;
};

// Windows of completions per direction (bw/iops samples, windowed logs).
class Sampler {
 public:
  void start(unsigned window_ms, std::uint64_t t0, BenchRw rw, std::vector<BenchSample>* out);
  void add(BenchDir d, std::uint64_t t, std::uint64_t bytes, std::uint64_t ios, std::uint64_t lat, std::uint64_t clat,
           std::uint64_t slat) {
    if (!out_) return;
    if (t >= window_end_) roll(t);
    BenchSample& s = cur_[d];
    s.bytes += bytes;
    s.ios += ios;
    s.lat_sum += double(lat) * double(ios);
    s.clat_sum += double(clat) * double(ios);
    s.slat_sum += double(slat) * double(ios);
  }

 private:
  void roll(std::uint64_t t);
  std::vector<BenchSample>* out_ = nullptr;
  std::uint64_t window_ns_ = 0, t0_ = 0, window_end_ = 0;
  bool active_[bench_dirs] = {false, false, false};
  BenchSample cur_[bench_dirs];
};

class Runner {
 public:
  Runner(fsio::Device& dev, const BenchOptions& o, const BenchRange& range, std::unique_ptr<fsio::Engine> engine,
         fsio::Progress* progress);
  fsio::Status pass(const PassSpec& spec, BenchResult& res);
  std::uint64_t issued_bytes() const { return issued_bytes_; }

 private:
  void begin_pass(const PassSpec& spec, BenchResult& res);
  bool take(const NextIo& io, Slot& s);
  void open_request(unsigned id);
  bool try_merge(unsigned lead, unsigned id);
  fsio::Status queue_lead(unsigned lead, bool retry);
  unsigned fill();  // returns the requests taken
  fsio::Status commit_round();
  void trim_now(unsigned id);
  bool sync_due() const {
    return o_.fsync_every && !spec_->readback && writes_since_sync_ >= o_.fsync_every && work_->more();
  }
  // fio's verify_backlog (backlog.cpp): the writes that completed since the
  // last check, checked once there are verify_backlog of them.
  bool backlog_due() const { return o_.verify_backlog && backlog_.size() >= o_.verify_backlog; }
  void note_backlog(const Slot& s);
  fsio::Status check_backlog();
  void fail(fsio::Error e) {
    if (!failure_) failure_ = std::move(e);
    stop_ = true;
  }
  fsio::Status finish_pass(std::uint64_t syscalls0);
  fsio::Status reap();
  void handle_completion(const fsio::IoCompletion& c, std::uint64_t t);
  void complete(unsigned lead, std::uint64_t t);
  // `n` requests of `bytes` in all completed in direction `dir`: counts, latencies, buckets.
  void count(BenchDir dir, std::uint64_t bytes, std::uint64_t n, std::uint64_t clat, std::uint64_t slat);
  void dump_bad_block(std::span<const std::byte> got, std::uint64_t offset, VerifyResult& v);
  fsio::Status sync_now();
  void check_clock(std::uint64_t t);
  void start_measuring(std::uint64_t t);
  bool held();  // a throttle (rate, flow) holds the next request back
  void wait_held();
  void check_rate_min(std::uint64_t t);
  void restart_range();
  void prepare(Slot& s, std::uint64_t t);
  void give_priority(Slot& s);
  bool go_on_after(BenchDir dir, int err, const std::string& what);
  bool number_ios_reached() const {
    return o_.number_ios && spec_->measured && taken_ios_ >= o_.number_ios * std::max(o_.loops, 1u);
  }
  void think();
  void nap_until(std::uint64_t until);
  unsigned allowed_depth() const { return std::min(depth_, lat_target_.depth()); }
  void on_latency_step(LatencyTarget::Step step);
  void restart_stats(std::uint64_t t);
  bool terminated() const { return o_.terminate && o_.terminate->load(std::memory_order_relaxed); }

  fsio::Device& dev_;
  const BenchOptions& o_;
  BenchRange range_;
  fsio::Progress* progress_;
  std::uint32_t align_ = 1;
  bool merge_ = false;
  unsigned max_merge_ = 1;
  std::uint64_t max_request_ = 0;
  unsigned depth_ = 1;
  fsio::AlignedBuffer arena_;
  std::optional<BufferFill> buffers_;  // fio's compressible or duplicate write data, made per write
  std::vector<Slot> slots_;
  std::vector<iovec> iovs_;
  std::vector<unsigned> member_ids_;
  std::vector<fsio::IoCompletion> comps_;
  std::vector<unsigned> round_;  // leads queued since the last commit
  std::vector<unsigned> free_;
  bool async_ = true;

  // The pass in progress.
  const PassSpec* spec_ = nullptr;
  BenchResult* res_ = nullptr;
  std::optional<Workload> work_;
  fsio::IoStats scratch_;
  fsio::IoStats* stats_ = nullptr;
  unsigned engine_in_flight_ = 0;
  std::uint64_t issued_bytes_ = 0;
  std::uint64_t t0_ = 0, t_last_ = 0, deadline_ns_ = 0, ramp_end_ = 0;
  bool ramping_ = false;
  bool stop_ = false;
  bool exhausted_ = false;      // the workload has nothing more to issue
  bool retry_pending_ = false;  // a short transfer was queued again, not yet committed
  std::uint64_t writes_since_sync_ = 0;
  bool think_due_ = false;                                        // thinktime: sleep once nothing is in flight
  LatencyTarget lat_target_;                                      // fio latency_target's depth search (measured pass)
  bool lat_drain_ = false;                                        // it lowered the depth: drain first
  bool lat_final_ = false;                                        // then restart the statistics for its last window
  std::uint64_t taken_ios_ = 0;                                   // requests taken in the measured pass (number_ios)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> backlog_;  // window offset, bytes
  fsio::AlignedBuffer backlog_buf_;                               // one block, for the check's reads
  std::uint64_t restarts_seen_ = 0;
  std::optional<fsio::Error> failure_;
  Sampler stat_sampler_, log_sampler_;
  // Throttles (fio's rate and flow): the next request waits until hold_until_.
  RateGate rate_gate_;
  bool held_ = false;           // the last fill stopped at a throttle
  bool held_flow_ = false;      // by the flow group (else by the rate)
  std::uint64_t flow_own_ = 0;  // this job's requests, as its flow group counts them
  // rate_min: the window being checked, and what was done at its start.
  std::uint64_t floor_from_ = 0, floor_check_ = 0;
  std::array<std::uint64_t, 2> floor_bytes_{}, floor_ios_{};
  // I/O priorities (fio cmdprio): which a request gets, drawn per request.
  PriorityPlan prio_plan_;
  std::mt19937_64 prio_rng_;

  // Last member, so it is destroyed first: an engine torn down after a
  // failed reap waits for the kernel to finish with arena_'s buffers.
  std::unique_ptr<fsio::Engine> engine_;
};

std::uint64_t now_ns();
// CPU the calling thread has used so far (getrusage RUSAGE_THREAD), and
// since an earlier reading.
BenchCpu thread_cpu();
BenchCpu cpu_since(const BenchCpu& before);

}  // namespace bench::detail
