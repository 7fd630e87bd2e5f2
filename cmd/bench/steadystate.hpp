// fio's steady-state detection (fio HOWTO "steadystate", ss_dur, ss_ramp;
// fio 3.33 steadystate.c, in our words): once a second, after ss_ramp and one
// more second, a job (or with group_reporting its whole reporting group)
// records its IOPS and bandwidth over the last second. Once ss_dur seconds
// are recorded, each second judges the last ss_dur of them: the slope of a
// least-squares line through them (ss=iops_slope:, bw_slope:) or the largest
// distance of one from their mean (ss=iops:, bw:), as a percentage of the
// mean when the limit ends in '%'. Under the limit, steady state is attained
// and the job (or group) ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace bench {

struct SteadyStateOptions {
  bool iops = true;      // iops or bw
  bool slope = false;    // slope, else mean deviation
  bool percent = false;  // the limit is a percentage of the mean
  double limit = 0;
  unsigned duration_s = 0;  // ss_dur in whole seconds; 0: off
  double ramp_s = 0;        // ss_ramp
  bool enabled() const { return duration_s > 0; }
  // fio's "ss" string in its JSON: "iops:10.000000%", "bw_slope:1.000000%".
  std::string name() const;
};

// Parses ss=/steadystate= ("iops:10%", "bw_slope:0.1%", "iops:200",
// "bw:10m"), the criterion and limit of `o`.
fsio::Status parse_steadystate(std::string_view text, unsigned kb_base, SteadyStateOptions& o);

// What the JSON's "steadystate" object reports.
struct SteadyStateReport {
  SteadyStateOptions options;
  bool attained = false;
  double criterion = 0, slope = 0, deviation = 0;
  std::vector<std::uint64_t> iops, bw;  // the last duration_s seconds, oldest first (zeros where none yet)
  std::uint64_t iops_mean() const;
  std::uint64_t bw_mean() const;
};

// The judgement, fed one second at a time.
class SteadyState {
 public:
  explicit SteadyState(const SteadyStateOptions& o) : report_{o, false, 0, 0, 0, {}, {}} {}
  // One second's IOPS and bytes/s; true once steady state is attained.
  bool add(std::uint64_t iops, std::uint64_t bw);
  const SteadyStateReport& report() const { return report_; }
  SteadyStateReport final_report() const;  // with the window laid out oldest first, zero-padded

 private:
  SteadyStateReport report_;  // iops, bw: the recorded seconds, at most duration_s
};

// A running job's counts, for the once-a-second look (the runner adds to
// them as requests complete; the monitor reads them from another thread).
struct SteadyStateProbe {
  std::atomic<std::uint64_t> bytes{0}, ios{0};
  std::atomic<bool> finished{false};
};

}  // namespace bench
