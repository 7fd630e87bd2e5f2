// fio's job options, as ddbench accepts them in job files and on the
// command line (--key=value): one table, so the two can never disagree.
// Every option fio has that ddbench does not is refused with its name and
// the reason; an unknown name is refused too. Nothing is silently ignored.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/bench/file_ops.hpp"
#include "cmd/bench/fio_job.hpp"
#include "cmd/bench/fio_units.hpp"
#include "cmd/bench/run.hpp"
#include "cmd/bench/task_engines.hpp"

namespace bench {

// fio's exit_what: which jobs a job ends when it ends, under exitall: those
// of its reporting group, those running (its wave), or every job.
enum class ExitWhat { group, stonewall, all };

// One job as its options describe it, before numjobs clones it.
struct FioJob {
  std::string name = "ddbench";  // fio's jobname
  std::string description;
  std::string filename;  // the target; empty: DIRECTORY/NAME.CLONE.0, made as fio makes it
  std::string directory;
  BenchOptions bench;
  FioSize size, offset, io_size;  // resolved against the target when it is opened
  std::uint64_t filesize = 0;     // fio filesize: the file's size; size= then caps the bytes moved
  unsigned numjobs = 1;
  bool stonewall = false;                 // wait for every earlier job (fio stonewall, wait_for_previous)
  std::optional<FioLine> wait_for;        // fio wait_for=NAME, until resolved against the jobs before
  bool wait_previous = false;             // wait for the job before (wait_for it): a stonewall, no new group
  bool new_group = false;                 // start a new reporting group (stonewall does too)
  bool group_reporting = false;           // report the group as one job
  bool exitall = false;                   // fio exitall: a job that ends ends others (exit_what says which)
  ExitWhat exit_what = ExitWhat::group;   // fio exit_what
  std::string bw_log, lat_log, iops_log;  // log file prefixes; empty: no log
  std::string write_iolog;                // fio write_iolog: the file each request is appended to
  bool log_offset = false;
  bool log_prio = false;     // fio log_prio: the logs' last column is the priority value (0x0000: none set)
  bool per_job_logs = true;  // false: jobs with one log prefix share PREFIX_bw.log (fio per_job_logs=0)
  std::vector<double> percentiles = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  bool clat_percentiles = true;
  unsigned kb_base = 1024;
  bool extend_short_file = false;      // fio's jobs: a regular file shorter than offset + size grows to it
  bool allow_file_create = true;       // false: a missing file is an error (fio allow_file_create=0)
  bool unlink = false;                 // remove a file this run created when the job is done
  unsigned flow_id = 0;                // fio flow_id: the flow group of a job with flow=
  std::uint64_t offset_increment = 0;  // clone N starts at offset + N x this
  bool disk_util = true;               // report the disk's statistics
  FileOp file_op = FileOp::none;       // ioengine=filecreate, filestat, filedelete (file_ops.hpp)
  TaskJob task;                        // ioengine=cpuio, exec, net and their options (task_engines.hpp)
  double startdelay = 0;               // s to wait once the job's wave starts (fio startdelay)
  unsigned nrfiles = 1;                // files per job: more than 1 only with a file engine
  bool create_on_open = false;         // a file engine lays nothing out first
  bool strided = false;                // zonemode=strided (zonesize etc. in bench)
  std::optional<FioLine> files_line;   // the first nrfiles>1, openfiles or create_on_open: needs a file engine
  // The options as written in the job's own section or after its --name,
  // for fio's "job options" (bare flags, as fio, left out).
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> notes;  // what ran differently from fio, said on stderr

  // Changes what is stored: writes, makes or removes files, or runs a
  // program that may (exec; its output files too) (--readonly refuses it).
  // A cpuio or net job's writes touch no storage.
  bool writes() const {
    return (bench_writes(bench.rw) && task.engine == TaskEngine::none) || file_op == FileOp::create ||
           file_op == FileOp::remove || task.engine == TaskEngine::exec;
  }
};

enum class FioArg { none, optional, required };

// A job option's entry in the table.
struct FioOptionInfo {
  const char* name;
  FioArg arg;
  const char* help;  // what ddbench does with it (the man page and --help)
  bool fio = true;   // fio has it; false: ddbench's own
};

// The table, in the order --help lists it.
const std::vector<FioOptionInfo>& fio_options();
// fio options ddbench refuses, with why: {name, reason}.
const std::vector<std::pair<const char*, const char*>>& fio_unsupported_options();

// The option named `name` ('-' and '_' are the same), or nullptr.
const FioOptionInfo* find_fio_option(std::string_view name);

// The defaults a job starts from: fio's (4k, iodepth 1, psync, buffered)
// for job files and --name; ddbench's own (1M, iodepth 32, io_uring,
// direct) for its terse form.
FioJob fio_defaults();
FioJob terse_defaults();

// Applies lines to a job in order, kb_base first (it changes how every size
// reads). Errors name the line's origin and the option:
// "job.fio:7: bs '12Q': unknown unit 'Q'", "command line: --fallocate: ...".
fsio::Status apply_fio_lines(FioJob& job, const std::vector<FioLine>& lines);

// fio's wait_for=NAME, where ddbench's waves do what it does: NAME is the
// job just before, which starts a wave of its own (the first job, a
// stonewall, or a wait_for itself), so waiting for it is waiting for every
// job before. Anything else is refused, naming the line.
fsio::Status resolve_wait_for(std::vector<FioJob>& jobs);

}  // namespace bench
