#include "cmd/bench/steadystate_monitor.hpp"

#include <time.h>

#include <algorithm>

namespace bench {
namespace {

std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

}  // namespace

fsio::Status check_steadystate_groups(const std::vector<BenchJob>& jobs, std::size_t& refused) {
  for (std::size_t k = 1; k < jobs.size(); ++k) {
    const SteadyStateOptions& a = jobs[k - 1].options.steadystate;
    const SteadyStateOptions& b = jobs[k].options.steadystate;
    const bool same = a.duration_s == b.duration_s && a.limit == b.limit && a.ramp_s == b.ramp_s && a.iops == b.iops &&
                      a.slope == b.slope && a.percent == b.percent;
    if (jobs[k].group == jobs[k - 1].group && !same) {
      refused = k;
      return fsio::make_error(fsio::Errc::invalid_argument,
                              "steadystate options must be the same for every job of a reporting group (as fio says)");
    }
  }
  return {};
}

SteadyStateMonitor::SteadyStateMonitor(std::vector<BenchJob>& jobs, std::size_t first, std::size_t end,
                                       std::vector<std::atomic<bool>>& stop)
    : stop_(stop), first_(first) {
  for (std::size_t k = first; k < end; ++k) {
    probes_.push_back(std::make_unique<SteadyStateProbe>());
    const SteadyStateOptions& o = jobs[k].options.steadystate;
    if (!o.enabled()) continue;
    jobs[k].options.ss_probe = probes_.back().get();
    // With group_reporting, the jobs of a reporting group are judged as one
    // (they are next to each other, as fio numbers them).
    const bool joins = jobs[k].spec && jobs[k].spec->group_reporting && !units_.empty() &&
                       jobs[units_.back().members.back().job].group == jobs[k].group;
    if (!joins) units_.push_back(Unit{{}, SteadyState(o), false});
    units_.back().members.push_back({k});
  }
}

void SteadyStateMonitor::finished(std::size_t k) { probes_[k - first_]->finished = true; }

void SteadyStateMonitor::run() {
  const std::uint64_t start = monotonic_ns();
  std::uint64_t last = start, next = start + 1000000000;
  const auto all_done = [&] {
    return std::all_of(probes_.begin(), probes_.end(), [](const auto& p) { return p->finished.load(); });
  };
  while (!all_done()) {
    const std::uint64_t now = monotonic_ns();
    if (now >= next) {
      look(now - start, (now - last) / 1000000);
      last = now;
      next += 1000000000;
      continue;
    }
    const std::uint64_t ns = std::min<std::uint64_t>(next - now, 20000000);
    const timespec ts{0, long(ns)};
    ::nanosleep(&ts, nullptr);
  }
}

// One second: each unit's IOPS and bytes/s, summed over its running
// members (fio: 1000 x the count since the last look / its ms); recorded
// from one second after ss_ramp.
void SteadyStateMonitor::look(std::uint64_t elapsed_ns, std::uint64_t since_ms) {
  for (Unit& u : units_) {
    if (u.attained) continue;
    const SteadyStateOptions& o = u.state.report().options;
    const bool recording = double(elapsed_ns) / 1e9 >= o.ramp_s + 1;
    std::uint64_t iops = 0, bw = 0;
    bool running = false;
    for (Member& m : u.members) {
      const SteadyStateProbe& p = *probes_[m.job - first_];
      if (p.finished) continue;
      running = true;
      const std::uint64_t bytes = p.bytes, ios = p.ios;
      if (recording && since_ms > 0) {
        bw += 1000 * (bytes - m.prev_bytes) / since_ms;
        iops += 1000 * (ios - m.prev_ios) / since_ms;
      }
      m.prev_bytes = bytes;
      m.prev_ios = ios;
    }
    if (!running || !recording || !u.state.add(iops, bw)) continue;
    u.attained = true;
    for (const Member& m : u.members) stop_[m.job].store(true, std::memory_order_relaxed);
  }
}

std::optional<SteadyStateReport> SteadyStateMonitor::report(std::size_t k) const {
  for (const Unit& u : units_)
    for (const Member& m : u.members)
      if (m.job == k) return u.state.final_report();
  return std::nullopt;
}

}  // namespace bench
