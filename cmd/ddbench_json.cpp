// --output-format=json / json+: fio 3.33's layout, field names and types
// (stat.c show_thread_status_json, add_ddir_status_json): bytes, counts and
// ns as integers, rates and percentages as floats. What ddbench adds lives
// in one "ddbench" object per job; what fio has and ddbench leaves out is
// listed, with the reason, in tests/cli/fio_json_omitted.txt.
#include <algorithm>
#include <cinttypes>
#include <optional>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cmd/common.hpp"
#include "cmd/ddbench_report.hpp"
#include "version.hpp"

namespace fsio::cli {
namespace {

using J = nlohmann::ordered_json;

J lat_json(const bench::LatencyStats& s) {
  return J{{"min", s.min()}, {"max", s.max()}, {"mean", s.mean()}, {"stddev", s.stddev()}, {"N", s.count()}};
}

std::string pct_key(double p) {
  char key[32];
  std::snprintf(key, sizeof key, "%f", p);
  return key;
}

J clat_json(const bench::LatencyHistogram& h, const bench::FioJob* spec, bool plus) {
  J j = lat_json(h.stats());
  if (h.count() > 0 && (!spec || spec->clat_percentiles)) {
    J p = J::object();
    for (double pct : spec ? spec->percentiles : bench::FioJob{}.percentiles) p[pct_key(pct)] = h.percentile(pct);
    j["percentile"] = p;
  }
  if (plus && h.count() > 0) {
    J bins = J::object();
    for (unsigned i = 0; i < bench::LatencyHistogram::buckets; ++i)
      if (h.bucket_count(i)) bins[std::to_string(bench::LatencyHistogram::bucket_value(i))] = h.bucket_count(i);
    j["bins"] = bins;
  }
  return j;
}

// fio's "prios": clat per priority value with samples, only when at least
// two have them (stat.c, add_ddir_status_json).
std::optional<J> prios_json(const bench::BenchDirResult& r, const bench::FioJob* spec, bool plus) {
  const auto with = std::count_if(r.prios.begin(), r.prios.end(), [](const auto& p) { return p.clat.count() > 0; });
  if (with < 2) return std::nullopt;
  J a = J::array();
  for (const auto& p : r.prios)
    if (p.clat.count() > 0)
      a.push_back(J{{"prioclass", bench::ioprio_class(p.ioprio)},
                    {"prio", bench::ioprio_level(p.ioprio)},
                    {"clat_ns", clat_json(p.clat, spec, plus)}});
  return a;
}

J dir_json(const Report& rep, const ReportJob& job, bench::BenchDir d, bool plus) {
  const bench::BenchDirResult& r = job.result.dir[d];
  const DirView v = dir_view(rep, job, d);
  J j = J{{"io_bytes", r.io_bytes},
          {"io_kbytes", r.io_bytes >> 10},
          {"bw_bytes", v.bw_bytes},
          {"bw", v.bw_bytes / 1024},
          {"iops", v.iops},
          {"runtime", v.runtime},
          {"total_ios", r.ios},
          {"short_ios", std::uint64_t{0}},
          {"drop_ios", r.dropped},
          {"slat_ns", lat_json(r.slat)},
          {"clat_ns", clat_json(r.clat, job.spec, plus)},
          {"lat_ns", lat_json(r.lat)}};
  if (auto p = prios_json(r, job.spec, plus)) j["prios"] = *p;
  j.update(J{{"bw_min", std::uint64_t(v.bw_min)},
             {"bw_max", std::uint64_t(v.bw_max)},
             {"bw_agg", v.bw_agg},
             {"bw_mean", v.bw_mean},
             {"bw_dev", v.bw_dev},
             {"bw_samples", v.samples},
             {"iops_min", std::uint64_t(v.iops_min)},
             {"iops_max", std::uint64_t(v.iops_max)},
             {"iops_mean", v.iops_mean},
             {"iops_stddev", v.iops_dev},
             {"iops_samples", v.samples}});
  return j;
}

// The empty trim object of a job that does not trim: fio always reports it.
J trim_json() {
  ReportJob none;
  none.result.rw = bench::BenchRw::read;
  bench::BenchDirResult empty;
  J j = J{{"io_bytes", std::uint64_t{0}},
          {"io_kbytes", std::uint64_t{0}},
          {"bw_bytes", std::uint64_t{0}},
          {"bw", std::uint64_t{0}},
          {"iops", 0.0},
          {"runtime", std::uint64_t{0}},
          {"total_ios", std::uint64_t{0}},
          {"short_ios", std::uint64_t{0}},
          {"drop_ios", std::uint64_t{0}},
          {"slat_ns", lat_json(empty.slat)},
          {"clat_ns", lat_json(empty.lat)},
          {"lat_ns", lat_json(empty.lat)}};
  for (const char* k : {"bw_min", "bw_max"}) j[k] = std::uint64_t{0};
  j["bw_agg"] = 0.0;
  j["bw_mean"] = 0.0;
  j["bw_dev"] = 0.0;
  j["bw_samples"] = std::uint64_t{0};
  for (const char* k : {"iops_min", "iops_max"}) j[k] = std::uint64_t{0};
  j["iops_mean"] = 0.0;
  j["iops_stddev"] = 0.0;
  j["iops_samples"] = std::uint64_t{0};
  return j;
}

J table(const std::uint64_t* counts, std::size_t n, const char* const* keys) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += counts[i];
  J j = J::object();
  for (std::size_t i = 0; i < n; ++i) j[keys[i]] = total ? double(counts[i]) * 100.0 / double(total) : 0.0;
  return j;
}

J latency_table(const bench::LatencyBuckets& b, std::uint64_t ios, std::size_t first, std::size_t n,
                const char* const* keys) {
  J j = J::object();
  for (std::size_t i = 0; i < n; ++i) j[keys[i]] = ios ? double(b.count[first + i]) * 100.0 / double(ios) : 0.0;
  return j;
}

J ddbench_json(const ReportJob& job) {
  const bench::BenchResult& r = job.result;
  J j = J{{"target", job.target},
          {"rw", bench::bench_rw_name(r.rw)},
          {"bs", r.bs},
          {"iodepth", r.iodepth},
          {"engine", r.engine},
          {"direct", r.direct},
          {"offset", r.range.begin},
          {"size", r.range.end - r.range.begin},
          {"eod_truncated", r.eod_truncated},
          {"interrupted", r.interrupted},
          {"runtime_capped", r.runtime_capped},
          {"stats", J(cli::to_json(r.stats))}};
  if (!r.note.empty()) j["note"] = r.note;
  if (r.verify) {
    const auto& v = *r.verify;
    j["verify"] = J{{"bytes_checked", v.bytes_checked},
                    {"bad_blocks", v.bad_blocks},
                    {"complete", v.complete},
                    {"ok", r.verify_ok()}};
    if (v.first)
      j["verify"]["first_mismatch"] =
          J{{"offset", v.first->offset}, {"expected", v.first->expected}, {"actual", v.first->actual}};
  }
  return j;
}

// fio's "steadystate" object (stat.c, show_thread_status_json).
J steadystate_json(const bench::SteadyStateReport& s) {
  char criterion[64];
  std::snprintf(criterion, sizeof criterion, "%f%s", double(float(s.criterion)), s.options.percent ? "%" : "");
  return J{{"ss", s.options.name()},
           {"duration", int(s.options.duration_s)},
           {"attained", int(s.attained)},
           {"criterion", criterion},
           {"max_deviation", s.deviation},
           {"slope", s.slope},
           {"data", J{{"bw_mean", s.bw_mean()}, {"iops_mean", s.iops_mean()}, {"iops", s.iops}, {"bw", s.bw}}}};
}

J job_json(const Report& rep, const ReportJob& job, bool plus) {
  static const char* const level_keys[] = {"1", "2", "4", "8", "16", "32", ">=64"};
  static const char* const batch_keys[] = {"0", "4", "8", "16", "32", "64", ">=64"};
  static const char* const lat_keys[] = {"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"};
  static const char* const ms_keys[] = {"2",   "4",   "10",  "20",   "50",   "100",
                                        "250", "500", "750", "1000", "2000", ">=2000"};
  const bench::BenchResult& r = job.result;
  J opts = J::object();
  if (const bench::FioJob* of = job.options_of ? job.options_of : job.spec)
    for (const auto& [k, v] : of->options) opts[k] = v;
  const double run_ms = r.job_elapsed() * 1000;
  const std::uint64_t ios = r.dir[0].ios + r.dir[1].ios + r.dir[2].ios;
  J j = J{{"jobname", job.name},
          {"groupid", job.group},
          {"error", 0},
          {"eta", 0},
          {"elapsed", std::uint64_t(std::ceil(r.job_elapsed()))},
          {"job options", opts},
          {"read", dir_json(rep, job, bench::dir_read, plus)},
          {"write", dir_json(rep, job, bench::dir_write, plus)},
          {"trim", bench::bench_trims(r.rw) ? dir_json(rep, job, bench::dir_trim, plus) : trim_json()},
          {"sync", J{{"total_ios", r.sync_lat.count()}, {"lat_ns", clat_json(r.sync_lat, job.spec, plus)}}},
          {"job_runtime", r.job_runtime_ms()},
          {"usr_cpu", run_ms > 0 ? r.cpu.usr * 1000 * 100 / run_ms : 0.0},
          {"sys_cpu", run_ms > 0 ? r.cpu.sys * 1000 * 100 / run_ms : 0.0},
          {"ctx", r.cpu.ctx},
          {"majf", r.cpu.majf},
          {"minf", r.cpu.minf},
          {"iodepth_level", table(r.depths.level.data(), 7, level_keys)},
          {"iodepth_submit", table(r.depths.submit.data(), 7, batch_keys)},
          {"iodepth_complete", table(r.depths.complete.data(), 7, batch_keys)},
          {"latency_ns", latency_table(r.lat_buckets, ios, 0, 10, lat_keys)},
          {"latency_us", latency_table(r.lat_buckets, ios, 10, 10, lat_keys)},
          {"latency_ms", latency_table(r.lat_buckets, ios, 20, 12, ms_keys)},
          {"latency_depth", r.latency_depth ? r.latency_depth : r.iodepth},
          {"latency_target", job.spec ? job.spec->bench.latency.target_ns : 0},
          {"latency_percentile", job.spec ? job.spec->bench.latency.percentile : 100.0},
          {"latency_window", job.spec ? job.spec->bench.latency.window_ns / 1000 : 0}};
  if (opts.empty()) j.erase("job options");  // fio leaves out an empty one (json_add_job_opts)
  if (job.spec && job.spec->bench.errors.given) {
    j["total_err"] = r.total_err;
    j["first_error"] = r.first_error;
  }
  if (r.steadystate) j["steadystate"] = steadystate_json(*r.steadystate);
  if (job.spec && !job.spec->description.empty()) j["desc"] = job.spec->description;
  j["ddbench"] = ddbench_json(job);
  return j;
}

}  // namespace

std::string format_json(const Report& rep, bool plus) {
  J top = J{{"fio version", std::string("ddbench-") + fsio::kVersion},
            {"timestamp", std::int64_t(rep.start)},
            {"timestamp_ms", rep.start_ms},
            {"time", fio_time_string(rep.start)}};
  if (!command(rep).global_options.empty()) {
    J g = J::object();
    for (const auto& [k, v] : command(rep).global_options) g[k] = v;
    top["global options"] = g;
  }
  J jobs = J::array();
  for (const auto& e : rep.entries) jobs.push_back(job_json(rep, e, plus));
  top["jobs"] = jobs;
  if (!rep.disks.empty()) {
    J disks = J::array();
    for (const auto& d : rep.disks)
      disks.push_back(J{{"name", d.name},
                        {"read_ios", d.read_ios},
                        {"write_ios", d.write_ios},
                        {"read_merges", d.read_merges},
                        {"write_merges", d.write_merges},
                        {"read_ticks", d.read_ticks},
                        {"write_ticks", d.write_ticks},
                        {"in_queue", d.in_queue},
                        {"util", d.util}});
    top["disk_util"] = disks;
  }
  return top.dump(2) + "\n";
}

}  // namespace fsio::cli
