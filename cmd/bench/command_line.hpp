// ddbench's command line: fio's (job files, --name starting a job, options
// before any --name applying to every job) and ddbench's terse form
// (options and one TARGET) read by one parser.
//
// A positional argument that is an existing file whose text starts with a
// [section] is a job file; anything else is a target. A job file is never a
// target, so `ddbench --rw=write job.fio` runs the job file (with rw=write
// as a default its sections may override) and never writes over it.
//
// fio's mode (a job file or --name given): jobs start from fio's defaults
// (bs=4k, iodepth=1, psync, buffered). The terse form (neither): one job on
// one TARGET from ddbench's defaults (1M, iodepth 32, io_uring, direct).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cmd/bench/fio_job.hpp"
#include "cmd/bench/fio_options.hpp"

namespace bench {

struct DdbenchCommand {
  bool fio_mode = false;
  std::vector<FioJob> jobs;  // in fio's order: command-line jobs, then each job file's
  // fio's "global options": what applies to every job (options before the
  // first --name, [global] sections), as written.
  std::vector<std::pair<std::string, std::string>> global_options;
  std::vector<std::string> formats = {"normal"};  // normal, json, json+, terse
  std::vector<std::string> job_files;             // every job file read, and every file they include
  std::string output;                             // --output FILE; empty: standard output
  std::string plot;                               // --plot FILE.svg
  bool quiet = false;
  bool force = false;
  bool help = false;
  bool cmdhelp = false;  // --cmdhelp: every fio option and what becomes of it
  bool version = false;
  bool parse_only = false;
  bool readonly = false;           // --readonly: refuse any job that writes
  bool progress = true;            // --eta=never turns the progress line off
  std::vector<std::string> notes;  // what runs differently from fio, once each
};

fsio::Result<DdbenchCommand> parse_ddbench_command(const std::vector<std::string>& args,
                                                   const FioEnv& env = process_env());

// --help's text: the tool's options and the job-option table.
std::string ddbench_usage();
// --cmdhelp's: every fio option ddbench accepts and every one it refuses, with why.
std::string ddbench_cmdhelp();

}  // namespace bench
