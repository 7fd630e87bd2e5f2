// fio's throttles: rate, rate_iops and rate_min cap (and floor) one job's
// pace; flow shares out the I/O of jobs with one flow_id by their weights.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>

namespace bench {

// fio's rate options, per direction ([0] reads, [1] writes; 0: no limit).
struct BenchRate {
  std::array<std::uint64_t, 2> bytes{};      // rate=: bytes per second at most
  std::array<std::uint64_t, 2> ios{};        // rate_iops=: requests per second at most
  std::array<std::uint64_t, 2> min_bytes{};  // rate_min=: the job fails below this many bytes per second
  std::array<std::uint64_t, 2> min_ios{};    // rate_iops_min=
  unsigned cycle_ms = 1000;                  // rate_cycle=: rate_min is checked over windows this long
  bool poisson = false;                      // rate_process=poisson: exponential gaps between requests
  bool limits() const { return bytes[0] || bytes[1] || ios[0] || ios[1]; }
  bool floors() const { return min_bytes[0] || min_bytes[1] || min_ios[0] || min_ios[1]; }
};

// The jobs of one flow_id (fio's flow): each counts its requests and the
// group counts all of theirs; a job whose part of the count is above its
// part of the group's weight waits (flow_sleep) before it tries again.
class FlowGroup {
 public:
  void join(unsigned weight) { total_weight_ += weight; }
  void leave(unsigned weight) { total_weight_ -= weight; }
  // One more request for a job of `weight` that has made `own` so far: true
  // (and both counts one more) when it is within its share, false to wait.
  bool admit(std::uint64_t& own, unsigned weight);

 private:
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> total_weight_{0};
};

// A job's place in a flow group.
struct BenchFlow {
  std::shared_ptr<FlowGroup> group;  // null: the job is in no flow
  unsigned weight = 0;               // fio flow=, 1..1000
  unsigned sleep_us = 0;             // fio flow_sleep=: the wait once over the share (0: try again at once)
};

// When the next request may go under a BenchRate, from what was issued
// since start(): linear as fio's default (the time the bytes and requests
// issued so far take at the rate), or Poisson arrivals at rate_iops.
class RateGate {
 public:
  void start(const BenchRate& rate, std::uint64_t bs, std::uint64_t t0_ns, std::uint64_t seed);
  // The earliest time (ns, on t0's clock) the next request may be issued.
  std::uint64_t ready_at() const { return ready_; }
  void issued(unsigned dir, std::uint64_t bytes);

 private:
  void update();
  const BenchRate* rate_ = nullptr;
  std::uint64_t t0_ = 0, ready_ = 0;
  std::array<std::uint64_t, 2> bytes_{}, ios_{};
  std::array<double, 2> next_arrival_{};  // poisson: ns after t0
  std::array<double, 2> iops_{};          // poisson: the rate in requests per second
  std::mt19937_64 rng_;
};

}  // namespace bench
