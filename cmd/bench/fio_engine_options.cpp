// A table beside fio_options.cpp's, listed after it by --help: the options
// of fio 3.33's cpuio, exec and net engines (engines/cpu.c, exec.c, net.c),
// of what write buffers hold (buffer_compress_percentage, the dedupe
// options: buffer_fill.hpp) and startdelay. An engine's option given to a
// job of another engine is refused when the job is complete
// (check_task_job): fio knows an engine's options only once the engine is
// loaded.
#include <limits>
#include <string>

#include "cmd/bench/fio_option_values.hpp"

namespace bench::detail {
namespace {

using fsio::Errc;
using fsio::make_error;

fsio::Status apply_protocol(FioJob& j, const FioLine& l) {
  if (l.value == "tcp") j.task.net.protocol = NetProtocol::tcp;
  else if (l.value == "udp") j.task.net.protocol = NetProtocol::udp;
  else if (l.value == "tcpv6" || l.value == "udpv6" || l.value == "unix")
    return bad(l, "ddbench's net engine speaks TCP and UDP over IPv4 only");
  else return bad(l, "expected tcp or udp");
  return {};
}

fsio::Status apply_cpumode(FioJob& j, const FioLine& l) {
  if (l.value == "noop") j.task.cpu.mode = CpuMode::noop;
  else if (l.value == "qsort") j.task.cpu.mode = CpuMode::qsort;
  else return bad(l, "expected noop or qsort");
  return {};
}

// fio's startdelay=TIME; a range (a random delay in it) is refused.
fsio::Status apply_startdelay(FioJob& j, const FioLine& l) {
  if (l.value.find('-') != std::string::npos || l.value.find(':') != std::string::npos)
    return bad(l, "a range of start delays is not supported (give one time)");
  j.startdelay = FSIO_TRY(seconds_of(l));
  return {};
}

fsio::Status apply_dedupe_mode(FioJob& j, const FioLine& l) {
  if (l.value == "repeat") j.bench.buffers.dedupe_mode = DedupeMode::repeat;
  else if (l.value == "working_set") j.bench.buffers.dedupe_mode = DedupeMode::working_set;
  else return bad(l, "expected repeat or working_set");
  return {};
}

// Remembers the first cpuio, exec or net option, for check_task_job.
void saw(std::optional<FioLine>& first, const FioLine& l) {
  if (!first) first = l;
}

}  // namespace

// fio's init.c checks of the dedupe working set, and what ddbench cannot
// mix: a verify stamp fills the whole block.
fsio::Status check_buffer_contents(const FioJob& j) {
  const BufferContents& b = j.bench.buffers;
  if (!b.active()) return {};
  auto no = [](const std::string& why) { return make_error(Errc::invalid_argument, why); };
  if (j.bench.verify)
    return no(
        "buffer_compress_percentage and dedupe_percentage with verify are not supported "
        "(ddbench's verify stamp fills the whole block)");
  if (!b.dedupe_percentage || b.dedupe_mode != DedupeMode::working_set) return {};
  if (j.size.is_percent() || j.size.bytes == 0)
    return no("dedupe_mode=working_set needs size= in bytes (fio: the working set is a share of it)");
  if (b.working_set_percentage + b.dedupe_percentage > 100)
    return no("dedupe_percentage=" + std::to_string(b.dedupe_percentage) + " cannot be reached with " +
              std::to_string(b.working_set_percentage) +
              "% of size reserved to the working set (its unique pages), as fio says");
  return {};
}

const std::vector<Entry>& engine_option_table() {
  static const std::vector<Entry> t = {
      {{"cpuload", FioArg::required, "ioengine=cpuio: percent of a CPU to keep busy (more than 100 is 100)"},
       SET(saw(j.task.cpu_line, l); j.task.cpu.load = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 30))))},
      {{"cpumode", FioArg::required, "ioengine=cpuio: noop (spin) or qsort (sort 1 MiB of numbers)"},
       SET(saw(j.task.cpu_line, l); FSIO_TRY(apply_cpumode(j, l)))},
      {{"cpuchunks", FioArg::required, "ioengine=cpuio, cpumode=noop: us of one busy spell (default 50000)"},
       SET(saw(j.task.cpu_line, l);
           j.task.cpu.chunk_us = FSIO_TRY(uint_of(l, 1, std::numeric_limits<unsigned>::max())))},
      {{"program", FioArg::required, "ioengine=exec: the program to run beside the other jobs"},
       SET(saw(j.task.exec_line, l); j.task.exec.program = l.value)},
      {{"arguments", FioArg::required, "ioengine=exec: its arguments, split at spaces; %r: runtime in s, %n: job name"},
       SET(saw(j.task.exec_line, l); j.task.exec.arguments = l.value)},
      {{"grace_time", FioArg::required, "ioengine=exec: s to wait after SIGTERM at the end of runtime (default 1)"},
       SET(saw(j.task.exec_line, l); j.task.exec.grace_s = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 20))))},
      {{"std_redirect", FioArg::optional, "ioengine=exec: the program's output to JOB.stdout, JOB.stderr (default 1)"},
       SET(saw(j.task.exec_line, l); j.task.exec.std_redirect = FSIO_TRY(bool_of(l)))},
      {{"hostname", FioArg::required,
        "ioengine=net: the host to connect or send to, or a UDP reader's multicast group"},
       SET(saw(j.task.net_line, l); j.task.net.hostname = l.value)},
      {{"port", FioArg::required, "ioengine=net: the TCP or UDP port (copies of a job: port + their number)"},
       SET(saw(j.task.net_line, l); j.task.net.port = unsigned(FSIO_TRY(uint_of(l, 1, 65535))))},
      {{"protocol", FioArg::required, "ioengine=net: tcp (the default) or udp, over IPv4"},
       SET(saw(j.task.net_line, l); FSIO_TRY(apply_protocol(j, l)))},
      {{"proto", FioArg::required, "the same as protocol"},
       SET(saw(j.task.net_line, l); FSIO_TRY(apply_protocol(j, l)))},
      {{"listen", FioArg::optional, "ioengine=net, TCP: wait for the connection on port instead of making it"},
       SET(saw(j.task.net_line, l); j.task.net.listen = FSIO_TRY(bool_of(l)))},
      {{"pingpong", FioArg::optional, "ioengine=net: each request is answered with one of the same size"},
       SET(saw(j.task.net_line, l); j.task.net.pingpong = FSIO_TRY(bool_of(l)))},
      {{"nodelay", FioArg::optional, "ioengine=net, TCP: TCP_NODELAY"},
       SET(saw(j.task.net_line, l); j.task.net.nodelay = FSIO_TRY(bool_of(l)))},
      {{"interface", FioArg::required, "ioengine=net, multicast: the IPv4 address of the interface to use"},
       SET(saw(j.task.net_line, l); j.task.net.interface = l.value)},
      {{"ttl", FioArg::required, "ioengine=net, multicast: the TTL of the datagrams sent (default 1)"},
       SET(saw(j.task.net_line, l); j.task.net.ttl = unsigned(FSIO_TRY(uint_of(l, 0, 255))))},
      {{"buffer_compress_percentage", FioArg::required,
        "write data that compresses by about this percent (100: zeros)"},
       SET(j.bench.buffers.compress_percentage = unsigned(FSIO_TRY(uint_of(l, 0, 100))))},
      {{"buffer_compress_chunk", FioArg::required,
        "the granule of compressible data in bytes (default 512; 0: the request)"},
       SET(j.bench.buffers.compress_chunk = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"dedupe_percentage", FioArg::required, "this percent of the writes repeat earlier data"},
       SET(j.bench.buffers.dedupe_percentage = unsigned(FSIO_TRY(uint_of(l, 0, 100))))},
      {{"dedupe_mode", FioArg::required, "repeat (the last unique block) or working_set (one of a set)"},
       apply_dedupe_mode},
      {{"dedupe_working_set_percentage", FioArg::required, "working_set: the set's share of size (default 5)"},
       SET(j.bench.buffers.working_set_percentage = unsigned(FSIO_TRY(uint_of(l, 0, 100))))},
      {{"dedupe_global", FioArg::optional, "working_set: the jobs share one set, spread over them"},
       SET(j.bench.buffers.global = FSIO_TRY(bool_of(l)))},
      {{"startdelay", FioArg::required,
        "wait this long after the job's wave starts before starting it (default unit s)"},
       apply_startdelay},
  };
  return t;
}

}  // namespace bench::detail
