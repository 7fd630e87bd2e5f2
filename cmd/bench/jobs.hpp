// Several benchmark jobs at once, as fio runs them: numjobs copies of a job,
// jobs between two stonewalls concurrently (each on its own thread, with its
// own device descriptor and its own io_uring), reporting groups, and the
// disks' own statistics over the whole run.
//
// Every target is opened, checked and refused before any job does I/O, so a
// refused job file never leaves the earlier jobs' writes behind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmd/bench/file_ops.hpp"
#include "cmd/bench/fio_options.hpp"
#include "cmd/bench/run.hpp"
#include "libfsio/apart.hpp"

namespace bench {

struct BenchJob {
  const FioJob* spec = nullptr;  // the job it is a copy of
  std::string name;
  std::string target;
  bool default_name = false;          // no filename: DIRECTORY/NAME.CLONE.0, made when missing
  unsigned clone = 0;                 // 0 .. numjobs-1
  unsigned group = 0;                 // reporting group (fio's groupid)
  bool stonewall = false;             // waits for every earlier job
  BenchOptions options;               // size/offset/io_size resolved when the target is open
  std::optional<FileOpJob> file_ops;  // a file engine's job: its files, set when the targets are opened
};

// numjobs copies, groups (a stonewall or new_group starts one), targets.
std::vector<BenchJob> expand_fio_jobs(const std::vector<FioJob>& jobs);

// A disk's counters over the run (/sys/block/NAME/stat), as fio's disk_util.
struct DiskUtil {
  std::string name;
  std::uint64_t read_ios = 0, write_ios = 0, read_merges = 0, write_merges = 0;
  std::uint64_t read_ticks = 0, write_ticks = 0, in_queue = 0;  // ms
  double util = 0;                                              // percent of the run the disk was busy
};

struct BenchRun {
  std::vector<BenchResult> results;  // one per job, in order
  std::vector<DiskUtil> disks;
  std::vector<std::string> notes;  // e.g. direct I/O fallbacks, created files
};

// Opens every target (creating missing files that have a size, and writing
// a file made for a read job once first, as fio lays it out), then runs the
// jobs wave by wave (a stonewall starts a wave). An error in any job stops
// the run after the jobs in flight: the first error, naming its job, and
// files this run created are removed again.
//
// Before anything is opened, a job that writes is refused (Errc::busy,
// apart.hpp) when its target shares storage with one of `job_files` (the
// job files and their includes), or with another job's target reached by
// another name. Jobs may share a target, as in fio (numjobs on one device,
// a reader beside a writer); /dev/loop0 and the image behind it are not one
// target but two page caches and two O_EXCL claims over the same bytes, and
// the in-use check would take our own claim on the one for another
// program's. Windows count where the job file gives them in bytes
// (offset=, size=); a percentage is taken as the whole target.
fsio::Result<BenchRun> run_bench_jobs(std::vector<BenchJob>& jobs, fsio::Progress* progress,
                                      const std::vector<std::string>& job_files = {});

// The storage a job touches: its target, and the window offset= and size=
// give it when they are bytes (a percentage: the whole target). For
// apart.hpp's checks; role names it in messages.
fsio::StorageRef job_storage(const BenchJob& job, std::string role);

// A group's jobs as one (fio's group_reporting): bytes, requests and
// latencies summed, elapsed the longest, windows added up by time.
BenchResult merge_results(const std::vector<const BenchResult*>& results);

}  // namespace bench
