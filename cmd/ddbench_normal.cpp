// The normal output, line for line as fio 3.33 prints its own (stat.c
// show_thread_status_normal, show_ddir_status, show_group_stats), followed
// by what only ddbench reports (requests after merging, the end of the
// device, --verify); and fio's terse format, version 3.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "cmd/ddbench_report.hpp"
#include "libfsio/size.hpp"
#include "version.hpp"

namespace fsio::cli {
namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// fio's display_lat: nanoseconds, or usec/msec when the numbers are large.
std::string lat_line(const char* name, const bench::LatencyStats& s) {
  unsigned long long min = s.min(), max = s.max();
  double mean = s.mean(), dev = s.stddev();
  const char* base = "(nsec)";
  if (min > 2000000 && max > 99999999ULL && dev > 1000000.0) {
    min /= 1000000, max /= 1000000, mean /= 1e6, dev /= 1e6;
    base = "(msec)";
  } else if (min > 2000 && max > 99999 && dev > 1000.0) {
    min /= 1000, max /= 1000, mean /= 1e3, dev /= 1e3;
    base = "(usec)";
  }
  return fmt("    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base, num2str(min, 6, false, "").c_str(),
             num2str(max, 6, false, "").c_str(), mean, dev);
}

// fio's show_clat_percentiles: nsec, or usec/msec for large values.
std::string percentiles(const char* name, const bench::LatencyHistogram& h, const std::vector<double>& list) {
  if (h.count() == 0 || list.empty()) return {};
  std::vector<std::uint64_t> v;
  for (double p : list) v.push_back(h.percentile(p));
  const std::uint64_t minv = v.front(), maxv = v.back();
  int scale = 0;
  const char* unit = "nsec";
  if (minv > 2000000 && maxv > 99999999ULL) scale = 2, unit = "msec";
  else if (minv > 2000 && maxv > 99999) scale = 1, unit = "usec";
  std::uint64_t top = maxv;
  for (int i = 0; i < scale; ++i) top /= 1000;
  const int width = std::max(5, int(std::log10(double(std::max<std::uint64_t>(top, 1))) + 1));
  const int per_line = (80 - 7) / (2 + 10 + width);
  std::string out = fmt("    %s percentiles (%s):\n     |", name, unit);
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (j != 0 && j % per_line == 0) out += "     |";
    std::uint64_t x = v[j];
    for (int i = 0; i < scale; ++i) x = (x + 999) / 1000;
    const bool last = j + 1 == v.size();
    out += fmt(" %5.2fth=[%*" PRIu64 "]%c", list[j], width, x, last ? '\n' : ',');
    if (!last && j % per_line == std::size_t(per_line - 1)) out += "\n";
  }
  return out;
}

// fio's per-priority lines (cmdprio), when two or more priorities had
// requests: their clat, and with percentiles theirs, each its share of the
// direction's requests.
int prios_with_requests(const bench::BenchDirResult& r) {
  return int(std::count_if(r.prios.begin(), r.prios.end(), [](const auto& p) { return p.clat.count() > 0; }));
}

std::string prio_lat_lines(const bench::BenchDirResult& r) {
  std::string out;
  if (prios_with_requests(r) < 2) return out;
  for (const auto& p : r.prios)
    if (p.clat.count())
      out += lat_line(fmt("clat prio %u/%u", bench::ioprio_class(p.ioprio), bench::ioprio_level(p.ioprio)).c_str(),
                      p.clat.stats());
  return out;
}

std::string prio_percentiles(const bench::BenchDirResult& r, const std::vector<double>& list) {
  std::string out;
  if (prios_with_requests(r) < 2) return out;
  for (const auto& p : r.prios)
    if (p.clat.count())
      out += percentiles(fmt("clat prio %u/%u (%.2f%% of IOs)", bench::ioprio_class(p.ioprio),
                             bench::ioprio_level(p.ioprio), 100.0 * double(p.clat.count()) / double(r.clat.count()))
                             .c_str(),
                         p.clat, list);
  return out;
}

std::string dir_block(const Report& rep, const ReportJob& job, bench::BenchDir d) {
  const bench::BenchDirResult& r = job.result.dir[d];
  const DirView v = dir_view(rep, job, d);
  if (!v.active || (r.io_bytes == 0 && r.ios == 0) || job.result.no_io) return {};
  const bool i2p = !job.spec || job.spec->kb_base == 1024;
  std::string out =
      fmt("  %s: IOPS=%s, BW=%s (%s)(%s/%" PRIu64 "msec)\n", bench_dir_name(d),
          num2str(std::uint64_t(v.iops), 4, false, "").c_str(), num2str(v.bw_bytes, 4, i2p, "B/s").c_str(),
          num2str(v.bw_bytes, 4, !i2p, "B/s").c_str(), num2str(r.io_bytes, 4, i2p, "B").c_str(), v.runtime);
  if (r.slat.count()) out += lat_line("slat", r.slat);
  if (r.clat.count()) out += lat_line("clat", r.clat.stats());
  if (r.lat.count()) out += lat_line(" lat", r.lat);
  out += prio_lat_lines(r);
  const auto& list = job.spec ? job.spec->percentiles : bench::FioJob{}.percentiles;
  if (!job.spec || job.spec->clat_percentiles) out += percentiles("clat", r.clat, list) + prio_percentiles(r, list);
  if (v.samples) {
    double mn = v.bw_min, mx = v.bw_max, mean = v.bw_mean, dev = v.bw_dev;
    const char* unit = i2p ? "KiB" : "kB";
    if (mean > 1024.0 * 1024.0) mn /= 1024, mx /= 1024, mean /= 1024, dev /= 1024, unit = "MiB";
    out += fmt("   bw (%5s/s): min=%5.0f, max=%5.0f, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%" PRIu64 "\n",
               unit, std::floor(mn), std::floor(mx), v.bw_agg, mean, dev, v.samples);
    out += fmt("   iops        : min=%5.0f, max=%5.0f, avg=%5.02f, stdev=%5.02f, samples=%" PRIu64 "\n",
               std::floor(v.iops_min), std::floor(v.iops_max), v.iops_mean, v.iops_dev, v.samples);
  }
  return out;
}

std::string lat_table(const bench::LatencyBuckets& b, std::uint64_t ios) {
  static const char* const r[] = {"2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000="};
  static const char* const rm[] = {
      "2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000=", "2000=", ">=2000="};
  std::string out;
  const char* units[] = {"nsec", "usec", "msec"};
  const std::size_t first[] = {0, 10, 20}, count[] = {10, 10, 12};
  for (int u = 0; u < 3; ++u) {
    int on_line = 0;
    for (std::size_t i = 0; i < count[u]; ++i) {
      const double pct = ios ? double(b.count[first[u] + i]) * 100.0 / double(ios) : 0;
      if (pct <= 0) continue;
      if (on_line == 0) out += fmt("  lat (%s)   : ", units[u]);
      else out += ", ";
      out += fmt("%s%3.2f%%", u == 2 ? rm[i] : r[i], pct);
      if (++on_line == 5) out += "\n", on_line = 0;
    }
    if (on_line) out += "\n";
  }
  return out;
}

std::string dist(const std::array<std::uint64_t, 7>& c, const char* const* keys) {
  std::uint64_t total = 0;
  for (auto v : c) total += v;
  std::string out;
  for (int i = 0; i < 7; ++i)
    out += fmt("%s%s=%3.1f%%", i ? ", " : "", keys[i], total ? double(c[i]) * 100.0 / double(total) : 0.0);
  return out;
}

std::string ddbench_lines(const ReportJob& job) {
  const bench::BenchResult& r = job.result;
  const auto& s = r.stats;
  std::string out = fmt("  ddbench      : %s, engine=%s, %s, requests=%" PRIu64 " queued/%" PRIu64
                        " submitted, syscalls=%" PRIu64 ", retries=%" PRIu64 ", peak in flight=%u\n",
                        job.target.c_str(), r.engine.c_str(), r.direct ? "direct" : "buffered", s.requests_queued,
                        s.requests_submitted, s.syscalls, s.retries, s.peak_in_flight);
  if (r.eod_truncated)
    out += fmt("  end of device: %" PRIu64 " bytes in a partial last sector cannot be transferred\n", r.eod_truncated);
  if (r.verify)
    out += fmt("  verify       : %s checked, %s\n", format_size(r.verify->bytes_checked).c_str(),
               r.verify->first      ? "MISMATCH"
               : r.verify->complete ? "no mismatch"
                                    : "no mismatch so far, but interrupted: NOT verified");
  return out;
}

// fio's last lines of a job: errors (continue_on_error), the latency
// target, steady state.
std::string job_tail(const ReportJob& job) {
  const bench::BenchResult& r = job.result;
  std::string out;
  if (job.spec && job.spec->bench.errors.given)
    out += fmt("     errors    : total=%" PRIu64 ", first_error=%d/<%s>\n", r.total_err, r.first_error,
               std::strerror(r.first_error));
  const bench::LatencyTargetOptions lt = job.spec ? job.spec->bench.latency : bench::LatencyTargetOptions{};
  out += fmt("     latency   : target=%" PRIu64 ", window=%" PRIu64 ", percentile=%.2f%%, depth=%u\n", lt.target_ns,
             lt.window_ns / 1000, lt.percentile, r.latency_depth ? r.latency_depth : r.iodepth);
  if (const auto& ss = r.steadystate) {
    const bool i2p = !job.spec || job.spec->kb_base == 1024;
    // fio prints the KiB count again in the other base's units (4002KiB/s (4002kB/s)).
    const std::uint64_t alt_bw = ss->bw_mean() / (i2p ? 1024 : 1000) * (i2p ? 1000 : 1024);
    out += fmt("  steadystate  : attained=%s, bw=%s (%s), iops=%s, %s%s=%.3f%s\n", ss->attained ? "yes" : "no",
               num2str(ss->bw_mean(), 4, i2p, "B/s").c_str(), num2str(alt_bw, 4, !i2p, "B/s").c_str(),
               num2str(ss->iops_mean(), 4, false, "").c_str(), ss->options.iops ? "iops" : "bw",
               ss->options.slope ? " slope" : " mean dev", ss->criterion, ss->options.percent ? "%" : "");
  }
  return out;
}

std::string job_block(const Report& rep, const ReportJob& job) {
  static const char* const level_keys[] = {"1", "2", "4", "8", "16", "32", ">=64"};
  static const char* const batch_keys[] = {"0", "4", "8", "16", "32", "64", ">=64"};
  const bench::BenchResult& r = job.result;
  std::string out = fmt("%s: (groupid=%u, jobs=%u): err= 0: pid=%d: %s\n", job.name.c_str(), job.group, job.members,
                        int(::getpid()), fio_time_string(rep.start).c_str());
  if (job.spec && !job.spec->description.empty()) out += "  Description  : [" + job.spec->description + "]\n";
  out += dir_block(rep, job, bench::dir_read) + dir_block(rep, job, bench::dir_write) +
         dir_block(rep, job, bench::dir_trim);
  out += lat_table(r.lat_buckets, r.dir[0].ios + r.dir[1].ios + r.dir[2].ios);
  if (r.sync_lat.count()) {
    out += "  fsync/fdatasync/sync_file_range:\n" + lat_line("sync", r.sync_lat.stats());
    out += percentiles("sync", r.sync_lat, job.spec ? job.spec->percentiles : bench::FioJob{}.percentiles);
  }
  const double run_ms = r.job_elapsed() * 1000;
  out += fmt("  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%" PRIu64 ", majf=%" PRIu64 ", minf=%" PRIu64 "\n",
             run_ms > 0 ? r.cpu.usr * 1e5 / run_ms : 0.0, run_ms > 0 ? r.cpu.sys * 1e5 / run_ms : 0.0, r.cpu.ctx,
             r.cpu.majf, r.cpu.minf);
  out += "  IO depths    : " + dist(r.depths.level, level_keys) + "\n";
  out += "     submit    : " + dist(r.depths.submit, batch_keys) + "\n";
  out += "     complete  : " + dist(r.depths.complete, batch_keys) + "\n";
  out += fmt("     issued rwts: total=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 " short=0,0,0,0 dropped=%" PRIu64
             ",%" PRIu64 ",%" PRIu64 ",0\n",
             r.dir[0].ios, r.dir[1].ios, r.dir[2].ios, r.sync_lat.count(), r.dir[0].dropped, r.dir[1].dropped,
             r.dir[2].dropped);
  return out + job_tail(job) + ddbench_lines(job);
}

std::string group_block(const ReportGroup& g) {
  const bool i2p = g.kb_base == 1024;
  std::string out = fmt("\nRun status group %u (all jobs):\n", g.id);
  const char* names[] = {"   READ", "  WRITE", "   TRIM"};
  for (unsigned d = 0; d < bench::bench_dirs; ++d) {
    if (!g.max_run[d]) continue;
    out += fmt("%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%" PRIu64 "-%" PRIu64 "msec\n", names[d],
               num2str(g.agg[d], 4, i2p, "B/s").c_str(), num2str(g.agg[d], 4, !i2p, "B/s").c_str(),
               num2str(g.min_bw[d], 4, i2p, "B/s").c_str(), num2str(g.max_bw[d], 4, i2p, "B/s").c_str(),
               num2str(g.min_bw[d], 4, !i2p, "B/s").c_str(), num2str(g.max_bw[d], 4, !i2p, "B/s").c_str(),
               num2str(g.io_bytes[d], 4, i2p, "B").c_str(), num2str(g.io_bytes[d], 4, !i2p, "B").c_str(), g.min_run[d],
               g.max_run[d]);
  }
  return out;
}

// Terse v3, one direction (stat.c show_ddir_status_terse): latencies in usec.
std::string terse_dir(const Report& rep, const ReportJob& job, bench::BenchDir d) {
  const bench::BenchDirResult& r = job.result.dir[d];
  const DirView v = dir_view(rep, job, d);
  const std::uint64_t bw = v.runtime ? r.io_bytes * 1000 / v.runtime / 1024 : 0;
  const std::uint64_t iops = v.runtime ? r.ios * 1000 / v.runtime : 0;
  auto lat = [](const bench::LatencyStats& s) {
    return fmt(";%" PRIu64 ";%" PRIu64 ";%f;%f", s.min() / 1000, s.max() / 1000, s.mean() / 1000, s.stddev() / 1000);
  };
  std::string out = fmt(";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64, r.io_bytes >> 10, bw, iops, v.runtime);
  out += lat(r.slat) + lat(r.clat.stats());
  const auto& list = job.spec ? job.spec->percentiles : bench::FioJob{}.percentiles;
  for (std::size_t i = 0; i < 20; ++i) {
    if (i < list.size() && r.clat.count()) out += fmt(";%f%%=%" PRIu64, list[i], r.clat.percentile(list[i]) / 1000);
    else out += ";0%=0";
  }
  out += lat(r.lat);
  if (v.samples)
    out += fmt(";%" PRIu64 ";%" PRIu64 ";%f%%;%f;%f", std::uint64_t(v.bw_min), std::uint64_t(v.bw_max), v.bw_agg,
               v.bw_mean, v.bw_dev);
  else out += ";0;0;0.000000%;0.000000;0.000000";
  return out;
}

}  // namespace

std::string format_normal(const Report& rep) {
  std::string out;
  for (const auto& e : rep.entries) out += job_block(rep, e);
  for (const auto& g : rep.groups) out += group_block(g);
  if (!rep.disks.empty()) {
    out += "\nDisk stats (read/write):\n";
    for (const auto& d : rep.disks)
      out += fmt("  %s: ios=%" PRIu64 "/%" PRIu64 ", merge=%" PRIu64 "/%" PRIu64 ", ticks=%" PRIu64 "/%" PRIu64
                 ", in_queue=%" PRIu64 ", util=%3.2f%%\n",
                 d.name.c_str(), d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.read_ticks, d.write_ticks,
                 d.in_queue, d.util);
  }
  return out;
}

std::string format_terse(const Report& rep) {
  std::string out;
  for (const auto& e : rep.entries) {
    const bench::BenchResult& r = e.result;
    out += fmt("3;ddbench-%s;%s;%u;0", fsio::kVersion, e.name.c_str(), e.group);
    out += terse_dir(rep, e, bench::dir_read) + terse_dir(rep, e, bench::dir_write);
    const double run_ms = r.job_elapsed() * 1000;
    out += fmt(";%f%%;%f%%;%" PRIu64 ";%" PRIu64 ";%" PRIu64, run_ms > 0 ? r.cpu.usr * 1e5 / run_ms : 0.0,
               run_ms > 0 ? r.cpu.sys * 1e5 / run_ms : 0.0, r.cpu.ctx, r.cpu.majf, r.cpu.minf);
    std::uint64_t total = 0;
    for (auto v : r.depths.level) total += v;
    for (auto v : r.depths.level) out += fmt(";%3.1f%%", total ? double(v) * 100.0 / double(total) : 0.0);
    const std::uint64_t ios = r.dir[0].ios + r.dir[1].ios;
    // v3 has no nanosecond table: those requests count as under 2 us.
    std::uint64_t under_1us = 0;
    for (std::size_t i = 0; i < 10; ++i) under_1us += r.lat_buckets.count[i];
    for (std::size_t i = 10; i < 32; ++i) {
      const std::uint64_t c = r.lat_buckets.count[i] + (i == 10 ? under_1us : 0);
      out += fmt(";%3.2f%%", ios ? double(c) * 100.0 / double(ios) : 0.0);
    }
    for (const auto& d : rep.disks)
      out += fmt(";%s;%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%3.2f%%",
                 d.name.c_str(), d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.read_ticks, d.write_ticks,
                 d.in_queue, d.util);
    if (e.spec && !e.spec->description.empty()) out += ";" + e.spec->description;
    out += "\n";
  }
  return out;
}

}  // namespace fsio::cli
