// The loop of fio's engines that move no data (task_engines.hpp): fio's
// do_io with a FIO_SYNCIO engine at iodepth 1, and its thinktime after
// every completed request (thinktime_blocks=1, the engines' init sets it).
#include "cmd/bench/task_engines.hpp"

#include <time.h>

#include "cmd/bench/fio_option_values.hpp"
#include "cmd/bench/runner.hpp"
#include "libfsio/progress.hpp"

namespace bench {

using fsio::Errc;
using fsio::make_error;

const char* task_engine_name(TaskEngine e) {
  switch (e) {
    case TaskEngine::cpuio: return "cpuio";
    case TaskEngine::exec: return "exec";
    case TaskEngine::net: return "net";
    case TaskEngine::none: break;
  }
  return "none";
}

namespace {

void sleep_us(std::uint64_t us) {
  timespec ts{time_t(us / 1000000), long(us % 1000000) * 1000};
  while (::nanosleep(&ts, &ts) != 0 && !fsio::InterruptGuard::requested()) {
  }
}

// One completed request in the job's direction, as fio counts a FIO_NOIO
// engine's: a latency sample, no bytes.
void count_request(BenchResult& res, BenchDir d, const TaskStep& step, std::uint64_t ns, detail::Sampler& sampler,
                   std::uint64_t t) {
  BenchDirResult& out = res.dir[d];
  out.clat.add(ns);
  out.lat.add(ns);
  ++out.ios;
  out.io_bytes += step.bytes;
  out.dropped += step.dropped;
  res.lat_buckets.add(ns);
  res.depths.add_level(1);
  res.depths.add_submit(1);
  res.depths.add_complete(1);
  sampler.add(d, t, step.bytes, 1, ns, ns, 0);
}

}  // namespace

fsio::Status check_task_job(const TaskJob& job, BenchRw rw) {
  if (job.cpu_line && job.engine != TaskEngine::cpuio) return detail::bad(*job.cpu_line, "an option of ioengine=cpuio");
  if (job.exec_line && job.engine != TaskEngine::exec) return detail::bad(*job.exec_line, "an option of ioengine=exec");
  if (job.net_line && job.engine != TaskEngine::net) return detail::bad(*job.net_line, "an option of ioengine=net");
  if (job.engine == TaskEngine::none) return {};
  if (bench_mixed(rw) || bench_trims(rw))
    return make_error(Errc::invalid_argument, std::string("ioengine=") + task_engine_name(job.engine) +
                                                  " with rw=" + bench_rw_name(rw) +
                                                  ": ddbench counts its requests in one direction (read or write)");
  if (job.engine == TaskEngine::net) return check_net_job(job.net, rw);
  // fio's init: "cpu thread needs rate (cpuload=)", "no program is defined".
  if (job.engine == TaskEngine::cpuio && job.cpu.load == 0)
    return make_error(Errc::invalid_argument, "ioengine=cpuio needs cpuload= (1 to 100), as in fio");
  if (job.engine == TaskEngine::exec && job.exec.program.empty())
    return make_error(Errc::invalid_argument, "ioengine=exec needs program=, as in fio");
  return {};
}

fsio::Result<BenchResult> run_task(const TaskJob& job, const TaskRun& run) {
  if (job.engine == TaskEngine::cpuio) return run_cpuio(job.cpu, run);
  if (job.engine == TaskEngine::net) return run_net(job.net, run);
  return run_exec(job.exec, run);
}

fsio::Result<BenchResult> run_task_loop(const TaskRun& run, const char* engine, bool moves_data,
                                        const TaskRequest& request) {
  BenchResult res;
  res.rw = run.rw;
  res.engine = engine;
  res.bs = run.bs;
  res.iodepth = 1;
  res.no_io = !moves_data;
  res.stat_window_ms = run.stat_window_ms;
  const BenchDir d = bench_reads(run.rw) ? dir_read : dir_write;
  const BenchCpu cpu0 = detail::thread_cpu();
  const std::uint64_t t0 = detail::now_ns();
  const std::uint64_t runtime_ns = std::uint64_t(run.runtime * 1e9);
  detail::Sampler sampler;
  sampler.start(run.stat_window_ms, t0, run.rw, &res.stat_samples);
  std::uint64_t t = t0;
  // fio checks the runtime before each request, and sleeps after each.
  while ((runtime_ns == 0 || t - t0 < runtime_ns) && (run.size == 0 || res.dir[d].io_bytes < run.size)) {
    if (fsio::InterruptGuard::requested()) {
      res.interrupted = true;
      break;
    }
    const std::uint64_t start = detail::now_ns();
    const std::optional<TaskStep> step = FSIO_TRY(request(start - t0));
    if (!step) break;
    t = detail::now_ns();
    count_request(res, d, *step, t - start, sampler, t);
    if (step->think_us) sleep_us(step->think_us);
    t = detail::now_ns();
  }
  res.runtime_capped = !res.interrupted && runtime_ns && t - t0 >= runtime_ns;
  res.elapsed = double(t - t0) / 1e9;
  res.ios = res.dir[d].ios;
  res.io_bytes = res.dir[d].io_bytes;
  res.clat = res.dir[d].clat;
  res.stats.elapsed_seconds = res.elapsed;
  res.cpu = detail::cpu_since(cpu0);
  return res;
}

}  // namespace bench
