// ddbench: a fio-compatible benchmark of block devices and image files.
// The command line and job files are its engine's (cmd/bench/command_line.hpp),
// the runs too (cmd/bench/jobs.hpp); this file wires them to the report, logs
// and plot.
//
// fio's grammar (--name starting a job, options before any --name applying
// to all, job files) cannot be expressed in CLI11, so this tool reads its
// command line with its engine's own parser, which also reads job files: the
// two can never disagree about an option.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "cmd/bench/log.hpp"
#include "cmd/bench/plot.hpp"
#include "cmd/common.hpp"
#include "cmd/ddbench_report.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"
#include "version.hpp"

namespace {

using namespace fsio;
using namespace fsio::cli;
using namespace bench;

// Logs and the plot need windows or every request kept; ask the runs for them.
void ask_for_samples(const DdbenchCommand& cmd, std::vector<BenchJob>& jobs) {
  for (auto& j : jobs) {
    const FioJob& s = *j.spec;
    const bool logs = !s.bw_log.empty() || !s.lat_log.empty() || !s.iops_log.empty();
    if ((logs && s.bench.log_window_ms == 0) || !s.write_iolog.empty()) j.options.log_ios = true;
    // The plot's windows: log_avg_msec, else about 500 points over the runtime.
    if (!cmd.plot.empty() && j.options.log_window_ms == 0)
      j.options.log_window_ms =
          j.options.runtime > 0 ? unsigned(std::clamp(j.options.runtime * 1000 / 500, 10.0, 1000.0)) : 20;
  }
}

Status write_file(const std::string& path, const std::string& text, bool append = false) {
  std::ofstream f(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  f << text;
  f.close();
  if (!f) return errno_error(errno, path + ": cannot write");
  return {};
}

// fio's names: PREFIX_bw.N.log, PREFIX_iops.N.log, PREFIX_{lat,clat,slat}.N.log;
// with per_job_logs=0, PREFIX_bw.log and so on, shared by every job naming
// that prefix (one after the other, in job order).
Status write_logs(const Report& rep) {
  std::set<std::string> written;
  for (const auto& j : rep.jobs) {
    const FioJob& s = *j.spec;
    const bool windowed = s.bench.log_window_ms > 0;
    auto one = [&](const std::string& prefix, BenchLogKind kind) -> Status {
      const std::string number = s.per_job_logs ? "." + std::to_string(j.number) : "";
      const std::string path = prefix + "_" + bench_log_suffix(kind) + number + ".log";
      const bool append = !written.insert(path).second;
      return write_file(path, format_bench_log(j.result, kind, windowed, s.log_offset, s.log_prio), append);
    };
    if (!s.bw_log.empty()) FSIO_TRY(one(s.bw_log, BenchLogKind::bw));
    if (!s.iops_log.empty()) FSIO_TRY(one(s.iops_log, BenchLogKind::iops));
    if (!s.lat_log.empty())
      for (auto kind : {BenchLogKind::lat, BenchLogKind::clat, BenchLogKind::slat}) FSIO_TRY(one(s.lat_log, kind));
    // fio opens it to append ("a"), each job after the other.
    if (!s.write_iolog.empty()) FSIO_TRY(write_file(s.write_iolog, format_fio_iolog(j.result, j.target), true));
  }
  return {};
}

Status write_plot(const Report& rep, const std::string& path) {
  std::vector<PlotJob> series;
  std::string title = "ddbench";
  for (const auto& j : rep.jobs) {
    series.push_back({rep.jobs.size() > 1 ? j.name + "." + std::to_string(j.number) : j.name, &j.result});
    if (series.size() <= 3) title += (series.size() == 1 ? ": " : ", ") + j.name + " on " + j.target;
  }
  if (series.size() > 3) title += ", ...";
  return write_file(path, plot_svg(series, title));
}

// What fio prints before it starts: a line per job, its version, the count.
std::string header(const std::vector<BenchJob>& jobs) {
  std::string out;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const auto& j = jobs[k];
    if (j.clone > 0) continue;
    const auto& o = j.options;
    auto range = [&](unsigned d) {
      std::uint64_t lo = o.bs, hi = o.bs;
      if (o.bsrange[d].max) lo = o.bsrange[d].min, hi = o.bsrange[d].max;
      if (!o.bssplit[d].empty()) {
        lo = ~std::uint64_t{0}, hi = 0;
        for (const auto& s : o.bssplit[d]) lo = std::min(lo, s.bs), hi = std::max(hi, s.bs);
      }
      return num2str(lo, 4, true, "B") + "-" + num2str(hi, 4, true, "B");
    };
    // fio's name for the engines that are not an EngineKind.
    const char* engine = j.spec->file_op != FileOp::none           ? file_op_engine(j.spec->file_op)
                         : j.spec->task.engine != TaskEngine::none ? task_engine_name(j.spec->task.engine)
                         : o.null_engine                           ? "null"
                         : o.ftruncate_engine                      ? "ftruncate"
                         : o.engine == EngineKind::psync           ? "psync"
                         : o.engine == EngineKind::uring           ? "io_uring"
                                                                   : "auto";
    out += j.name + ": (g=" + std::to_string(j.group) + "): rw=" + bench_rw_name(o.rw) + ", bs=(R) " + range(0) +
           ", (W) " + range(1) + ", (T) " + range(2) + ", ioengine=" + engine +
           ", iodepth=" + std::to_string(o.iodepth) + "\n";
    if (j.spec->numjobs > 1) out += "...\n";
  }
  return out + std::string("ddbench-") + fsio::kVersion + "\nStarting " + std::to_string(jobs.size()) +
         (jobs.size() == 1 ? " thread\n\n" : " threads\n\n");
}

// --output and --plot are written over whatever their paths name: never
// over a job file or the storage of a target (they would be truncated).
Status check_outputs_apart(const DdbenchCommand& cmd, const std::vector<BenchJob>& jobs) {
  std::vector<StorageRef> reads;
  for (const auto& f : cmd.job_files) reads.push_back({"the job file", f});
  for (const auto& j : jobs) reads.push_back({"the target of job " + j.name + ",", j.target});
  for (const auto* out : {&cmd.output, &cmd.plot})
    if (!out->empty()) FSIO_TRY(check_apart({"", *out}, reads));
  return {};
}

int finish(const Report& rep) {
  // A mismatch is a failure even when the run was cut short; otherwise an
  // interrupted run exits 130, as if SIGINT had ended it.
  int rc = exit_ok;
  std::uint64_t done = 0;
  bool interrupted = false, verifying = false;
  for (const auto& j : rep.jobs) {
    done += j.result.io_bytes;
    interrupted = interrupted || j.result.interrupted;
    verifying = verifying || j.result.verify.has_value();
  }
  if (interrupted) {
    std::fprintf(stderr, "ddbench: interrupted by signal %d after %s%s\n", InterruptGuard::signal_number(),
                 format_size(done).c_str(), verifying ? "; the verify is incomplete, so nothing was verified" : "");
    rc = exit_interrupted;
  }
  for (const auto& j : rep.jobs)
    if (j.result.verify && j.result.verify->first) {
      std::fprintf(stderr, "ddbench: %s: verify: %s (%" PRIu64 " bad blocks)\n", j.target.c_str(),
                   describe(*j.result.verify->first, j.spec->bench.seed).c_str(), j.result.verify->bad_blocks);
      for (const auto& d : j.result.verify->dumps)
        std::fprintf(stderr, "ddbench: %s: verify: %s data dumped as %s\n", j.target.c_str(),
                     d.size() > 9 && d.compare(d.size() - 9, 9, ".received") == 0 ? "received" : "expected", d.c_str());
      rc = exit_failure;
    }
  return rc;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  auto parsed = parse_ddbench_command(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed) return report("ddbench", parsed.error());
  const DdbenchCommand& cmd = *parsed;
  if (cmd.help) return std::fputs(ddbench_usage().c_str(), stdout) >= 0 ? exit_ok : exit_failure;
  if (cmd.cmdhelp) return std::fputs(ddbench_cmdhelp().c_str(), stdout) >= 0 ? exit_ok : exit_failure;
  if (cmd.version) return std::printf("%s\n", fsio::cli::version_line("ddbench").c_str()) > 0 ? exit_ok : exit_failure;
  if (int rc = announce_environment("ddbench"); rc >= 0) return rc;
  if (!cmd.quiet)
    for (const auto& n : cmd.notes) std::fprintf(stderr, "ddbench: note: %s\n", n.c_str());
  if (cmd.parse_only) return exit_ok;

  auto jobs = expand_fio_jobs(cmd.jobs);
  ask_for_samples(cmd, jobs);
  if (auto st = check_outputs_apart(cmd, jobs); !st) return report("ddbench", st.error());
  FILE* out = cmd.output.empty() ? stdout : std::fopen(cmd.output.c_str(), "w");
  if (!out) return report("ddbench", errno_error(errno, cmd.output + ": cannot write the report"));
  const bool normal = std::find(cmd.formats.begin(), cmd.formats.end(), "normal") != cmd.formats.end();
  if (normal && !cmd.quiet && cmd.fio_mode) std::fputs(header(jobs).c_str(), out), std::fflush(out);

  InterruptGuard interrupt;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  // A time-based or several-job run has no byte total: the bar shows bytes and rate.
  Progress progress("ddbench", 0, !cmd.quiet && cmd.progress && (normal || out != stdout) && stderr_is_terminal());
  auto run = run_bench_jobs(jobs, &progress, cmd.job_files);
  if (!run) return report("ddbench", run.error());
  if (!cmd.quiet) {
    for (const auto& n : run->notes) std::fprintf(stderr, "ddbench: %s\n", n.c_str());
    for (const auto& r : run->results)
      for (const auto& e : r.errors) std::fprintf(stderr, "ddbench: %s\n", e.c_str());
    for (std::size_t k = 0; k < jobs.size(); ++k)
      if (!run->results[k].note.empty())
        std::fprintf(stderr, "ddbench: %s: %s\n", jobs[k].target.c_str(), run->results[k].note.c_str());
  }
  const Report rep = make_report(cmd, jobs, std::move(*run), now.tv_sec, now.tv_sec * 1000LL + now.tv_nsec / 1000000);

  for (const auto& f : cmd.formats) {
    if (f == "normal" && !cmd.quiet) std::fputs(format_normal(rep).c_str(), out);
    if (f == "json" || f == "json+") std::fputs(format_json(rep, f == "json+").c_str(), out);
    if (f == "terse") std::fputs(format_terse(rep).c_str(), out);
  }
  if (out != stdout) std::fclose(out);
  std::fflush(stdout);
  if (auto st = write_logs(rep); !st) return report("ddbench", st.error());
  if (!cmd.plot.empty())
    if (auto st = write_plot(rep, cmd.plot); !st) return report("ddbench", st.error());
  return finish(rep);
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
