// The runner's pacing: fio's rate (linear or Poisson), rate_min, flow, thinktime,
// and the latency_target search's steps.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "cmd/bench/runner.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace bench::detail {

using fsio::Errc;
using fsio::make_error;

// Only the measured pass is throttled (fio rates the job's own I/O; the
// verify read-back is ddbench's, not a rated phase). The flow group counts
// a request when it lets it go, as fio counts it before it gets the I/O.
bool Runner::held() {
  held_ = held_flow_ = false;
  if (!spec_->measured) return false;
  if (o_.rate.limits() && rate_gate_.ready_at() > now_ns()) {
    held_ = true;
    return true;
  }
  if (o_.flow.group && !o_.flow.group->admit(flow_own_, o_.flow.weight)) {
    held_ = held_flow_ = true;
    return true;
  }
  return false;
}

// Nothing in flight and the next request held: sleep until the rate lets it
// go, or flow_sleep (fio sleeps once its requests are all in, as here), but
// never past the runtime.
void Runner::wait_held() {
  const std::uint64_t t = now_ns();
  std::uint64_t until = held_flow_ ? t + std::uint64_t(o_.flow.sleep_us) * 1000 : rate_gate_.ready_at();
  if (deadline_ns_) until = std::min(until, deadline_ns_);
  if (until > t) {
    nap_until(until);
  } else {
    ::sched_yield();  // flow_sleep=0: try again at once, but let the jobs it waits for run
  }
  check_clock(now_ns());
}

// fio's thinktime (thinktime_blocks=1): the request went out and all in
// flight are done; sleep before the next, never past the runtime.
void Runner::think() {
  std::uint64_t until = now_ns() + o_.thinktime_us * 1000;
  if (deadline_ns_) until = std::min(until, deadline_ns_);
  nap_until(until);
  think_due_ = false;
  check_clock(now_ns());
}

// Sleeps until `until`, in slices short enough that another job's exitall
// or Ctrl-C ends the sleep within 20 ms.
void Runner::nap_until(std::uint64_t until) {
  constexpr std::uint64_t slice = 20000000;
  for (std::uint64_t t = now_ns(); t < until && !terminated() && !fsio::InterruptGuard::requested(); t = now_ns()) {
    const std::uint64_t ns = std::min(until - t, slice);
    const timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
    ::nanosleep(&ts, nullptr);
  }
}

// What fio's latency_target search asks after a completion or a window.
void Runner::on_latency_step(LatencyTarget::Step step) {
  using Step = LatencyTarget::Step;
  switch (step) {
    case Step::none: break;
    case Step::final_run: lat_final_ = true; [[fallthrough]];
    case Step::drain: lat_drain_ = true; break;
    case Step::done: stop_ = true; break;
    case Step::fatal:
      fail(fsio::errno_error(ETIMEDOUT, "a request took over latency_target=" +
                                            std::to_string(o_.latency.target_ns / 1000) + "us at iodepth 1"));
      break;
  }
}

// The latency_target search has settled: what came before is dropped and
// the job is measured afresh, as fio resets its statistics for the last
// window (the runtime counts from here too).
void Runner::restart_stats(std::uint64_t t) {
  for (auto& d : res_->dir) {
    d.io_bytes = d.ios = 0;
    d.clat = {};
    d.slat = {};
    d.lat = {};
    for (auto& p : d.prios) p.clat = {};
  }
  res_->lat_buckets = {};
  res_->depths = {};
  res_->sync_lat = {};
  res_->stat_samples.clear();
  res_->log_samples.clear();
  res_->io_events.clear();
  start_measuring(t);
}

// fio's rate_min (and rate_iops_min): over each rate_cycle, each direction
// the job does must have kept up the floor, else the job ends with an error.
void Runner::check_rate_min(std::uint64_t t) {
  const double secs = double(t - floor_from_) / 1e9;
  const bool active[2] = {bench_reads(o_.rw), bench_writes(o_.rw)};
  for (unsigned d = 0; d < 2; ++d) {
    const BenchDirResult& r = res_->dir[d];
    const double bps = double(r.io_bytes - floor_bytes_[d]) / secs;
    const double iops = double(r.ios - floor_ios_[d]) / secs;
    const char* name = d == dir_read ? "read" : "write";
    if (active[d] && work_->more() && o_.rate.min_bytes[d] && bps < double(o_.rate.min_bytes[d]))
      return fail(make_error(Errc::io, std::string(name) + " rate " + std::to_string(std::uint64_t(bps)) +
                                           " bytes/s over the last " + std::to_string(o_.rate.cycle_ms) +
                                           " ms is below rate_min=" + std::to_string(o_.rate.min_bytes[d])));
    if (active[d] && work_->more() && o_.rate.min_ios[d] && iops < double(o_.rate.min_ios[d]))
      return fail(make_error(Errc::io, std::string(name) + " rate " + std::to_string(std::uint64_t(iops)) +
                                           " IOPS over the last " + std::to_string(o_.rate.cycle_ms) +
                                           " ms is below rate_iops_min=" + std::to_string(o_.rate.min_ios[d])));
    floor_bytes_[d] = r.io_bytes;
    floor_ios_[d] = r.ios;
  }
  floor_from_ = t;
  floor_check_ = t + std::uint64_t(o_.rate.cycle_ms) * 1000000;
}

}  // namespace bench::detail
