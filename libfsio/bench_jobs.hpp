// Several benchmark jobs at once, as fio runs them: numjobs copies of a job,
// jobs between two stonewalls concurrently (each on its own thread, with its
// own device descriptor and its own io_uring), reporting groups, and the
// disks' own statistics over the whole run.
//
// Every target is opened, checked and refused before any job does I/O, so a
// refused job file never leaves the earlier jobs' writes behind.
#pragma once

#include <string>
#include <vector>

#include "libfsio/bench.hpp"
#include "libfsio/fio_options.hpp"

namespace fsio {

class Progress;

struct BenchJob {
  const FioJob* spec = nullptr;  // the job it is a copy of
  std::string name;
  std::string target;
  bool default_name = false;  // no filename: DIRECTORY/NAME.CLONE.0, made when missing
  unsigned clone = 0;         // 0 .. numjobs-1
  unsigned group = 0;         // reporting group (fio's groupid)
  bool stonewall = false;     // waits for every earlier job
  BenchOptions options;       // size/offset/io_size resolved when the target is open
};

// numjobs copies, groups (a stonewall or new_group starts one), targets.
std::vector<BenchJob> expand_fio_jobs(const std::vector<FioJob>& jobs);

// A disk's counters over the run (/sys/block/NAME/stat), as fio's disk_util.
struct DiskUtil {
  std::string name;
  std::uint64_t read_ios = 0, write_ios = 0, read_merges = 0, write_merges = 0;
  std::uint64_t read_ticks = 0, write_ticks = 0, in_queue = 0;  // ms
  double util = 0;                                               // percent of the run the disk was busy
};

struct BenchRun {
  std::vector<BenchResult> results;  // one per job, in order
  std::vector<DiskUtil> disks;
  std::vector<std::string> notes;    // e.g. direct I/O fallbacks, created files
};

// Opens every target (creating missing files that have a size, and writing
// a file made for a read job once first, as fio lays it out), then runs the
// jobs wave by wave (a stonewall starts a wave). An error in any job stops
// the run after the jobs in flight: the first error, naming its job, and
// files this run created are removed again.
Result<BenchRun> run_bench_jobs(std::vector<BenchJob>& jobs, Progress* progress);

// A group's jobs as one (fio's group_reporting): bytes, requests and
// latencies summed, elapsed the longest, windows added up by time.
BenchResult merge_results(const std::vector<const BenchResult*>& results);

}  // namespace fsio
