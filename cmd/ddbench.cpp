// ddbench: a dd/fio-style benchmark of a device or image file.
// Options follow fio's names; the work is fsio::run_bench (libfsio/bench.hpp).
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <iostream>

#include "cmd/common.hpp"
#include "libfsio/bench.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace {

using fsio::BenchResult;

// fio's percentile list, keyed the way fio prints them ("99.900000").
constexpr double percentiles[] = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

nlohmann::json to_json(const std::string& target, const BenchResult& r) {
  nlohmann::json pct = nlohmann::json::object();
  for (double p : percentiles) {
    char key[32];
    std::snprintf(key, sizeof key, "%f", p);
    pct[key] = r.clat.percentile(p);
  }
  nlohmann::json j = {
      {"target", target}, {"rw", fsio::bench_rw_name(r.rw)}, {"bs", r.bs}, {"iodepth", r.iodepth},
      {"engine", r.engine}, {"direct", r.direct}, {"offset", r.range.begin},
      {"size", r.range.end - r.range.begin}, {"io_bytes", r.io_bytes}, {"bw_bytes", r.bw_bytes()},
      {"iops", r.iops()}, {"runtime", r.runtime_ms()}, {"total_ios", r.ios}, {"eod_truncated", r.eod_truncated},
      {"clat_ns", {{"min", r.clat.min()}, {"max", r.clat.max()}, {"mean", r.clat.mean()},
                   {"p50", r.clat.percentile(50)}, {"p99", r.clat.percentile(99)},
                   {"p99.9", r.clat.percentile(99.9)}, {"percentile", pct}}},
      {"stats", fsio::cli::to_json(r.stats)}, {"interrupted", r.interrupted},
      {"runtime_capped", r.runtime_capped}};
  if (!r.note.empty()) j["note"] = r.note;
  if (r.verify) {
    auto& v = *r.verify;
    j["verify"] = {{"bytes_checked", v.bytes_checked}, {"bad_blocks", v.bad_blocks}, {"complete", v.complete},
                   {"ok", r.verify_ok()}};
    if (v.first)
      j["verify"]["first_mismatch"] = {{"offset", v.first->offset}, {"expected", v.first->expected},
                                       {"actual", v.first->actual}};
  }
  return j;
}

// fio's compact numbers: 812, 12.3k, 1234k.
std::string compact(double v) {
  char b[32];
  if (v < 10000) std::snprintf(b, sizeof b, "%.0f", v);
  else if (v < 1e6) std::snprintf(b, sizeof b, "%.1fk", v / 1e3);
  else std::snprintf(b, sizeof b, "%.0fk", v / 1e3);
  return b;
}

void print_human(const std::string& target, const BenchResult& r) {
  std::printf("ddbench: %s %s: bs=%s iodepth=%u engine=%s %s\n", fsio::bench_rw_name(r.rw), target.c_str(),
              fsio::format_size(r.bs).c_str(), r.iodepth, r.engine.c_str(), r.direct ? "direct" : "buffered");
  const double bw = r.bw_bytes();
  std::printf("  %s: IOPS=%s, BW=%.1fMiB/s (%.1fMB/s)(%s/%" PRIu64 "msec)\n", fsio::bench_rw_name(r.rw),
              compact(r.iops()).c_str(), bw / 1048576, bw / 1e6, fsio::format_size(r.io_bytes).c_str(),
              r.runtime_ms());
  std::printf("    clat (usec): min=%.1f, avg=%.1f, max=%.1f; p50=%.1f, p99=%.1f, p99.9=%.1f\n",
              double(r.clat.min()) / 1e3, r.clat.mean() / 1e3, double(r.clat.max()) / 1e3,
              double(r.clat.percentile(50)) / 1e3, double(r.clat.percentile(99)) / 1e3,
              double(r.clat.percentile(99.9)) / 1e3);
  const auto& s = r.stats;
  std::printf("    requests: %" PRIu64 " queued, %" PRIu64 " submitted, %" PRIu64 " syscalls, %" PRIu64
              " retries, peak %u in flight\n",
              s.requests_queued, s.requests_submitted, s.syscalls, s.retries, s.peak_in_flight);
  if (r.eod_truncated)
    std::printf("  end of device: %" PRIu64 " bytes in a partial last sector cannot be transferred\n",
                r.eod_truncated);
  if (r.verify)
    std::printf("  verify: %s checked, %s\n", fsio::format_size(r.verify->bytes_checked).c_str(),
                r.verify->first       ? "MISMATCH"
                : r.verify->complete ? "no mismatch"
                                     : "no mismatch so far, but interrupted: NOT verified");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fsio::cli;
  fsio::BenchOptions o;
  std::string target, rw = "read", engine = "auto";
  std::uint64_t create = 0;
  bool buffered = false, no_merge = false, json = false, quiet = false;

  CLI::App app{"Measure sequential and random throughput, IOPS and latency of a device or file."};
  app.add_option("TARGET", target, "block device or image file")->required();
  app.add_option("--rw", rw, "read, write, randread or randwrite")
      ->check(CLI::IsMember({"read", "write", "randread", "randwrite"}))->capture_default_str();
  add_size_option(app, "--bs", &o.bs, "bytes per request (default 1M)");
  add_size_option(app, "--size", &o.size, "bytes to cover (default: to the end of the target)");
  add_size_option(app, "--offset", &o.offset, "where to start, bytes into the target");
  app.add_option("--iodepth", o.iodepth, "requests in flight")->capture_default_str();
  app.add_option("--engine", engine, "uring, psync or auto")->capture_default_str();
  auto* direct = app.add_flag("--direct", o.direct, "O_DIRECT (the default)");
  app.add_flag("--buffered", buffered, "go through the page cache")->excludes(direct);
  app.add_flag("--sync", o.sync, "every write carries RWF_DSYNC");
  app.add_option("--batch", o.batch, "requests per submit (default: submit whenever there is room)");
  app.add_flag("--no-merge", no_merge, "never merge contiguous requests of a batch");
  app.add_option("--runtime", o.runtime, "stop issuing after this many seconds");
  app.add_flag("--time-based", o.time_based, "go over the range again until --runtime is up (fio's time_based)");
  auto* create_opt = add_size_option(app, "--create", &create, "create or extend the target file to SIZE");
  app.add_flag("--verify", o.verify, "write: stamp, read back and check; read: check the stamps");
  app.add_option_function<std::string>(
      "--seed",
      [&o](const std::string& text) {
        // CLI11 would take "-1" as 2^64-1; a seed is a plain 64-bit number.
        const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
        const char* first = text.data() + (hex ? 2 : 0);
        auto [end, ec] = std::from_chars(first, text.data() + text.size(), o.seed, hex ? 16 : 10);
        if (first == text.data() + text.size() || ec != std::errc() || end != text.data() + text.size())
          throw CLI::ValidationError("--seed", "'" + text + "': expected a number from 0 to 2^64-1");
      },
      "seed stamped into the --verify pattern");
  app.add_flag("--json", json, "one JSON document on stdout (fio's field names)");
  app.add_flag("-q,--quiet", quiet, "no progress, no summary; exit code only");
  app.add_flag("-f,--force", o.force, "write even over a filesystem or partition table");
  if (int rc = parse(app, argc, argv); rc >= 0) return rc;

  o.rw = *fsio::parse_bench_rw(rw);
  if (buffered) o.direct = false;
  o.merge = !no_merge;
  if (create_opt->count() > 0) o.create_size = create;
  auto kind = fsio::parse_engine_kind(engine);
  if (!kind) return report("ddbench", kind.error());
  o.engine = *kind;

  auto dev = fsio::open_bench_target(target, o);
  if (!dev) return report("ddbench", dev.error());
  if (!dev->direct_fallback().empty() && !quiet) std::fprintf(stderr, "ddbench: %s\n", dev->direct_fallback().c_str());

  fsio::InterruptGuard interrupt;
  const std::uint64_t start = std::min(o.offset, dev->size());
  // A time-based run has no byte total to count towards: the bar shows bytes and rate only.
  fsio::Progress progress("ddbench", o.time_based ? 0 : o.size ? o.size : dev->size() - start,
                          !quiet && !json && fsio::stderr_is_terminal());
  auto res = fsio::run_bench(*dev, o, &progress);
  if (!res) {
    // A file --create made for a run that failed is only in the way (a
    // full disk stays full): remove it, and say so.
    std::string msg = res.error().message();
    if (dev->created()) {
      auto rm = dev->remove_created();
      msg += rm ? "; removed " + target + ", which --create had made" : "; could not remove " + target;
    }
    return report("ddbench", fsio::Error{res.error().code, 0, msg});
  }
  if (!res->note.empty() && !quiet) std::fprintf(stderr, "ddbench: %s: %s\n", target.c_str(), res->note.c_str());

  if (json) std::cout << to_json(target, *res).dump(2) << '\n';
  else if (!quiet) print_human(target, *res);
  std::fflush(stdout);

  // A mismatch is a failure even when the run was cut short; otherwise an
  // interrupted run exits 130, as if SIGINT had ended it.
  int rc = exit_ok;
  if (res->interrupted) {
    std::fprintf(stderr, "ddbench: interrupted by signal %d after %s%s\n", fsio::InterruptGuard::signal_number(),
                 fsio::format_size(res->io_bytes).c_str(),
                 res->verify ? "; the verify is incomplete, so nothing was verified" : "");
    rc = exit_interrupted;
  }
  if (res->verify && res->verify->first) {
    std::fprintf(stderr, "ddbench: %s: verify: %s (%" PRIu64 " bad blocks)\n", target.c_str(),
                 fsio::describe(*res->verify->first, o.seed).c_str(), res->verify->bad_blocks);
    rc = exit_failure;
  }
  return rc;
}
