#include "cmd/bench/throttle.hpp"

#include <algorithm>
#include <cmath>

namespace bench {

// fio's rule: the job's part of the group's requests against its part of
// the group's weight; at the group's first request both parts are 0 / 0
// and the request goes.
bool FlowGroup::admit(std::uint64_t& own, unsigned weight) {
  const std::uint64_t all = count_.load(std::memory_order_relaxed);
  const std::uint64_t total = total_weight_.load(std::memory_order_relaxed);
  if (all > 0 && total > 0 && double(own) / double(all) > double(weight) / double(total)) return false;
  count_.fetch_add(1, std::memory_order_relaxed);
  ++own;
  return true;
}

void RateGate::start(const BenchRate& rate, std::uint64_t bs, std::uint64_t t0_ns, std::uint64_t seed) {
  rate_ = &rate;
  t0_ = ready_ = t0_ns;
  bytes_ = ios_ = {};
  next_arrival_ = {};
  rng_.seed(seed);
  for (unsigned d = 0; d < 2; ++d) {
    // fio's lambda is 10^6 / IOPS us; a byte rate counts in requests of bs.
    iops_[d] = rate.ios[d] ? double(rate.ios[d]) : rate.bytes[d] && bs ? double(rate.bytes[d]) / double(bs) : 0;
  }
}

void RateGate::issued(unsigned dir, std::uint64_t bytes) {
  bytes_[dir] += bytes;
  ++ios_[dir];
  if (rate_->poisson && iops_[dir] > 0) {
    std::exponential_distribution<double> gap(iops_[dir] / 1e9);
    next_arrival_[dir] += gap(rng_);
  }
  update();
}

void RateGate::update() {
  double at = 0;  // ns after t0
  for (unsigned d = 0; d < 2; ++d) {
    if (rate_->poisson) {
      if (iops_[d] > 0) at = std::max(at, next_arrival_[d]);
      continue;
    }
    if (rate_->bytes[d]) at = std::max(at, double(bytes_[d]) * 1e9 / double(rate_->bytes[d]));
    if (rate_->ios[d]) at = std::max(at, double(ios_[d]) * 1e9 / double(rate_->ios[d]));
  }
  ready_ = t0_ + std::uint64_t(at);
}

}  // namespace bench
