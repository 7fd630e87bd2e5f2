// fio's latency_target search (fio HOWTO "latency_target", fio 3.33's
// io_u.c lat_target_*, described here in our words): the job starts at one
// request in flight and looks for the largest depth whose requests meet the
// target. Each latency_window it judges the window: when at least
// latency_percentile percent of its requests took no longer than
// latency_target, the depth goes up (doubling until a window has failed,
// then halfway to the smallest depth that failed); otherwise it goes down,
// halfway to the largest depth that met the target, and what is in flight
// drains first. With latency_percentile=100 one slow request is enough to
// go down at once, and at depth 1 it ends the job with ETIMEDOUT. Once a
// window leaves the depth where it was, the search is over: the statistics
// start again for one last window at that depth, and the job ends after it
// (latency_run=1: it never ends, the search goes on).
#pragma once

#include <cstdint>

namespace bench {

struct LatencyTargetOptions {
  std::uint64_t target_ns = 0;  // 0: no target, the full iodepth
  std::uint64_t window_ns = 0;
  double percentile = 100;
  bool run = false;  // latency_run
};

class LatencyTarget {
 public:
  // What the runner must do after a completion or a check.
  enum class Step {
    none,
    drain,      // let what is in flight finish before issuing more (the depth went down)
    final_run,  // drain, then start the statistics again: the last window
    done,       // the last window is over: end the job
    fatal,      // a request over the target at depth 1 (percentile 100): ETIMEDOUT
  };

  LatencyTarget() = default;
  LatencyTarget(const LatencyTargetOptions& o, unsigned iodepth, std::uint64_t t_ns);
  bool active() const { return o_.target_ns > 0; }
  // Requests allowed in flight now.
  unsigned depth() const { return active() ? depth_ : ~0u; }
  // A read or write completed with total latency lat_ns (queued to done).
  Step completed(std::uint64_t lat_ns, std::uint64_t t_ns);
  // After a round of completions: judge the window when it is over.
  Step check(std::uint64_t t_ns);
  // What was in flight has drained (after drain or final_run): the window
  // starts now.
  void drained(std::uint64_t t_ns) { new_window(t_ns); }

 private:
  Step ramp_down(std::uint64_t t_ns);
  Step ramp_up(std::uint64_t t_ns);
  void new_window(std::uint64_t t_ns);

  LatencyTargetOptions o_;
  unsigned iodepth_ = 1;
  unsigned depth_ = 1;
  unsigned low_ = 1, high_ = 1;  // the largest depth known to meet the target, the smallest known to fail
  unsigned stable_ = 0;          // windows in a row one below high_
  bool final_ = false;           // in the last window
  std::uint64_t window_start_ = 0;
  std::uint64_t ios_ = 0, slow_ = 0;  // requests completed in the window, and over the target
};

}  // namespace bench
