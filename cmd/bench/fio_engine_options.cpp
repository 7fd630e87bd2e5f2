// The options of fio's cpuio and exec engines (engines/cpu.c, engines/exec.c
// in fio 3.33), a table beside fio_options.cpp's, in the order --help
// lists them after it. An engine's option given to a job of another
// engine is refused when the job is complete (check_task_job): fio knows
// an engine's options only once the engine is loaded.
#include <limits>

#include "cmd/bench/fio_option_values.hpp"

namespace bench::detail {
namespace {

fsio::Status apply_cpumode(FioJob& j, const FioLine& l) {
  if (l.value == "noop") j.task.cpu.mode = CpuMode::noop;
  else if (l.value == "qsort") j.task.cpu.mode = CpuMode::qsort;
  else return bad(l, "expected noop or qsort");
  return {};
}

// Remembers the first cpuio or exec option, for check_task_job.
void saw(std::optional<FioLine>& first, const FioLine& l) {
  if (!first) first = l;
}

}  // namespace

const std::vector<Entry>& engine_option_table() {
  static const std::vector<Entry> t = {
      {{"cpuload", FioArg::required, "ioengine=cpuio: percent of a CPU to keep busy (more than 100 is 100)"},
       SET(saw(j.task.cpu_line, l); j.task.cpu.load = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 30)))) },
      {{"cpumode", FioArg::required, "ioengine=cpuio: noop (spin) or qsort (sort 1 MiB of numbers)"},
       SET(saw(j.task.cpu_line, l); FSIO_TRY(apply_cpumode(j, l)))},
      {{"cpuchunks", FioArg::required, "ioengine=cpuio, cpumode=noop: us of one busy spell (default 50000)"},
       SET(saw(j.task.cpu_line, l); j.task.cpu.chunk_us = FSIO_TRY(uint_of(l, 1, std::numeric_limits<unsigned>::max())))},
      {{"program", FioArg::required, "ioengine=exec: the program to run beside the other jobs"},
       SET(saw(j.task.exec_line, l); j.task.exec.program = l.value)},
      {{"arguments", FioArg::required, "ioengine=exec: its arguments, split at spaces; %r: runtime in s, %n: job name"},
       SET(saw(j.task.exec_line, l); j.task.exec.arguments = l.value)},
      {{"grace_time", FioArg::required, "ioengine=exec: s to wait after SIGTERM at the end of runtime (default 1)"},
       SET(saw(j.task.exec_line, l); j.task.exec.grace_s = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 20))))},
      {{"std_redirect", FioArg::optional, "ioengine=exec: the program's output to JOB.stdout, JOB.stderr (default 1)"},
       SET(saw(j.task.exec_line, l); j.task.exec.std_redirect = FSIO_TRY(bool_of(l)))},
  };
  return t;
}

}  // namespace bench::detail
