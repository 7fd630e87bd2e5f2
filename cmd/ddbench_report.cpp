#include "cmd/ddbench_report.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace fsio::cli {
namespace {

// Aggregates a group's per-direction totals the way fio's show_run_stats does.
ReportGroup group_of(const std::vector<ReportJob>& jobs, unsigned id) {
  ReportGroup g;
  g.id = id;
  bool first = true;
  double longest[bench::bench_dirs] = {};  // seconds
  for (const auto& j : jobs) {
    if (j.group != id) continue;
    if (first && j.spec) g.kb_base = j.spec->kb_base;
    first = false;
    const bench::BenchResult& r = j.result;
    for (unsigned d = 0; d < bench::bench_dirs; ++d) {
      const auto dir = bench::BenchDir(d);
      const std::uint64_t run = r.dir_active(dir) ? r.dir_runtime_ms(dir) : 0;
      if (!run) continue;
      const std::uint64_t io = r.dir[d].io_bytes;
      const auto bw = std::uint64_t(double(io) / r.dir_elapsed(dir));
      g.io_bytes[d] += io;
      if (g.max_run[d] == 0 || bw < g.min_bw[d]) g.min_bw[d] = bw;
      g.max_bw[d] = std::max(g.max_bw[d], bw);
      g.min_run[d] = g.max_run[d] == 0 ? run : std::min(g.min_run[d], run);
      g.max_run[d] = std::max(g.max_run[d], run);
      longest[d] = std::max(longest[d], r.dir_elapsed(dir));
    }
  }
  for (unsigned d = 0; d < bench::bench_dirs; ++d)
    g.agg[d] = longest[d] > 0 ? std::uint64_t(double(g.io_bytes[d]) / longest[d]) : 0;
  return g;
}

// min, max, mean and stddev (n - 1) of a list, as fio's calc_lat.
struct Spread {
  double min = 0, max = 0, mean = 0, dev = 0;
  std::uint64_t n = 0;
  void add(double v) {
    min = n ? std::min(min, v) : v;
    max = n ? std::max(max, v) : v;
    ++n;
    const double delta = v - mean;
    mean += delta / double(n);
    m2_ += delta * (v - mean);
    dev = n > 1 ? std::sqrt(m2_ / double(n - 1)) : 0;
  }

 private:
  double m2_ = 0;
};

}  // namespace

std::string num2str(std::uint64_t num, int maxlen, bool pow2, const char* unit) {
  static const char* const si[] = {"", "k", "M", "G", "T", "P", "E"};
  static const char* const iec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const unsigned thousand = pow2 ? 1024 : 1000;
  const auto digits = [](std::uint64_t v) { return int(std::to_string(v).size()); };
  int post = 0;
  unsigned modulo = UINT_MAX;
  bool carry = false;
  while (post < 7 && digits(num) > maxlen) {
    modulo = unsigned(num % thousand);
    num /= thousand;
    carry = modulo >= thousand / 2;
    ++post;
  }
  if (post >= 7) post = 0;
  const std::string prefix = (pow2 ? iec : si)[post];
  if (modulo == UINT_MAX) return std::to_string(num) + prefix + unit;
  const int room = maxlen - digits(num);
  if (room <= 1) return std::to_string(num + (carry ? 1 : 0)) + prefix + unit;
  char frac[32];
  std::snprintf(frac, sizeof frac, "%.*f", room - 1, double(modulo) / double(thousand));
  if (frac[0] == '1') ++num;  // rounded up to the next whole unit
  return std::to_string(num) + "." + (frac + 2) + prefix + unit;
}

std::string fio_time_string(std::time_t t) {
  char buf[64];
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

const bench::DdbenchCommand& command(const Report& rep) { return *rep.cmd; }

Report make_report(const bench::DdbenchCommand& cmd, const std::vector<bench::BenchJob>& jobs, bench::BenchRun&& run,
                   std::time_t start, long long start_ms) {
  Report rep;
  rep.cmd = &cmd;
  rep.start = start;
  rep.start_ms = start_ms;
  const bool disk_util =
      std::all_of(jobs.begin(), jobs.end(), [](const bench::BenchJob& j) { return !j.spec || j.spec->disk_util; });
  if (disk_util) rep.disks = std::move(run.disks);
  for (std::size_t k = 0; k < jobs.size(); ++k)
    rep.jobs.push_back(
        {jobs[k].name, jobs[k].group, 1, int(k + 1), jobs[k].spec, nullptr, jobs[k].target, std::move(run.results[k])});
  std::vector<unsigned> ids;
  for (const auto& j : rep.jobs)
    if (std::find(ids.begin(), ids.end(), j.group) == ids.end()) ids.push_back(j.group);
  for (unsigned id : ids) {
    rep.groups.push_back(group_of(rep.jobs, id));
    std::vector<const ReportJob*> members;
    for (const auto& j : rep.jobs)
      if (j.group == id) members.push_back(&j);
    const bool merged = std::any_of(members.begin(), members.end(),
                                    [](const ReportJob* j) { return j->spec && j->spec->group_reporting; });
    if (!merged) {
      for (const ReportJob* j : members) rep.entries.push_back(*j);
      continue;
    }
    std::vector<const bench::BenchResult*> results;
    for (const ReportJob* j : members) results.push_back(&j->result);
    ReportJob e = *members.front();
    e.options_of = members.back()->spec;
    e.members = unsigned(members.size());
    e.result = bench::merge_results(results);
    rep.entries.push_back(std::move(e));
  }
  return rep;
}

DirView dir_view(const Report& rep, const ReportJob& job, bench::BenchDir d) {
  const bench::BenchResult& r = job.result;
  DirView v;
  v.active = r.dir_active(d);
  if (!v.active) return v;
  const double elapsed = r.dir_elapsed(d);
  v.runtime = r.dir_runtime_ms(d);
  v.bw_bytes = elapsed > 0 ? std::uint64_t(double(r.dir[d].io_bytes) / elapsed) : 0;
  v.iops = elapsed > 0 ? double(r.dir[d].ios) / elapsed : 0;
  Spread bw, iops;
  for (const auto& s : r.stat_samples)
    if (s.dir == d) {
      bw.add(s.bw_kib(r.stat_window_ms));
      iops.add(s.iops(r.stat_window_ms));
    }
  v.samples = bw.n;
  if (r.no_io) v.runtime = 0, v.bw_bytes = 0, v.iops = 0;
  v.bw_min = bw.min, v.bw_max = bw.max, v.bw_mean = bw.mean, v.bw_dev = bw.dev;
  v.iops_min = iops.min, v.iops_max = iops.max, v.iops_mean = iops.mean, v.iops_dev = iops.dev;
  for (const auto& g : rep.groups)
    if (g.id == job.group && g.agg[d] && bw.n)
      v.bw_agg = std::min(100.0, bw.mean * 100.0 / (double(g.agg[d]) / 1024.0));
  return v;
}

}  // namespace fsio::cli
