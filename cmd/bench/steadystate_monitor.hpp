// fio's once-a-second steady-state look (its helper thread calling
// steadystate_check), over the jobs of one wave: each job with ss_dur, or
// with group_reporting each reporting group as one, is judged on its IOPS
// and bandwidth of the last second; a job or group that attains steady
// state is ended through its stop flag, and each job gets the report.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "cmd/bench/jobs.hpp"
#include "cmd/bench/steadystate.hpp"

namespace bench {

// fio's rule: the jobs of a reporting group share their steady-state
// options (those without one included). Errc::invalid_argument, with
// `refused` the first job that differs, if not.
fsio::Status check_steadystate_groups(const std::vector<BenchJob>& jobs, std::size_t& refused);

class SteadyStateMonitor {
 public:
  // Jobs [first, end) of `jobs`; gives each one with ss_dur a probe. `stop`
  // has a flag per job, which every job of the run watches.
  SteadyStateMonitor(std::vector<BenchJob>& jobs, std::size_t first, std::size_t end,
                     std::vector<std::atomic<bool>>& stop);
  bool active() const { return !units_.empty(); }
  // Job k has ended (its thread calls this).
  void finished(std::size_t k);
  // Looks once a second until every watched job has ended (run on a thread).
  void run();
  // The report of job k's unit; nullopt for a job without ss_dur.
  std::optional<SteadyStateReport> report(std::size_t k) const;

 private:
  struct Member {
    std::size_t job;
    std::uint64_t prev_bytes = 0, prev_ios = 0;
  };
  struct Unit {
    std::vector<Member> members;
    SteadyState state;
    bool attained = false;
  };
  void look(std::uint64_t elapsed_ns, std::uint64_t since_ms);

  std::vector<std::atomic<bool>>& stop_;
  std::size_t first_;
  std::vector<std::unique_ptr<SteadyStateProbe>> probes_;  // by job - first_
  std::vector<Unit> units_;
};

}  // namespace bench
