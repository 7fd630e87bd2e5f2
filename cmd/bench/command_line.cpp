// The command line, read the way fio 3.33 reads its own (init.c
// parse_cmd_line, __parse_jobs_ini): options before any --name, and
// --name=global sections, go to every job; --name starts a job and the
// options after it are its own; each job file after the first begins with a
// stonewall; a [global] section applies to the jobs below it in its file.
#include "cmd/bench/command_line.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace bench {
namespace {

using fsio::Errc;
using fsio::make_error;

const std::string cli = "command line";

fsio::Error usage_error(const std::string& what) { return make_error(Errc::invalid_argument, what); }

// The start of `path` when it is a regular file we can read, else "".
std::string file_head(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string head(64u << 10, '\0');
  const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  ::close(fd);
  head.resize(n > 0 ? std::size_t(n) : 0);
  return head;
}

struct Args {
  std::vector<FioLine> globals;      // before the first --name, and --name=global sections
  std::vector<FioSection> sections;  // --name=X and what follows it
  std::vector<std::string> positional;
  std::vector<std::string> only_sections;  // --section
};

// Tool options (not job options): what to print, where, how.
fsio::Result<bool> tool_option(DdbenchCommand& c, Args& a, const std::string& key, const std::string* value) {
  auto need = [&]() -> fsio::Result<std::string> {
    if (!value || value->empty()) return usage_error("--" + key + ": needs a value");
    return *value;
  };
  if (key == "help" || key == "h") c.help = true;
  else if (key == "cmdhelp") c.cmdhelp = true;
  else if (key == "version") c.version = true;
  else if (key == "quiet" || key == "q") c.quiet = true;
  else if (key == "force" || key == "f") c.force = true;
  else if (key == "json") c.formats = {"json"};
  else if (key == "minimal") c.formats = {"terse"};
  else if (key == "parse-only") c.parse_only = true;
  else if (key == "readonly") c.readonly = true;
  else if (key == "output") c.output = FSIO_TRY(need());
  else if (key == "plot") c.plot = FSIO_TRY(need());
  else if (key == "section") a.only_sections.push_back(FSIO_TRY(need()));
  else if (key == "eta") {
    const std::string v = FSIO_TRY(need());
    if (v != "never" && v != "always" && v != "auto")
      return usage_error("--eta '" + v + "': expected never, always or auto");
    c.progress = v != "never";
  } else if (key == "terse-version") {
    if (FSIO_TRY(need()) != "3") return usage_error("--terse-version: only version 3 is supported");
  } else if (key == "output-format") {
    const std::string v = FSIO_TRY(need());
    c.formats.clear();
    std::size_t pos = 0;
    while (pos <= v.size()) {
      const auto comma = v.find(',', pos);
      const std::string f = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (f != "normal" && f != "json" && f != "json+" && f != "terse")
        return usage_error("--output-format '" + f + "': expected normal, json, json+ or terse");
      if (std::find(c.formats.begin(), c.formats.end(), f) == c.formats.end()) c.formats.push_back(f);
      pos = comma == std::string::npos ? v.size() + 1 : comma + 1;
    }
  } else {
    return false;
  }
  return true;
}

bool tool_option_takes_value(const std::string& key) {
  return key == "output" || key == "plot" || key == "section" || key == "eta" || key == "terse-version" ||
         key == "output-format";
}

fsio::Status read_args(DdbenchCommand& c, Args& a, const std::vector<std::string>& args) {
  bool only_positional = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      a.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    const bool long_opt = arg.rfind("--", 0) == 0;
    const std::string body = arg.substr(long_opt ? 2 : 1);
    const auto eq = body.find('=');
    const std::string key = body.substr(0, eq);
    std::optional<std::string> value;
    if (eq != std::string::npos) value = body.substr(eq + 1);
    if (!long_opt && key != "q" && key != "f" && key != "h")
      return usage_error("unknown option " + arg + " (job options are --key=value)");
    // Tool options first; those taking a value may have it in the next argument.
    if (!value && tool_option_takes_value(key) && i + 1 < args.size()) value = args[++i];
    if (FSIO_TRY(tool_option(c, a, key, value ? &*value : nullptr))) continue;
    const FioOptionInfo* info = find_fio_option(key);
    if (info && info->arg == FioArg::required && !value) {
      if (i + 1 >= args.size()) return usage_error("--" + key + ": needs a value");
      value = args[++i];
    }
    FioLine line;
    line.key = key;
    line.has_value = value.has_value();
    line.value = value.value_or("");
    line.where = cli;
    std::replace(line.key.begin(), line.key.end(), '-', '_');
    if (line.key == "name") {
      FioSection s;
      s.name = line.value;
      s.where = cli;
      s.lines.push_back(line);
      a.sections.push_back(std::move(s));
      continue;
    }
    if (a.sections.empty()) a.globals.push_back(line);
    else a.sections.back().lines.push_back(line);
  }
  return {};
}

// fio's "job options" and "global options": key and value as written, bare
// flags left out as fio leaves them out.
// fio's reports name an option by its own name, not the alias written:
// blockalign= is reported as "ba" (fio --cmdhelp=ALIAS prints the name).
std::string reported_name(const std::string& key) {
  static const std::pair<const char*, const char*> aliases[] = {{"blockalign", "ba"},
                                                                {"blocksize", "bs"},
                                                                {"blocksize_range", "bsrange"},
                                                                {"io_limit", "io_size"},
                                                                {"iodepth_batch_submit", "iodepth_batch"},
                                                                {"readwrite", "rw"},
                                                                {"timeout", "runtime"},
                                                                {"wait_for_previous", "stonewall"},
                                                                {"ratemin", "rate_min"},
                                                                {"ratecycle", "rate_cycle"},
                                                                {"ss", "steadystate"},
                                                                {"ss_dur", "steadystate_duration"},
                                                                {"ss_ramp", "steadystate_ramp_time"}};
  for (const auto& [alias, name] : aliases)
    if (key == alias) return name;
  return key;
}

void add_written(std::vector<std::pair<std::string, std::string>>& out, const std::vector<FioLine>& lines) {
  for (const auto& l : lines) {
    if (!l.has_value) continue;
    const std::string key = reported_name(l.key);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
    if (it != out.end()) it->second = l.value;
    else out.emplace_back(key, l.value);
  }
}

fsio::Result<FioJob> make_job(const FioJob& defaults, const std::string& name, const std::vector<FioLine>& inherited,
                              const std::vector<FioLine>& own) {
  FioJob j = defaults;
  j.name = name;
  std::vector<FioLine> all = inherited;
  all.insert(all.end(), own.begin(), own.end());
  FSIO_TRY(apply_fio_lines(j, all));
  add_written(j.options, own);
  return j;
}

bool wanted(const Args& a, const std::string& name) {
  return a.only_sections.empty() ||
         std::find(a.only_sections.begin(), a.only_sections.end(), name) != a.only_sections.end();
}

bool is_global(const std::string& name) { return name.rfind("global", 0) == 0; }

// fio's mode: command-line jobs, then each job file's jobs.
fsio::Status fio_jobs(DdbenchCommand& c, const Args& a, const std::vector<std::string>& files,
                      const std::vector<FioLine>& cli_globals, const FioEnv& env) {
  std::vector<FioLine> globals = cli_globals;
  add_written(c.global_options, cli_globals);
  for (const auto& s : a.sections) {
    if (is_global(s.name)) {
      std::vector<FioLine> rest(s.lines.begin() + 1, s.lines.end());  // without name=global
      globals.insert(globals.end(), rest.begin(), rest.end());
      add_written(c.global_options, rest);
      continue;
    }
    if (!wanted(a, s.name)) continue;
    c.jobs.push_back(FSIO_TRY(make_job(fio_defaults(), s.name, globals, s.lines)));
  }
  for (std::size_t f = 0; f < files.size(); ++f) {
    auto sections = FSIO_TRY(parse_fio_job_file(files[f], env, &c.job_files));
    std::vector<FioLine> file_globals = globals;
    bool first = true;
    for (const auto& s : sections) {
      if (is_global(s.name)) {
        file_globals.insert(file_globals.end(), s.lines.begin(), s.lines.end());
        add_written(c.global_options, s.lines);
        continue;
      }
      if (!wanted(a, s.name)) continue;
      FioJob j = FSIO_TRY(make_job(fio_defaults(), s.name, file_globals, s.lines));
      // fio separates job files with a stonewall.
      if (f > 0 && first) j.stonewall = true;
      first = false;
      c.jobs.push_back(std::move(j));
    }
  }
  if (c.jobs.empty())
    return usage_error(a.only_sections.empty() ? "no jobs: the job files hold only [global] sections"
                                               : "--section: no job of that name");
  return {};
}

}  // namespace

fsio::Result<DdbenchCommand> parse_ddbench_command(const std::vector<std::string>& args, const FioEnv& env) {
  DdbenchCommand c;
  Args a;
  FSIO_TRY(read_args(c, a, args));
  if (c.help || c.version || c.cmdhelp) return c;

  std::vector<std::string> files, targets;
  for (const auto& p : a.positional) (looks_like_fio_job(file_head(p)) ? files : targets).push_back(p);
  c.fio_mode = !files.empty() || !a.sections.empty();
  std::vector<FioLine> globals = a.globals;
  if (targets.size() > 1)
    return usage_error("more than one target (" + targets[0] + ", " + targets[1] +
                       "): a job file must start with a [section]; give one target, or filename= in each job");
  if (targets.size() == 1) {
    // The target is every job's default filename (a job's own filename= wins).
    FioLine l{"filename", targets[0], true, cli};
    globals.insert(globals.begin(), l);
  }

  if (c.fio_mode) {
    FSIO_TRY(fio_jobs(c, a, files, globals, env));
    FSIO_TRY(resolve_wait_for(c.jobs));
  } else {
    if (targets.empty() &&
        std::none_of(globals.begin(), globals.end(), [](const FioLine& l) { return l.key == "filename"; }))
      return usage_error("no target: give a block device or file (or a fio job file)");
    c.jobs.push_back(FSIO_TRY(make_job(terse_defaults(), "ddbench", {}, globals)));
  }
  for (auto& j : c.jobs) {
    if (c.readonly && j.writes())
      return usage_error("--readonly: job '" + j.name + "' " +
                         (j.task.engine == TaskEngine::exec ? "runs a program (ioengine=exec)"
                          : bench_writes(j.bench.rw)
                              ? "writes (rw=" + std::string(bench_rw_name(j.bench.rw)) + ")"
                              : "makes or removes files (ioengine=" + std::string(file_op_engine(j.file_op)) + ")"));
    j.bench.force = c.force;
    for (const auto& n : j.notes)
      if (std::find(c.notes.begin(), c.notes.end(), n) == c.notes.end()) c.notes.push_back(n);
  }
  return c;
}

std::string ddbench_usage() {
  std::string u =
      "Usage: ddbench [OPTIONS] TARGET\n"
      "       ddbench [OPTIONS] JOBFILE... | --name=JOB [JOB OPTIONS]...\n"
      "Measure throughput, IOPS and latency of a block device or file, with fio's options,\n"
      "job files and output.\n\n"
      "Tool options:\n"
      "  -h, --help             this text\n"
      "  --version              ddbench's version\n"
      "  -q, --quiet            no progress, no report; exit status only\n"
      "  -f, --force            write over a filesystem, partition table or text file\n"
      "  --json                 the same as --output-format=json\n"
      "  --output-format=LIST   normal, json, json+, terse (comma-separated)\n"
      "  --minimal              the same as --output-format=terse\n"
      "  --output=FILE          write the report to FILE\n"
      "  --plot=FILE.svg        draw bandwidth, IOPS and latency percentiles\n"
      "  --section=NAME         run only the job NAME (repeatable)\n"
      "  --parse-only           check the options and job files, run nothing\n"
      "  --readonly             refuse any job that writes\n"
      "  --eta=never            no progress line\n"
      "  --cmdhelp              every fio option: what ddbench does with it, or why not\n\n"
      "Job options (--key=value, or key=value in a job file; '-' and '_' alike):\n";
  for (const auto& o : fio_options()) {
    std::string name = std::string("  --") + o.name +
                       (o.arg == FioArg::required   ? "=V"
                        : o.arg == FioArg::optional ? "[=V]"
                                                    : "");
    if (name.size() < 25) name.resize(25, ' ');
    else name += ' ';
    u += name + o.help + (o.fio ? "" : " (ddbench)") + "\n";
  }
  u += "\nOther fio options are refused with the reason. See ddbench(1).\n";
  return u;
}

std::string ddbench_cmdhelp() {
  std::string u = "fio options ddbench accepts:\n";
  for (const auto& o : fio_options()) {
    std::string name = std::string("  ") + o.name;
    if (name.size() < 26) name.resize(26, ' ');
    else name += ' ';
    u += name + o.help + (o.fio ? "" : " (ddbench's own)") + "\n";
  }
  u += "\nfio options ddbench refuses:\n";
  for (const auto& [name, why] : fio_unsupported_options()) {
    std::string n = std::string("  ") + name;
    if (n.size() < 26) n.resize(26, ' ');
    else n += ' ';
    u += n + why + "\n";
  }
  return u;
}

}  // namespace bench
