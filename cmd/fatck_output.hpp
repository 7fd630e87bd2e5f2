// fatck's output: the findings and repairs as text (fsck.fat's layout: the
// path, then what is wrong, then what was done) or as one JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fat/check.hpp"
#include "libfsio/stats.hpp"

namespace fsio::cli::fatck {

struct Outcome {
  std::string target;
  bool repairing = false;
  bool verbose = false;
  fat::RepairReport report;
  int exit_code = 0;
  std::uint64_t peak_rss_kib = 0;
  std::optional<fsio::Error> stopped;  // the repair stopped (interrupted, write error)
};

// Text on stdout: with verbose the layout and what was checked, then each
// finding (info only with verbose), the repair steps (verbose), a summary.
void print(const Outcome& out, const fat::CheckResult& result, const fat::Volume& volume);

nlohmann::json to_json(const Outcome& out, const fat::CheckResult& result, const fat::Volume& volume,
                       const fsio::IoStats& stats);

}  // namespace fsio::cli::fatck
