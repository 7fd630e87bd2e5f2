// fio's engines that have no target (FIO_DISKLESSIO in fio 3.33): cpuio
// burns CPU (engines/cpu.c) and exec runs a program beside the other jobs
// (engines/exec.c), moving no data (FIO_NOIO); net moves it over a socket
// (engines/net.c), in the same loop with bytes counted. A job makes one
// request at a time, timed as a completion latency, then sleeps fio's
// "thinktime" before the next, until runtime= is up (without runtime= it
// runs until interrupted, as fio's does; net also ends at size= bytes or when
// the peer ends the link). cpuio's and exec's requests are counted
// (total_ios, latencies, IOPS samples) but move no bytes, and fio reports
// their direction's runtime, bandwidth and IOPS as 0 (BenchResult::no_io).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/bench/fio_job.hpp"
#include "cmd/bench/run.hpp"
#include "libfsio/result.hpp"

namespace bench {

enum class TaskEngine { none, cpuio, exec, net };
const char* task_engine_name(TaskEngine e);  // fio's: "cpuio", "exec", "net"

// cpuio: each request spins for chunk_us (noop) or sorts 1 MiB of numbers
// four ways (qsort, taking as long as it takes), then sleeps so that the
// busy share of the time is load percent.
enum class CpuMode { noop, qsort };
struct CpuOptions {
  unsigned load = 0;  // fio cpuload: 1..100 (more is 100, as in fio)
  CpuMode mode = CpuMode::noop;
  std::uint64_t chunk_us = 50000;  // fio cpuchunks
};

// exec: the program starts at the first request; later requests wait 50 ms
// each, and the first one past runtime= sends SIGTERM and waits grace_s.
// At the end the program gets SIGKILL (fio's cleanup) and is reaped.
struct ExecOptions {
  std::string program;
  std::string arguments;     // split at spaces; %r is the runtime in s, %n the job's name
  unsigned grace_s = 1;      // fio grace_time
  bool std_redirect = true;  // the program's stdout/stderr to JOB.stdout, JOB.stderr in the current directory
};

// net (engines/net.c): bs-sized requests over a TCP connection or as UDP
// datagrams over IPv4, sequentially, up to size= bytes. A TCP side with
// listen waits for one connection on port, the other connects to
// hostname; a UDP reader binds port (joining hostname's group when it is a
// multicast address) and a UDP writer sends to hostname. Copies of a job
// (numjobs) use port + their number. With pingpong each request is answered
// with one of the same size before the next. The UDP framing is fio's: a
// "link open" datagram first, a "link close" one last, and a sequence number
// at the end of each datagram, by which a reader counts the ones it missed.
enum class NetProtocol { tcp, udp };
struct NetOptions {
  std::string hostname;
  unsigned port = 0;
  NetProtocol protocol = NetProtocol::tcp;
  bool listen = false;
  bool pingpong = false;
  bool nodelay = false;   // TCP_NODELAY
  std::string interface;  // multicast: the IPv4 address of the interface to send and join on
  unsigned ttl = 1;       // multicast TTL
};

struct TaskJob {
  TaskEngine engine = TaskEngine::none;
  CpuOptions cpu;
  ExecOptions exec;
  NetOptions net;
  // The first option of cpuio, exec or net given, which needs that engine.
  std::optional<FioLine> cpu_line, exec_line, net_line;
};

// One copy of a task job: its name and the job options the loop needs.
struct TaskRun {
  std::string name;
  BenchRw rw = BenchRw::read;  // the requests count as reads unless the job writes
  std::uint64_t bs = 4096;
  double runtime = 0;      // s; 0: until interrupted
  std::uint64_t size = 0;  // bytes after which a job that moves data is done (0: no limit)
  unsigned stat_window_ms = 500;
  unsigned clone = 0;  // the copy's number (numjobs)
};

// The checks fio makes when the job starts (cpuio needs cpuload=, exec a
// program=), and that the engines' options are not given to another
// engine. Errors name the option's line.
fsio::Status check_task_job(const TaskJob& job, BenchRw rw);

fsio::Result<BenchResult> run_task(const TaskJob& job, const TaskRun& run);

// What one request of a task engine did.
struct TaskStep {
  std::uint64_t bytes = 0;     // moved (net); 0 for cpuio and exec
  std::uint64_t think_us = 0;  // to sleep after it
  std::uint64_t dropped = 0;   // requests the peer sent that never came (UDP sequence gaps)
};

// One request, given the ns since the job started; nullopt when there was
// nothing left to do (the peer closed the link): the job ends, nothing counted.
using TaskRequest = std::function<fsio::Result<std::optional<TaskStep>>(std::uint64_t since_start_ns)>;

// The loop the engines share (task_engines.cpp): requests until runtime is
// up, run.size bytes have moved, or the request says there is nothing left.
// With moves_data false the result is BenchResult::no_io.
fsio::Result<BenchResult> run_task_loop(const TaskRun& run, const char* engine, bool moves_data,
                                        const TaskRequest& request);

// cpuio's sleep after a request that kept the CPU busy for busy_us, so that
// busy / (busy + sleep) is load percent (fio: busy x (100 - load) / load).
std::uint64_t cpu_think_us(std::uint64_t busy_us, unsigned load);
fsio::Result<BenchResult> run_cpuio(const CpuOptions& cpu, const TaskRun& run);

// exec's command line as fio builds it: "PROGRAM ARGUMENTS" with %r and %n
// replaced, split at spaces (no quoting: fio has none).
std::vector<std::string> exec_argv(const ExecOptions& exec, double runtime, std::string_view job_name);
fsio::Result<BenchResult> run_exec(const ExecOptions& exec, const TaskRun& run);

// net_engine.cpp: fio's checks at the job's init, and the job.
fsio::Status check_net_job(const NetOptions& net, BenchRw rw);
fsio::Result<BenchResult> run_net(const NetOptions& net, const TaskRun& run);

}  // namespace bench
