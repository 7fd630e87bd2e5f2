#include "cmd/fatck_output.hpp"

#include <cinttypes>
#include <cstdio>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"

namespace fsio::cli::fatck {

namespace {

// What became of a finding's action: done, not done and why, or nothing to do.
std::string fate(const Outcome& out, const fat::CheckFinding& f) {
  if (f.action.empty()) return "";
  if (f.severity != fat::Severity::error) return f.action;
  if (!f.fixable) return "left: " + f.action;
  if (!out.repairing) return "not fixed (-n): " + f.action;
  if (out.report.complete) return "fixed: " + f.action;
  return "not done (the repair stopped): " + f.action;
}

bool fixed(const Outcome& out, const fat::CheckFinding& f) {
  return out.repairing && out.report.complete && f.fixable && f.severity == fat::Severity::error;
}

std::string status(const Outcome& out, const fat::CheckResult& r) {
  const std::uint64_t errors = r.count(fat::Severity::error), left = r.unfixable_errors();
  const std::uint64_t warnings = r.count(fat::Severity::warning);
  std::string s;
  if (!errors) s = "clean";
  else if (!out.repairing) s = std::to_string(errors) + " error" + (errors == 1 ? "" : "s") + ", not fixed (-n)";
  else if (!out.report.complete) s = std::to_string(errors) + " error" + (errors == 1 ? "" : "s") + ", repair stopped";
  else
    s = std::to_string(errors) + " error" + (errors == 1 ? "" : "s") + ", " + std::to_string(errors - left) + " fixed" +
        (left ? ", " + std::to_string(left) + " left" : "");
  if (warnings) s += ", " + std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s");
  return s;
}

}  // namespace

void print(const Outcome& out, const fat::CheckResult& r, const fat::Volume& vol) {
  if (out.verbose) {
    std::printf("%s: %s\n", out.target.c_str(), layout_summary(vol.layout()).c_str());
    for (const auto& line : r.checked) std::printf("checked %s\n", line.c_str());
  }
  for (const auto& f : r.findings) {
    if (f.severity == fat::Severity::info && !out.verbose) continue;
    std::printf("%s: %s: %s\n", fat::severity_name(f.severity), f.where.c_str(), f.message.c_str());
    if (const std::string what = fate(out, f); !what.empty()) std::printf("  %s\n", what.c_str());
  }
  for (std::size_t k = 0; k < fat::kCheckKinds; ++k)
    if (r.omitted[k])
      std::printf("... and %" PRIu64 " more %s findings\n", r.omitted[k], fat::check_kind_name(fat::CheckKind(k)));
  if (out.verbose)
    for (const auto& step : out.report.steps) std::printf("repair: %s\n", step.c_str());
  const auto& c = r.counts;
  std::printf("%s: %" PRIu64 " file%s, %" PRIu64 " director%s, %" PRIu64 "/%" PRIu64 " clusters; %s\n",
              out.target.c_str(), c.files, c.files == 1 ? "" : "s", c.directories, c.directories == 1 ? "y" : "ies",
              c.used, c.clusters, status(out, r).c_str());
}

nlohmann::json to_json(const Outcome& out, const fat::CheckResult& r, const fat::Volume& vol,
                       const fsio::IoStats& stats) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"class", fat::check_kind_name(f.kind)},
                        {"severity", fat::severity_name(f.severity)},
                        {"where", f.where},
                        {"message", f.message},
                        {"action", f.action},
                        {"fixable", f.fixable},
                        {"fixed", fixed(out, f)}});
  nlohmann::json omitted = nlohmann::json::object();
  for (std::size_t k = 0; k < fat::kCheckKinds; ++k)
    if (r.omitted[k]) omitted[fat::check_kind_name(fat::CheckKind(k))] = r.omitted[k];
  const auto& c = r.counts;
  const auto& rep = out.report;
  const std::uint64_t errors = r.count(fat::Severity::error), left = r.unfixable_errors();
  nlohmann::json j = {
      {"target", out.target},
      {"mode", out.repairing ? "repair" : "check"},
      {"geometry", layout_json(vol.layout())},
      {"findings", findings},
      {"omitted", omitted},
      {"errors", errors},
      {"warnings", r.count(fat::Severity::warning)},
      {"fixed", out.repairing && rep.complete ? errors - left : 0},
      {"left", out.repairing && rep.complete ? left : errors},
      {"counts",
       {{"files", c.files},
        {"directories", c.directories},
        {"clusters", c.clusters},
        {"used", c.used},
        {"bad", c.bad},
        {"free_after", c.free_after},
        {"lost", c.lost},
        {"lost_chains", c.lost_chains},
        {"cut_off", c.cut_off},
        {"fat_bytes_read", c.fat_bytes_read}}},
      {"checked", r.checked},
      {"repair",
       {{"steps", rep.steps},
        {"complete", rep.complete},
        {"copies_mirrored", rep.copies_mirrored},
        {"entries_cut", rep.entries_cut},
        {"clusters_freed", rep.clusters_freed},
        {"slots_written", rep.slots_written},
        {"fsinfo_written", rep.fsinfo_written},
        {"stopped", out.stopped ? out.stopped->message() : ""}}},
      {"exit_code", out.exit_code},
      {"peak_rss_kib", out.peak_rss_kib},
      {"stats", fsio::cli::to_json(stats)},
  };
  return j;
}

}  // namespace fsio::cli::fatck
