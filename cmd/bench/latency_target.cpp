#include "cmd/bench/latency_target.hpp"

#include <algorithm>

namespace bench {

LatencyTarget::LatencyTarget(const LatencyTargetOptions& o, unsigned iodepth, std::uint64_t t_ns)
    : o_(o), iodepth_(std::max(iodepth, 1u)) {
  depth_ = active() ? 1 : iodepth_;
  low_ = 1;
  high_ = iodepth_;
  new_window(t_ns);
}

void LatencyTarget::new_window(std::uint64_t t_ns) {
  window_start_ = t_ns;
  ios_ = slow_ = 0;
}

LatencyTarget::Step LatencyTarget::completed(std::uint64_t lat_ns, std::uint64_t t_ns) {
  if (!active()) return Step::none;
  ++ios_;
  if (lat_ns <= o_.target_ns) return Step::none;
  if (o_.percentile < 100) {
    ++slow_;
    return Step::none;
  }
  return ramp_down(t_ns);  // every request must meet it: this window has failed already
}

LatencyTarget::Step LatencyTarget::check(std::uint64_t t_ns) {
  if (!active() || t_ns - window_start_ < o_.window_ns) return Step::none;
  // A window without a completed request has failed (fio's 0/0 is no success).
  const bool met = ios_ > 0 && double(ios_ - slow_) * 100.0 / double(ios_) >= o_.percentile;
  if (met) return ramp_up(t_ns);
  const Step s = ramp_down(t_ns);
  return s == Step::fatal ? Step::none : s;  // judged on a window, depth 1 just stays
}

LatencyTarget::Step LatencyTarget::ramp_down(std::uint64_t t_ns) {
  if (depth_ == 1) return Step::fatal;
  high_ = depth_;
  if (depth_ == low_) --low_;
  depth_ = (depth_ + low_) / 2;
  stable_ = 0;
  new_window(t_ns);
  return Step::drain;
}

LatencyTarget::Step LatencyTarget::ramp_up(std::uint64_t t_ns) {
  const unsigned was = depth_;
  low_ = depth_;
  // One below the smallest failing depth, the search would stand still; three
  // such windows in a row let it try one more.
  if (depth_ + 1 == high_ && ++stable_ >= 3) {
    ++high_;
    stable_ = 0;
  }
  depth_ = high_ != iodepth_ ? (depth_ + high_) / 2 : depth_ * 2;
  depth_ = std::min(depth_, iodepth_);
  new_window(t_ns);
  if (o_.run || depth_ != was) return Step::none;
  if (final_) return Step::done;
  final_ = true;
  return Step::final_run;
}

}  // namespace bench
