// What every fsio command shares: error reporting, exit codes, size options,
// the stats JSON. Tools stay short by leaning on this.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "libfsio/result.hpp"
#include "libfsio/stats.hpp"

namespace fsio::cli {

enum Exit : int { exit_ok = 0, exit_failure = 1, exit_usage = 2 };

// Prints "tool: message" on stderr and returns the exit code for the error:
// Errc::invalid_argument -> exit_usage, anything else -> exit_failure.
int report(const char* tool, const Error& error);

// Adds an option taking a size ("4K", "1MiB", "4KB", "512"); the parsed byte
// count lands in *out. Bad text is a usage error naming the option.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::uint64_t* out,
                             const std::string& help);

nlohmann::json to_json(const IoStats& stats);

// Runs app.parse and maps CLI11's errors to exit_usage (help -> exit_ok).
// Returns -1 when parsing succeeded and the tool should go on.
int parse(CLI::App& app, int argc, char** argv);

}  // namespace fsio::cli
