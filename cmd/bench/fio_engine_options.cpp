// The options of fio's cpuio and exec engines (engines/cpu.c, engines/exec.c
// in fio 3.33), a table beside fio_options.cpp's, in the order --help
// lists them after it. An engine's option given to a job of another
// engine is refused when the job is complete (check_task_job): fio knows
// an engine's options only once the engine is loaded.
#include <limits>

#include "cmd/bench/fio_option_values.hpp"

namespace bench::detail {
namespace {

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

// Remembers the first cpuio, exec or net option, for check_task_job.
void saw(std::optional<FioLine>& first, const FioLine& l) {
  if (!first) first = l;
}

}  // namespace

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
      {{"startdelay", FioArg::required,
        "wait this long after the job's wave starts before starting it (default unit s)"},
       apply_startdelay},
  };
  return t;
}

}  // namespace bench::detail
