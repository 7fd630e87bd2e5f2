// fio's exec engine (engines/exec.c in fio 3.33): the job's first request
// starts program= in the background; every later one waits 50 ms, and once
// the job has run longer than runtime= it sends the program SIGTERM and
// waits grace_time= s for it. The job ends at runtime= whether or not the
// program has, and the program then gets SIGKILL.
//
// A program that cannot be started (missing, not executable) fails only
// the program, not the job: fio forks, its child's exec fails, and the job
// runs its time and exits 0 with the child's complaint in JOB.stderr. The
// same here, with posix_spawnp's error written to JOB.stderr (or said on
// ddbench's stderr without std_redirect) and noted in the job's result.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "cmd/bench/runner.hpp"
#include "cmd/bench/task_engines.hpp"

extern char** environ;

namespace bench {
namespace {

constexpr std::uint64_t poll_us = 50000;  // fio's exec init: thinktime = 50000

std::string replace_all(std::string s, std::string_view what, std::string_view with) {
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size()))
    s.replace(at, what.size(), with);
  return s;
}

// JOB.stdout and JOB.stderr, made empty, for the program's output.
fsio::Result<std::pair<int, int>> open_outputs(const std::string& job) {
  int fds[2] = {-1, -1};
  const char* ext[2] = {".stdout", ".stderr"};
  for (int k = 0; k < 2; ++k) {
    const std::string name = job + ext[k];
    fds[k] = ::open(name.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fds[k] < 0) {
      const int e = errno;
      if (k == 1) ::close(fds[0]);
      return fsio::errno_error(e, "exec: open " + name + " for the program's output");
    }
  }
  return std::pair{fds[0], fds[1]};
}

// The running program of one job, killed and reaped when the job ends.
class Program {
 public:
  ~Program() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  // Starts it; a program that cannot start is reported in `failure`.
  fsio::Status start(const ExecOptions& exec, const std::vector<std::string>& argv, const std::string& job,
                     std::string& failure) {
    std::pair<int, int> out{-1, -1};
    if (exec.std_redirect) out = FSIO_TRY(open_outputs(job));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (exec.std_redirect) {
      posix_spawn_file_actions_adddup2(&fa, out.first, STDOUT_FILENO);
      posix_spawn_file_actions_adddup2(&fa, out.second, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      failure = argv[0] + ": " + std::strerror(rc);
      const std::string line = "ddbench: exec " + failure + "\n";
      if (exec.std_redirect) (void)!::write(out.second, line.data(), line.size());
    }
    if (exec.std_redirect) ::close(out.first), ::close(out.second);
    return {};
  }

  void terminate() const {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

std::vector<std::string> exec_argv(const ExecOptions& exec, double runtime, std::string_view job_name) {
  std::string line = exec.program;
  if (!exec.arguments.empty()) {
    // fio: %r first (whole seconds of runtime), then %n in what that gave.
    const std::string r = replace_all(exec.arguments, "%r", std::to_string(std::uint64_t(runtime)));
    line += " " + replace_all(r, "%n", job_name);
  }
  std::vector<std::string> argv;
  for (std::size_t at = 0; at < line.size();) {
    const std::size_t end = std::min(line.find(' ', at), line.size());
    if (end > at) argv.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return argv;
}

fsio::Result<BenchResult> run_exec(const ExecOptions& exec, const TaskRun& run) {
  const std::vector<std::string> argv = exec_argv(exec, run.runtime, run.name);
  Program program;
  std::optional<std::uint64_t> job_start;  // set at the first request, which starts the program
  std::string failure;
  const std::uint64_t runtime_ns = std::uint64_t(run.runtime * 1e9);
  const std::optional<TaskStep> poll = TaskStep{.think_us = poll_us};
  auto res = FSIO_TRY(
      run_task_loop(run, "exec", false, [&](std::uint64_t since_start) -> fsio::Result<std::optional<TaskStep>> {
        if (!job_start) {
          job_start = detail::now_ns() - since_start;
          FSIO_TRY(program.start(exec, argv, run.name, failure));
          return poll;
        }
        ::usleep(useconds_t(poll_us));
        if (detail::now_ns() - *job_start > runtime_ns) {
          program.terminate();
          ::sleep(exec.grace_s);
        }
        return poll;
      }));
  if (!failure.empty())
    res.note = "job " + run.name + ": " + failure + (exec.std_redirect ? " (said in " + run.name + ".stderr)" : "") +
               "; as in fio, the job ran its time anyway";
  return res;
}

}  // namespace bench
