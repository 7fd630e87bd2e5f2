// What every fsio command shares: error reporting, exit codes, size options,
// the stats JSON. Tools stay short by leaning on this.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "libfsio/result.hpp"
#include "libfsio/stats.hpp"

// Declared only: a file that builds a CLI::App includes <CLI/CLI.hpp>
// itself. CLI11 is header-only and costs seconds per file to compile; most
// of the tools' files print and never parse.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace fsio::cli {

// 130 is what a shell reports for a process killed by SIGINT (128 + 2):
// scripts see an interrupted run as interrupted, not as a failed one.
enum Exit : int { exit_ok = 0, exit_failure = 1, exit_usage = 2, exit_interrupted = 130 };

// What main returns: RC, except when RC is exit_interrupted because SIGINT
// or SIGTERM arrived (InterruptGuard). Then, with every message out, the
// process ends by that signal's default action, as a Ctrl-C'd tool without
// a handler would: a shell running a script stops at it, where after a
// plain exit 130 it goes on to the next command. The shell still reports
// 130 (128 + SIGINT), or 143 for SIGTERM. Where the signal is ignored (a
// background job), RC is returned.
int finish(int rc);

// The exit code for an error: Errc::invalid_argument -> exit_usage,
// Errc::interrupted -> exit_interrupted, anything else -> exit_failure.
int exit_code(const Error& error);

// Prints "tool: message" on stderr and returns exit_code(error).
int report(const char* tool, const Error& error);

// Adds an option taking a size ("4K", "1MiB", "4KB", "512"); the parsed byte
// count lands in *out. Bad text is a usage error naming the option.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::uint64_t* out, const std::string& help);

// Adds an option taking a whole number 0..2^32-1 (a uid, a gid); "-1",
// "0x10", "1e3" and values past 2^32-1 are usage errors naming the option.
CLI::Option* add_u32_option(CLI::App& app, const std::string& name, std::uint32_t* out, const std::string& help);

nlohmann::json to_json(const IoStats& stats);

// Runs app.parse and maps CLI11's errors to exit_usage (help -> exit_ok),
// each said as "tool: message" (the tool named by argv[0]).
// Then, before the tool does anything, says on stderr which test overrides
// are set (FSIO_FAULT, FSIO_ENGINE: "tool: note: FSIO_FAULT=fail:3 is set:
// ..."), even with --quiet, so an injected error is never taken for the
// disk's; a malformed one is a usage error. Returns -1 when the tool should go on.
int parse(CLI::App& app, int argc, char** argv);

// The second half of parse(), for a tool that reads its own command line:
// the test overrides said on stderr; a malformed one is exit_usage; -1 to go on.
int announce_environment(const char* tool);

// SOURCE_DATE_EPOCH (reproducible-builds.org): the seconds it holds, or
// nullopt when it is not set. fat/ and ext/ never read the environment; every
// tool that stamps times reads it here, so a malformed value (not digits
// only, empty, or past 2^63-1) is refused with the same words everywhere:
// Errc::invalid_argument, "SOURCE_DATE_EPOCH 'soon': expected a whole number
// of seconds since the epoch, 0 or more".
Result<std::optional<std::int64_t>> source_date_epoch();

// A size a test sets through the environment (FSIO_META_CACHE,
// FSIO_DATA_BATCH: small caches and batches, to exercise spills and
// readers): the variable's size when set and not empty, else `fallback`; a
// malformed one is parse_size's error naming the variable.
Result<std::uint64_t> test_size(const char* variable, std::uint64_t fallback);

// What `TOOL --version` prints, the same shape for every tool:
// "mkfat (fsio) 0.1.0".
std::string version_line(const std::string& tool);

}  // namespace fsio::cli
