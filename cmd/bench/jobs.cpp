#include "cmd/bench/jobs.hpp"
#include "cmd/bench/steadystate_monitor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "cmd/bench/pattern.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/created_file.hpp"
#include "libfsio/progress.hpp"

namespace bench {
namespace {

using fsio::Errc;
using fsio::errno_error;
using fsio::make_error;

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// A missing target is made the way fio makes it: a file of size= bytes (and
// offset= before it), but never under /dev, where a typo for a device name
// would otherwise become a file on devtmpfs.
// An existing regular file shorter than offset= + size= is extended to it, as
// fio extends it before the job starts (fio unlinks and remakes it; ddbench
// keeps what the file holds and only grows it).
fsio::Status choose_create_size(BenchJob& job, std::vector<std::string>& notes) {
  if (job.options.create_size) return {};
  const FioJob& spec = *job.spec;
  const bool sized = !spec.size.is_percent() && spec.size.bytes > 0 && !spec.offset.is_percent();
  const std::uint64_t end = spec.offset.bytes + spec.offset_increment * job.clone + spec.size.bytes;
  struct stat st {};
  if (::stat(job.target.c_str(), &st) == 0) {
    if (spec.extend_short_file && S_ISREG(st.st_mode) && sized && !spec.filesize && std::uint64_t(st.st_size) < end) {
      job.options.create_size = end;
      notes.push_back(job.target + ": extended from " + std::to_string(st.st_size) + " to " + std::to_string(end) +
                      " bytes (offset + size), as fio extends a file too short for the job");
    }
    return {};
  }
  if (job.target.rfind("/dev/", 0) == 0)
    return make_error(Errc::not_found, job.target + ": no such device (ddbench makes no files under /dev)");
  if (!spec.allow_file_create)
    return make_error(Errc::not_found, job.target + ": no such file, and allow_file_create=0 says not to make it");
  if (spec.filesize) {  // fio filesize: the file's own size, whatever size= says
    job.options.create_size = spec.filesize;
    return {};
  }
  if (!sized)
    return make_error(Errc::not_found, job.target + ": no such file; give size= in bytes to have it made, as fio does");
  job.options.create_size = end;
  return {};
}

// ioengine=null makes no file: the range is size= bytes (after offset=) of nothing.
fsio::Result<fsio::Device> open_null_job(const BenchJob& job) {
  const FioJob& spec = *job.spec;
  if (spec.filesize) return open_null_target(job.target, spec.filesize);
  if (spec.size.is_percent() || spec.size.bytes == 0 || spec.offset.is_percent())
    return make_error(Errc::invalid_argument,
                      "job " + job.name + ": ioengine=null needs size= (or filesize=) in bytes");
  return open_null_target(job.target, spec.offset.bytes + spec.offset_increment * job.clone + spec.size.bytes);
}

// A file engine's job (file_ops.hpp): its files as fio names them, laid
// out where the engine needs them. Its device is an empty stand-in, never
// read or written, so the rest of the run treats it as any other job.
fsio::Result<fsio::Device> open_file_op_job(BenchJob& job) {
  const FioJob& spec = *job.spec;
  FileOpJob f;
  f.op = spec.file_op;
  f.rw = job.options.rw;
  f.bs = job.options.min_bs();
  if (!spec.filename.empty() && spec.nrfiles > 1)
    return make_error(Errc::invalid_argument, "job " + job.name + ": nrfiles with filename= is not supported (" +
                                                  file_op_engine(f.op) + " works on fio's JOB.N.I names)");
  if (!spec.filename.empty()) f.files.push_back(spec.filename);
  const std::string dir = spec.directory.empty() ? "" : spec.directory + "/";
  for (unsigned i = 0; spec.filename.empty() && i < spec.nrfiles; ++i)
    f.files.push_back(dir + job.name + "." + std::to_string(job.clone) + "." + std::to_string(i));
  if (spec.filesize) f.file_bytes = spec.filesize;
  else if (!spec.size.is_percent() && spec.size.bytes) f.file_bytes = spec.size.bytes / spec.nrfiles;
  else
    return make_error(Errc::invalid_argument,
                      "job " + job.name + ": ioengine=" + file_op_engine(f.op) + " needs filesize= or size= in bytes");
  FSIO_TRY(lay_out_file_op_files(f, spec.create_on_open));
  job.file_ops = std::move(f);
  return open_null_target(job.target, 4096);
}

fsio::Result<fsio::Device> open_job(BenchJob& job, std::set<std::string>& claimed, std::vector<std::string>& notes) {
  if (job.spec && job.spec->file_op != FileOp::none) return open_file_op_job(job);
  // cpuio and exec have no target: an empty stand-in, never read or written.
  if (job.spec && job.spec->task.engine != TaskEngine::none) return open_null_target(job.target, 4096);
  BenchOptions& o = job.options;
  if (!o.null_engine) FSIO_TRY(choose_create_size(job, notes));
  // O_EXCL claims a block device for this process; a second job on the same
  // device must not ask again (the kernel would say EBUSY to ourselves).
  if (bench_writes(o.rw)) o.exclusive = claimed.insert(canonical(job.target)).second;
  auto dev = o.null_engine ? FSIO_TRY(open_null_job(job)) : FSIO_TRY(open_bench_target(job.target, o));
  const FioJob& spec = *job.spec;
  const std::uint64_t granule = o.min_bs();
  o.offset = spec.offset.resolve(dev.size(), granule) + spec.offset_increment * job.clone;
  o.size = spec.size.resolve(dev.size(), granule);
  o.io_size = spec.io_size.resolve(dev.size(), granule);
  if (spec.filesize) {
    // fio 3.33 with filesize: the range is the file; size= caps the bytes
    // moved at most at the file (io_size= goes over it again).
    const std::uint64_t file = std::min(spec.filesize, dev.size());
    const std::uint64_t range = o.offset < file ? file - o.offset : 0;
    if (o.io_size == 0 && o.size) o.io_size = std::min(o.size, range);
    o.size = range;
    return dev;
  }
  // A size past the end of a file this run made for it is the file itself.
  if (dev.created() && o.offset + o.size > dev.size()) o.size = 0;
  return dev;
}

// fio lays out a file it made for a read job ("Laying out IO file"), so the
// reads find data, not holes. Through the page cache, then dropped from it.
fsio::Status lay_out(const std::string& path, std::uint64_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, path + ": lay out the file");
  fsio::AlignedBuffer buf(1u << 20, 4096);
  fsio::Status st;
  for (std::uint64_t off = 0; off < size && st; off += buf.size()) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(buf.size(), size - off));
    stamp_pattern({buf.data(), n}, off, 0x6c61796f7574);  // "layout"
    if (::pwrite(fd, buf.data(), n, off_t(off)) != ssize_t(n)) st = errno_error(errno, path + ": lay out the file");
  }
  if (st && ::fdatasync(fd) != 0) st = errno_error(errno, path + ": lay out the file");
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return st;
}

// ---- the disks' own counters ------------------------------------------------

std::optional<std::string> disk_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  const dev_t d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  const std::string link = "/sys/dev/block/" + std::to_string(major(d)) + ":" + std::to_string(minor(d));
  const std::string dir = canonical(link);
  if (dir == link) return std::nullopt;  // not a block device (tmpfs, overlay)
  std::string name = dir.substr(dir.rfind('/') + 1);
  if (::access((dir + "/partition").c_str(), F_OK) == 0) {  // a partition: its disk
    const std::string parent = dir.substr(0, dir.rfind('/'));
    name = parent.substr(parent.rfind('/') + 1);
  }
  return name;
}

struct DiskStat {
  std::uint64_t f[11] = {};
};

std::optional<DiskStat> read_disk_stat(const std::string& name) {
  std::ifstream in("/sys/block/" + name + "/stat");
  DiskStat s;
  for (auto& v : s.f)
    if (!(in >> v)) return std::nullopt;
  return s;
}

std::vector<DiskUtil> disk_delta(const std::vector<std::string>& names, const std::vector<DiskStat>& before,
                                 double elapsed_ms) {
  std::vector<DiskUtil> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto after = read_disk_stat(names[i]);
    if (!after) continue;
    const auto d = [&](int k) { return after->f[k] - before[i].f[k]; };
    // Documentation/block/stat.rst: 0 read I/Os, 1 read merges, 3 read ticks,
    // 4 write I/Os, 5 write merges, 7 write ticks, 9 io_ticks, 10 time_in_queue.
    DiskUtil u{names[i], d(0), d(4), d(1), d(5), d(3), d(7), d(10), 0};
    u.util = elapsed_ms > 0 ? std::min(100.0, double(d(9)) * 100.0 / elapsed_ms) : 0;
    out.push_back(u);
  }
  return out;
}

std::string job_label(const BenchJob& job) { return "job " + job.name + " (" + std::to_string(job.clone) + ")"; }

// See run_bench_jobs: what a writing job's target may not share. Each other
// target is asked about once, however many jobs name it.
fsio::Status check_jobs_apart(const std::vector<BenchJob>& jobs, const std::vector<std::string>& job_files,
                              std::size_t& failed) {
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (!bench_writes(jobs[k].options.rw)) continue;
    std::vector<fsio::StorageRef> reads;
    for (const auto& f : job_files) reads.push_back({"the job file", f});
    std::set<std::tuple<std::string, std::uint64_t, std::uint64_t>> seen;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (i == k) continue;
      fsio::StorageRef r = job_storage(jobs[i], "the target of " + job_label(jobs[i]) + ",");
      if (seen.insert({r.name, r.begin, r.end}).second) reads.push_back(std::move(r));
    }
    failed = k;
    FSIO_TRY(fsio::check_apart(job_storage(jobs[k], ""), reads));
  }
  return {};
}

fsio::Error in_job(const BenchJob& job, bool several, fsio::Error e) {
  if (several) e.context = "job " + job.name + " (" + std::to_string(job.clone) + "): " + e.context;
  return e;
}

// Opens every job's target in order (open_job), and lays out a file made for
// a read job. On a failure, `failed` is the job's index.
fsio::Status open_targets(std::vector<BenchJob>& jobs, std::vector<fsio::Device>& devs, std::vector<std::string>& notes,
                          std::size_t& failed) {
  std::set<std::string> claimed;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    BenchJob& job = jobs[k];
    failed = k;
    auto dev = FSIO_TRY(open_job(job, claimed, notes));
    if (!dev.direct_fallback().empty()) notes.push_back(dev.direct_fallback());
    devs.push_back(std::move(dev));
    if (devs.back().created() && bench_reads(job.options.rw)) FSIO_TRY(lay_out(job.target, devs.back().size()));
  }
  return {};
}

// The disks under the targets, each once, and their counters before the run.
struct DiskCounters {
  std::vector<std::string> names;
  std::vector<DiskStat> before;
};

// The disk a job works on: its target's, or for a file engine the disk
// under its files' directory (fio reports none for filecreate, which is
// FIO_DISKLESSIO).
std::optional<std::string> job_disk(const BenchJob& job, const fsio::Device& dev) {
  if (!job.file_ops) return disk_of(dev.fd());
  if (job.file_ops->op == FileOp::create || job.file_ops->files.empty()) return std::nullopt;
  const std::string& f = job.file_ops->files[0];
  const auto slash = f.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : f.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto name = disk_of(fd);
  ::close(fd);
  return name;
}

DiskCounters read_disks_before(const std::vector<BenchJob>& jobs, const std::vector<fsio::Device>& devs) {
  DiskCounters c;
  for (std::size_t k = 0; k < devs.size(); ++k)
    if (auto name = job_disk(jobs[k], devs[k]);
        name && std::find(c.names.begin(), c.names.end(), *name) == c.names.end())
      c.names.push_back(*name);
  for (const auto& n : c.names) c.before.push_back(read_disk_stat(n).value_or(DiskStat{}));
  return c;
}

// fio's startdelay: the job waits this long after its wave starts; Ctrl-C
// ends the wait (the job then runs, and stops at once).
void delay_start(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end && !fsio::InterruptGuard::requested())
    std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(end - std::chrono::steady_clock::now(),
                                                                        std::chrono::milliseconds(100)));
}

// One job; a job that has ended leaves its flow group (fio's flow_exit_job),
// so the others are no longer held to its share.
fsio::Result<BenchResult> run_job(fsio::Device& dev, const BenchJob& job, fsio::Progress* progress) {
  if (job.spec && job.spec->startdelay > 0) delay_start(job.spec->startdelay);
  if (job.file_ops) return run_file_ops(*job.file_ops);
  const BenchOptions& o = job.options;
  if (job.spec && job.spec->task.engine != TaskEngine::none)
    return run_task(job.spec->task, {.name = job.name,
                                     .rw = o.rw,
                                     .bs = o.bs,
                                     .runtime = o.runtime,
                                     .size = job.spec->size.is_percent() ? 0 : job.spec->size.bytes,
                                     .stat_window_ms = o.stat_window_ms,
                                     .clone = job.clone});
  auto r = run_bench(dev, o, progress);
  if (o.flow.group) o.flow.group->leave(o.flow.weight);
  return r;
}

// fio's exitall (fio_terminate_threads): job k has ended; tell the jobs its
// exit_what names to end too: its reporting group, the jobs running (its
// wave, [first, end)), or every job, those of later waves included.
void end_others(const std::vector<BenchJob>& jobs, std::size_t k, std::size_t first, std::size_t end,
                std::vector<std::atomic<bool>>& stop) {
  const ExitWhat what = jobs[k].spec ? jobs[k].spec->exit_what : ExitWhat::group;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const bool named = what == ExitWhat::all || (what == ExitWhat::stonewall && i >= first && i < end) ||
                       (what == ExitWhat::group && jobs[i].group == jobs[k].group);
    if (named) stop[i].store(true, std::memory_order_relaxed);
  }
}

// The jobs wave by wave: a wave is a job and the ones after it up to the next
// stonewall, each on a thread of its own when there are several. After a
// failed wave, `failed` is the index of its first failed job and that job's
// error is returned; after Ctrl-C no further wave starts.
fsio::Status run_waves(std::vector<BenchJob>& jobs, std::vector<fsio::Device>& devs, fsio::Progress* progress,
                       std::vector<std::optional<fsio::Result<BenchResult>>>& out, std::size_t& failed) {
  // A flag per job that ends it early: exitall in any job (fio's global
  // exitall_on_terminate) or a steady state reached.
  std::vector<std::atomic<bool>> stop(jobs.size());
  const bool exitall =
      std::any_of(jobs.begin(), jobs.end(), [](const BenchJob& j) { return j.spec && j.spec->exitall; });
  for (std::size_t k = 0; k < jobs.size(); ++k) jobs[k].options.terminate = &stop[k];
  // The flags and the probes live in here: no job keeps a pointer to them after.
  struct Unhook {
    std::vector<BenchJob>& jobs;
    ~Unhook() {
      for (auto& j : jobs) j.options.terminate = nullptr, j.options.ss_probe = nullptr;
    }
  } unhook{jobs};
  for (std::size_t first = 0; first < jobs.size();) {
    std::size_t end = first + 1;
    while (end < jobs.size() && !jobs[end].stonewall) ++end;
    if (first > 0 && fsio::InterruptGuard::requested()) break;  // not the next wave after Ctrl-C
    SteadyStateMonitor steady(jobs, first, end, stop);
    const auto run_one = [&, first, end](std::size_t k) {
      out[k] = run_job(devs[k], jobs[k], progress);
      steady.finished(k);
      if (exitall) end_others(jobs, k, first, end, stop);
    };
    std::vector<std::thread> threads;
    if (steady.active()) threads.emplace_back([&] { steady.run(); });
    if (end - first == 1 && !steady.active()) run_one(first);  // one job on this thread, as before
    else
      for (std::size_t k = first; k < end; ++k) threads.emplace_back(run_one, k);
    for (auto& t : threads) t.join();
    for (std::size_t k = first; k < end; ++k)
      if (*out[k] && steady.active()) (*out[k])->steadystate = steady.report(k);
    for (std::size_t k = first; k < end; ++k)
      if (!*out[k]) {
        failed = k;
        return std::move(*out[k]).error();
      }
    first = end;
  }
  return {};
}

// One result per job, in order; a job of a wave that never started (Ctrl-C)
// is an empty, interrupted one. Files made for jobs with unlink=1 go now.
std::vector<BenchResult> collect_results(const std::vector<BenchJob>& jobs, std::vector<fsio::Device>& devs,
                                         std::vector<std::optional<fsio::Result<BenchResult>>>& out) {
  std::vector<BenchResult> results;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    BenchResult r;
    if (out[k]) r = std::move(**out[k]);
    else r.interrupted = true;  // a later wave that never started
    results.push_back(std::move(r));
    if (jobs[k].spec && jobs[k].spec->unlink && devs[k].created()) (void)devs[k].remove_created();
    if (jobs[k].spec && jobs[k].spec->unlink && jobs[k].file_ops && jobs[k].file_ops->op != FileOp::remove)
      for (const auto& f : jobs[k].file_ops->files) (void)::unlink(f.c_str());
  }
  return results;
}

}  // namespace

std::vector<BenchJob> expand_fio_jobs(const std::vector<FioJob>& jobs) {
  std::vector<BenchJob> out;
  unsigned group = 0;
  // fio's flow groups: every job with a weight joins its flow_id's group
  // when the job file is read, whichever wave it runs in.
  std::map<unsigned, std::shared_ptr<FlowGroup>> flows;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const FioJob& j = jobs[k];
    if (k > 0 && (j.stonewall || j.new_group)) ++group;  // fio: stonewall implies new_group
    for (unsigned c = 0; c < j.numjobs; ++c) {
      BenchJob b;
      b.spec = &j;
      b.name = j.name;
      b.clone = c;
      b.group = group;
      b.stonewall = (j.stonewall || j.wait_previous) && c == 0;
      b.options = j.bench;
      // Copies of a random job take different orders, as fio's do.
      b.options.order_salt = out.size();
      b.options.buffers.job_index = unsigned(out.size());
      if (j.bench.flow.weight) {
        auto& g = flows[j.flow_id];
        if (!g) g = std::make_shared<FlowGroup>();
        g->join(j.bench.flow.weight);
        b.options.flow.group = g;
      }
      b.default_name = j.filename.empty();
      b.target = b.default_name
                     ? (j.directory.empty() ? "" : j.directory + "/") + j.name + "." + std::to_string(c) + ".0"
                     : j.filename;
      out.push_back(std::move(b));
    }
  }
  for (auto& b : out) b.options.buffers.job_count = unsigned(out.size());  // fio's thread_number
  return out;
}

fsio::StorageRef job_storage(const BenchJob& job, std::string role) {
  fsio::StorageRef r{std::move(role), job.target};
  r.same_is_fine = true;
  const FioJob& s = *job.spec;
  if (s.offset.is_percent()) return r;
  const std::uint64_t step = s.offset_increment, n = job.clone;
  const bool wraps = n && step > (fsio::kToEnd - s.offset.bytes) / n;
  r.begin = wraps ? fsio::kToEnd : s.offset.bytes + step * n;
  if (!s.size.is_percent() && s.size.bytes && !wraps)
    r.end = s.size.bytes > fsio::kToEnd - r.begin ? fsio::kToEnd : r.begin + s.size.bytes;
  return r;
}

fsio::Result<BenchRun> run_bench_jobs(std::vector<BenchJob>& jobs, fsio::Progress* progress,
                                      const std::vector<std::string>& job_files) {
  BenchRun run;
  const bool several = jobs.size() > 1;
  std::size_t refused = 0;
  if (auto st = check_jobs_apart(jobs, job_files, refused); !st)
    return in_job(jobs[refused], several, std::move(st).error());
  if (auto st = check_steadystate_groups(jobs, refused); !st)
    return in_job(jobs[refused], several, std::move(st).error());
  std::vector<fsio::Device> devs;
  devs.reserve(jobs.size());
  // Files this run made go again when it fails.
  auto fail = [&](const BenchJob& job, fsio::Error e) -> fsio::Error {
    e = in_job(job, several, std::move(e));
    for (const auto& d : devs) e = fsio::CreatedFile(d, "this run").fail(std::move(e));
    return e;
  };
  std::size_t failed = 0;
  if (auto st = open_targets(jobs, devs, run.notes, failed); !st) return fail(jobs[failed], std::move(st).error());

  const DiskCounters disks = read_disks_before(jobs, devs);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::optional<fsio::Result<BenchResult>>> out(jobs.size());
  if (auto st = run_waves(jobs, devs, progress, out, failed); !st) return fail(jobs[failed], std::move(st).error());
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.results = collect_results(jobs, devs, out);
  run.disks = disk_delta(disks.names, disks.before, elapsed_ms);
  return run;
}

}  // namespace bench
