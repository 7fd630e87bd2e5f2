#include "cmd/common.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string_view>

#include "libfsio/engine.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"
#include "version.hpp"

namespace fsio::cli {

int finish(int rc) {
  const int sig = InterruptGuard::signal_number();
  if (rc != exit_interrupted || sig == 0) return rc;
  std::fflush(nullptr);
  struct sigaction old {};
  if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) return rc;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  (void)::sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  (void)::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  (void)std::raise(sig);
  return rc;
}

int exit_code(const Error& error) {
  if (error.code == Errc::invalid_argument) return exit_usage;
  if (error.code == Errc::interrupted) return exit_interrupted;
  return exit_failure;
}

int report(const char* tool, const Error& error) {
  std::fprintf(stderr, "%s: %s\n", tool, error.message().c_str());
  return exit_code(error);
}

CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::uint64_t* out, const std::string& help) {
  auto* opt = app.add_option_function<std::string>(
      name,
      [out, name](const std::string& text) {
        auto bytes = parse_size(text);
        if (!bytes) throw CLI::ValidationError(name, bytes.error().message());
        *out = *bytes;
      },
      help);
  opt->type_name("SIZE");
  return opt;
}

CLI::Option* add_u32_option(CLI::App& app, const std::string& name, std::uint32_t* out, const std::string& help) {
  auto* opt = app.add_option_function<std::string>(
      name,
      [out, name](const std::string& text) {
        // Digits only: strtoul would take "-1" as 4294967295 and " 7" as 7.
        const bool digits = !text.empty() && text.size() <= 10 &&
                            std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (!digits || v > 0xFFFFFFFFull)
          throw CLI::ValidationError(name, "'" + text + "': expected a whole number from 0 to 4294967295");
        *out = std::uint32_t(v);
      },
      help);
  opt->type_name("N");
  return opt;
}

nlohmann::json to_json(const IoStats& s) {
  return {
      {"requests_queued", s.requests_queued},
      {"requests_submitted", s.requests_submitted},
      {"syscalls", s.syscalls},
      {"bytes_read", s.bytes_read},
      {"bytes_written", s.bytes_written},
      {"flushes", s.flushes},
      {"retries", s.retries},
      {"peak_in_flight", s.peak_in_flight},
      {"elapsed_seconds", s.elapsed_seconds},
  };
}

std::string version_line(const std::string& tool) { return tool + " (fsio) " + kVersion; }

Result<std::uint64_t> test_size(const char* variable, std::uint64_t fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  return FSIO_TRY_CTX(parse_size(text), variable);
}

Result<std::optional<std::int64_t>> source_date_epoch() {
  const char* text = std::getenv("SOURCE_DATE_EPOCH");
  if (text == nullptr) return std::optional<std::int64_t>();
  const std::string_view s = text;
  // Digits only: strtoll would take " 7", "+7" and "-5", and wrap nothing
  // past 2^63-1 without a word.
  std::int64_t seconds = 0;
  bool ok = !s.empty();
  for (char c : s) {
    if (c < '0' || c > '9' || seconds > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10) {
      ok = false;
      break;
    }
    seconds = seconds * 10 + (c - '0');
  }
  if (!ok)
    return make_error(Errc::invalid_argument, "SOURCE_DATE_EPOCH '" + std::string(s) +
                                                  "': expected a whole number of seconds since the epoch, 0 or more");
  return std::optional<std::int64_t>(seconds);
}

int parse(CLI::App& app, int argc, char** argv) {
  const std::string tool = std::filesystem::path(argc > 0 && argv[0] && *argv[0] ? argv[0] : "fsio").filename();
  app.set_version_flag("--version", version_line(tool), "Print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version: app.exit prints them on stdout.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? exit_ok : exit_usage;
    // An error says whose it is, like every other message of ours.
    std::fprintf(stderr, "%s: %s (%s --help shows the usage)\n", tool.c_str(), e.what(), tool.c_str());
    return exit_usage;
  }
  return announce_environment(tool.c_str());
}

int announce_environment(const char* tool) {
  auto notes = environment_overrides();
  if (!notes) return report(tool, notes.error());
  for (const std::string& note : *notes) std::fprintf(stderr, "%s: note: %s\n", tool, note.c_str());
  return -1;
}

}  // namespace fsio::cli
