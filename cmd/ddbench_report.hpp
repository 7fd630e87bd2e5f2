// ddbench's report, laid out as fio lays out its own: per job (or per group
// with group_reporting), per direction, with each group's totals. The three
// formats (normal, JSON, terse) are views of this one model, so they cannot
// disagree.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "cmd/bench/command_line.hpp"
#include "cmd/bench/jobs.hpp"

namespace fsio::cli {

// One job as fio prints it: a job, or a whole group with group_reporting.
struct ReportJob {
  std::string name;
  unsigned group = 0;
  unsigned members = 1;  // jobs summed into it
  int number = 1;        // fio's job number (1-based), for log file names
  const bench::FioJob* spec = nullptr;
  // Whose "job options" fio reports: the job's own; for a group_reporting
  // entry the group's last job's (fio names the entry after the first).
  const bench::FioJob* options_of = nullptr;
  std::string target;
  bench::BenchResult result;
};

struct ReportGroup {
  unsigned id = 0;
  unsigned kb_base = 1024;
  // Per direction: bytes, the group's bandwidth (bytes over the longest
  // runtime), the slowest and fastest job's, and the runtimes' range in ms.
  std::uint64_t io_bytes[bench::bench_dirs] = {};
  std::uint64_t agg[bench::bench_dirs] = {}, min_bw[bench::bench_dirs] = {}, max_bw[bench::bench_dirs] = {};
  std::uint64_t min_run[bench::bench_dirs] = {}, max_run[bench::bench_dirs] = {};
};

struct Report {
  const bench::DdbenchCommand* cmd = nullptr;
  std::vector<ReportJob> jobs;     // every job, for logs and the plot
  std::vector<ReportJob> entries;  // what is printed: jobs, or groups merged
  std::vector<ReportGroup> groups;
  std::vector<bench::DiskUtil> disks;
  std::time_t start = 0;
  long long start_ms = 0;
};

Report make_report(const bench::DdbenchCommand& cmd, const std::vector<bench::BenchJob>& jobs, bench::BenchRun&& run,
                   std::time_t start, long long start_ms);

// What fio shows of one direction (stat.c show_ddir_status, json).
struct DirView {
  bool active = false;        // the job does this direction
  std::uint64_t runtime = 0;  // ms; 0 when not active
  std::uint64_t bw_bytes = 0;
  double iops = 0;
  // Bandwidth (KiB/s) and IOPS over the stat windows.
  double bw_min = 0, bw_max = 0, bw_mean = 0, bw_dev = 0, bw_agg = 0;
  double iops_min = 0, iops_max = 0, iops_mean = 0, iops_dev = 0;
  std::uint64_t samples = 0;
};
DirView dir_view(const Report& rep, const ReportJob& job, bench::BenchDir d);

// fio's num2str (lib/num2str.c): at most `maxlen` digits, dividing by 1000
// or 1024 into k/M/G... or Ki/Mi/Gi..., with decimals to fill the room:
// 8192 KiB, 16.0MiB, 229MiB/s, 58.5k.
std::string num2str(std::uint64_t num, int maxlen, bool pow2, const char* unit);

const bench::DdbenchCommand& command(const Report& rep);
std::string fio_time_string(std::time_t t);  // "Tue Dec  1 00:34:05 2026"

std::string format_normal(const Report& rep);
std::string format_terse(const Report& rep);
std::string format_json(const Report& rep, bool plus);

}  // namespace fsio::cli
