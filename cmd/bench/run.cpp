// run_bench: one job on one open device. The data path is the Runner
// (runner.cpp, pass.cpp); this file puts a run together: the range, the
// page cache, the measured pass, end_fsync, the verify read-back and the
// CPU the thread used.
#include "cmd/bench/run.hpp"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include "cmd/bench/runner.hpp"
#include "libfsio/progress.hpp"

namespace bench {

using fsio::Errc;
using fsio::make_error;

namespace detail {

BenchCpu thread_cpu() {
  rusage ru{};
  (void)getrusage(RUSAGE_THREAD, &ru);
  BenchCpu c;
  c.usr = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) / 1e6;
  c.sys = double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) / 1e6;
  c.ctx = std::uint64_t(ru.ru_nvcsw + ru.ru_nivcsw);
  c.majf = std::uint64_t(ru.ru_majflt);
  c.minf = std::uint64_t(ru.ru_minflt);
  return c;
}

BenchCpu cpu_since(const BenchCpu& before) {
  const BenchCpu a = thread_cpu();
  return {a.usr - before.usr, a.sys - before.sys, a.ctx - before.ctx, a.majf - before.majf, a.minf - before.minf};
}

}  // namespace detail

namespace {

// Advisory: a failure only means a warmer cache, never wrong results.
void invalidate_cache(const fsio::Device& dev, const BenchRange& range) {
  (void)posix_fadvise(dev.fd(), off_t(dev.offset() + range.begin), off_t(range.end - range.begin), POSIX_FADV_DONTNEED);
}

// The access pattern hint fio gives (fadvise_hint=1): sequential doubles the
// readahead window of a buffered read, random turns readahead off.
void hint_access(const fsio::Device& dev, const BenchRange& range, BenchRw rw) {
  (void)posix_fadvise(dev.fd(), off_t(dev.offset() + range.begin), off_t(range.end - range.begin),
                      bench_random(rw) ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
}

BenchResult new_result(const fsio::Device& dev, const BenchOptions& o, const fsio::Engine& engine,
                       const BenchRange& range) {
  BenchResult res;
  res.rw = o.rw;
  res.engine = engine.name();
  res.direct = dev.direct();
  res.bs = o.bs;
  res.iodepth = o.iodepth;
  res.range = range;
  res.stat_window_ms = o.stat_window_ms;
  res.log_window_ms = o.log_window_ms;
  // cmdprio: a latency histogram per priority a request may get (fio's clat_prio).
  if (o.priority.per_request()) {
    const PriorityPlan plan(o.priority, bench_reads(o.rw), bench_writes(o.rw));
    for (unsigned d = 0; d < bench_dirs; ++d)
      for (std::uint16_t v : plan.values(d)) res.dir[d].prios.push_back({v, {}});
  }
  // do_verify=0 on a write only stamps: nothing is checked, nothing to report.
  if (o.verify && (o.do_verify || !bench_writes(o.rw))) res.verify = VerifyResult{};
  return res;
}

// Totals over the directions, for callers that do not care which: the
// measured pass's (a write's verify reads are fio's read.*, not these).
void sum_directions(BenchResult& res) {
  res.io_bytes = res.ios = 0;
  res.clat = {};
  for (unsigned k = 0; k < bench_dirs; ++k) {
    if (k == dir_read && res.verify_reads_only()) continue;
    const BenchDirResult& d = res.dir[k];
    res.io_bytes += d.io_bytes;
    res.ios += d.ios;
    res.clat.merge(d.clat);
  }
}

// fio's gtod_reduce=1 (disable_lat, disable_clat, disable_slat and
// disable_bw_measurement together): fio then reports every latency and every
// bw/iops window statistic as 0 with no samples; bytes, runtime and the bw
// and iops from them stay.
void drop_timings(BenchResult& res) {
  for (auto& d : res.dir) {
    d.clat = {};
    d.slat = {};
    d.lat = {};
  }
  res.clat = {};
  res.lat_buckets = {};
  res.stat_samples.clear();
}

}  // namespace

fsio::Result<BenchResult> run_bench(fsio::Device& dev, const BenchOptions& o, fsio::Progress* progress) {
  FSIO_TRY_CTX(validate(o), dev.path());
  if (o.null_engine) return run_bench(dev, o, make_null_engine(o.iodepth), progress);
  if (o.ftruncate_engine) return run_bench(dev, o, make_ftruncate_engine(dev.fd(), o.iodepth), progress);
  auto engine = FSIO_TRY_CTX(fsio::make_engine(o.engine, dev.fd(), o.iodepth), dev.path());
  return run_bench(dev, o, std::move(engine), progress);
}

fsio::Result<BenchResult> run_bench(fsio::Device& dev, const BenchOptions& o, std::unique_ptr<fsio::Engine> engine,
                                    fsio::Progress* progress) {
  const std::uint32_t align = dev.direct() ? std::max<std::uint32_t>(dev.topology().dio_offset_align, 1) : 1;
  auto range = FSIO_TRY_CTX(resolve_range(o, dev.size(), align), dev.path());
  if (bench_writes(o.rw) && !dev.writable())
    return make_error(Errc::invalid_argument, "opened read-only for a write benchmark").at(dev.path());
  // fio's prioclass/prio: ioprio_set for the job's thread (psync's requests
  // carry it; io_uring's carry it in each request too).
  const auto thread_prio = FSIO_TRY_CTX(ThreadPriority::set(o.priority.job_ioprio()), dev.path());
  const BenchCpu cpu0 = detail::thread_cpu();
  BenchResult res = new_result(dev, o, *engine, range);
  // Seen on Linux 6.18 with a 4Kn loop device over an odd-sized file: the
  // page cache reads the partial last sector along with its neighbours and
  // fails the whole folio ("Buffer I/O error ... async page read"), so whole
  // sectors near the end fail buffered although they read fine direct.
  const bool partial_tail = dev.is_block_device() && !dev.direct() && dev.size() % dev.logical_sector_size() != 0;
  if (partial_tail)
    res.note =
        "the last logical sector is partial; buffered reads next to it may fail in the page cache (--direct reads "
        "them)";

  // Drop the range from the page cache first, as fio does (invalidate=1):
  // cached pages make every direct write invalidate them (and io_uring punt
  // it to a worker), and make a buffered read measure memory, not the device.
  if (o.invalidate) invalidate_cache(dev, range);
  if (o.fadvise) hint_access(dev, range, o.rw);

  detail::Runner runner(dev, o, range, std::move(engine), progress);
  const bool writes = bench_writes(o.rw);
  // The measured pass; a read with --verify checks what it reads. A mixed
  // one stamps its writes and checks no read, as fio: what its reads find
  // may never have been written.
  detail::PassSpec measured;
  measured.stamp = o.verify && writes;
  measured.check = o.verify && !bench_writes(o.rw);
  if (auto st = runner.pass(measured, res); !st) {
    fsio::Error e = std::move(st).error();
    if (partial_tail && e.sys_errno == EIO) e.context += " (" + res.note + ")";
    return e;
  }
  sum_directions(res);
  if (o.end_fsync && bench_writes(o.rw) && !res.interrupted) {
    const std::uint64_t t = detail::now_ns();
    FSIO_TRY(dev.flush());
    res.sync_lat.add(detail::now_ns() - t);
  }

  // --verify on a write: read back exactly the blocks the pass wrote.
  // (With verify_backlog the pass has checked its writes itself.)
  if (o.verify && o.do_verify && writes && !res.interrupted && !o.verify_backlog) {
    if (!dev.direct()) {
      // Read back from the device, not from the pages just written.
      FSIO_TRY(dev.flush());
      invalidate_cache(dev, range);
    }
    detail::PassSpec back;
    back.readback = true;
    // A mixed pass is replayed whole (its writes may land anywhere in it);
    // a pure write's first pass over the range holds every block it wrote.
    back.bytes = bench_mixed(o.rw) ? runner.issued_bytes() : std::min(runner.issued_bytes(), range.end - range.begin);
    back.check = true;
    back.measured = false;
    // fio reports a write job's verify reads as its reads (basic-verify.fio:
    // 16,384 writes, then 16,384 reads with their latencies). A mixed job's
    // read-back is left out: its reads are the pass's own.
    back.counted = !bench_reads(o.rw);
    FSIO_TRY(runner.pass(back, res));
  }
  if (res.verify) res.verify->complete = !res.interrupted;
  if (o.gtod_reduce) drop_timings(res);
  res.cpu = detail::cpu_since(cpu0);
  return res;
}

}  // namespace bench
