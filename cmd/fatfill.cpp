// fatfill: preallocate files on an existing FAT12/16/32 volume, every FAT
// copy kept in step, crash-ordered. The work is fat::fill; this file binds
// the options, opens the target and prints the report.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"
#include "fat/fill.hpp"
#include "libfsio/size.hpp"

namespace {

using fsio::Errc;
using fsio::Result;

struct Args {
  fat::FillOptions fill;
  std::string target, name = "FILL%04d.BIN", mirror = "batched";
  std::optional<std::string> count, size, start, dir, path, offset;
  bool json = false, stats = false, quiet = false;
};

fsio::Error usage(std::string what) { return fsio::make_error(Errc::invalid_argument, std::move(what)); }

Result<std::uint64_t> number(const std::string& text, const char* what, std::uint64_t min, std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || *end || errno || v < min || v > max)
    return usage(std::string(what) + " '" + text + "': expected a whole number from " + std::to_string(min) + " to " +
                 std::to_string(max));
  return v;
}

// The text options checked and turned into FillOptions before the target is opened.
fsio::Status finish_options(Args& a) {
  auto& f = a.fill;
  if (!a.size) return usage("--size is required (the size of each file, e.g. 1G)");
  f.size = FSIO_TRY_CTX(fsio::parse_size(*a.size), "--size");
  if (f.size > fat::kMaxFileSize)
    return usage("--size " + *a.size + ": FAT holds files of at most 4 GiB - 1 (4294967295 bytes)");
  if (a.path) {
    if (a.count || a.dir || a.start || a.name != "FILL%04d.BIN")
      return usage("--path names one file; it does not go with --count, --dir, --name or --start");
    auto [dir, name] = FSIO_TRY(fat::split_path(*a.path));
    f.dir = dir;
    f.names = {name};
  } else {
    const std::uint64_t count = a.count ? FSIO_TRY(number(*a.count, "--count", 1, fat::kMaxFillCount)) : 1;
    const std::uint64_t start = a.start ? FSIO_TRY(number(*a.start, "--start", 0, 999999999999)) : 0;
    f.names = FSIO_TRY(fat::expand_names(a.name, start, count));
    f.dir = a.dir ? *a.dir : "/";
  }
  if (a.mirror == "batched") f.mirror = fat::MirrorMode::batched;
  else if (a.mirror == "serial") f.mirror = fat::MirrorMode::serial;
  else return usage("--mirror '" + a.mirror + "': expected batched or serial");
  f.when = fat::fill_time(FSIO_TRY(fsio::cli::source_date_epoch()));
  return {};
}

// --offset as mkfat takes it: sectors of the target's logical sector size,
// or bytes with a suffix; inside the target.
Result<std::uint64_t> offset_bytes(const Args& a, const fsio::Device& dev) {
  if (!a.offset) return 0;
  const std::string name = "--offset " + *a.offset;
  const auto v = fsio::parse_size(*a.offset);
  if (!v) return usage(name + ": " + v.error().message());
  const bool plain = a.offset->find_first_not_of("0123456789") == std::string::npos;
  const std::uint64_t ss = dev.logical_sector_size();
  if (plain && *v > dev.size() / ss) return usage(name + ": beyond the end of the target");
  const std::uint64_t bytes = plain ? *v * ss : *v;
  if (bytes % ss) return usage(name + ": not a multiple of the " + std::to_string(ss) + "-byte sector");
  if (bytes >= dev.size())
    return usage(name + ": at or beyond the end of the target (" + std::to_string(dev.size()) + " bytes)");
  return bytes;
}

nlohmann::json report_json(const Args& a, const fat::FillReport& r, fsio::IoQueue& q, double elapsed) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.files) {
    nlohmann::json ex = nlohmann::json::array();
    for (const auto& e : f.extents) ex.push_back({e.first, e.count});
    files.push_back({{"path", f.path},
                     {"size", f.size},
                     {"first_cluster", f.first_cluster()},
                     {"clusters", f.clusters()},
                     {"fragments", f.extents.size()},
                     {"extents", ex},
                     {"replaced", f.replaced}});
  }
  return {
      {"target", a.target},
      {"dry_run", r.dry_run},
      {"geometry", fsio::cli::layout_json(r.layout)},
      {"warnings", r.warnings},
      {"mirror", a.mirror},
      {"sync", a.fill.sync},
      {"zero", a.fill.zero},
      {"created_dirs", r.created_dirs},
      {"files", files},
      {"files_done", r.files_done},
      {"clusters_allocated", r.clusters_allocated},
      {"fragments", r.fragments},
      {"clusters_freed", r.clusters_freed},
      {"free_clusters_before", r.free_before},
      {"free_clusters_after", r.free_after},
      {"bytes_zeroed", r.bytes_zeroed},
      {"fat", {{"copies", r.fat_copies}, {"sectors_per_copy", r.fat_sectors_per_copy}, {"requests", r.fat_requests}}},
      {"dir_sectors", r.dir_sectors},
      {"fsinfo_writes", r.fsinfo_writes},
      {"flushes", r.flushes},
      {"write_stats", fsio::cli::to_json(r.write_io)},
      {"stats", fsio::cli::to_json(q.stats())},
      {"engine", q.engine().name()},
      {"direct", q.device().direct()},
      {"plan_seconds", r.plan_seconds},
      {"write_seconds", r.write_seconds},
      {"read_ahead_seconds", r.read_ahead_seconds},
      {"elapsed_seconds", elapsed}};
}

void print_report(const Args& a, const fat::FillReport& r, fsio::IoQueue& q, double elapsed) {
  const char* would = r.dry_run ? "would " : "";
  std::printf("%s: %s\n", a.target.c_str(), fsio::cli::layout_summary(r.layout).c_str());
  for (const auto& d : r.created_dirs) std::printf("%screate directory %s\n", r.dry_run ? "would " : "", d.c_str());
  if (r.dry_run)
    for (const auto& f : r.files)
      std::printf("would %s %s: %" PRIu32 " bytes, %" PRIu64 " clusters from %" PRIu32 " in %zu fragment%s\n",
                  f.replaced ? "replace" : "write", f.path.c_str(), f.size, f.clusters(), f.first_cluster(),
                  f.extents.size(), f.extents.size() == 1 ? "" : "s");
  std::printf("%s%s %zu file%s of %s in %s: %" PRIu64 " clusters in %" PRIu64 " fragments; %" PRIu32
              " clusters free %s\n",
              would, r.dry_run ? "write" : "wrote", r.files.size(), r.files.size() == 1 ? "" : "s",
              fsio::format_size(a.fill.size).c_str(), a.fill.dir.c_str(), r.clusters_allocated, r.fragments,
              r.free_after, r.dry_run ? "after" : "now");
  if (!r.dry_run && !a.fill.zero) std::printf("not zeroed (--no-zero): the files hold what the clusters held before\n");
  if (!a.stats || r.dry_run) return;
  const auto& s = r.write_io;
  std::printf("FAT: %" PRIu64 " sectors per copy x %" PRIu32 " copies in %" PRIu64 " requests (%s); %" PRIu64
              " directory sectors; %" PRIu64 " FSInfo writes; %" PRIu64 " flushes; %s zeroed\n",
              r.fat_sectors_per_copy, r.fat_copies, r.fat_requests, a.mirror.c_str(), r.dir_sectors, r.fsinfo_writes,
              r.flushes, fsio::format_size(r.bytes_zeroed).c_str());
  std::printf("writing: %" PRIu64 " requests queued, %" PRIu64 " submitted after merging, %" PRIu64
              " syscalls, %s written, %.3f s (%.3f s reading ahead); planning %.3f s; whole run %.3f s (%s engine, "
              "%s)\n",
              s.requests_queued, s.requests_submitted, s.syscalls, fsio::format_size(s.bytes_written).c_str(),
              r.write_seconds, r.read_ahead_seconds, r.plan_seconds, elapsed, q.engine().name(),
              q.device().direct() ? "direct" : "buffered");
}

int run(Args& a) {
  const char* tool = "fatfill";
  const auto t0 = std::chrono::steady_clock::now();
  if (auto st = finish_options(a); !st) return fsio::cli::report(tool, st.error());
  std::optional<fsio::InterruptGuard> interrupt;  // a dry run writes nothing: Ctrl-C just ends it
  if (!a.fill.dry_run) interrupt.emplace();
  fsio::OpenOptions oo;
  oo.write = !a.fill.dry_run;
  oo.check_write = a.fill.dry_run;  // the dry run meets the same refusals
  auto dev = fsio::Device::open(a.target, oo);
  if (!dev) return fsio::cli::report(tool, dev.error());
  auto off = offset_bytes(a, *dev);
  if (!off) return fsio::cli::report(tool, off.error());
  auto queue = fsio::IoQueue::create(*dev);
  if (!queue) return fsio::cli::report(tool, queue.error());
  auto vol = fat::Volume::open(*queue, {*off, fat::fill_fat_cache()});
  if (!vol) return fsio::cli::report(tool, vol.error());
  std::uint64_t total = a.fill.size * a.fill.names.size();  // < 2^32 * 2^17: no overflow
  fsio::Progress progress("fatfill", total, !a.quiet && !a.json && fsio::stderr_is_terminal());
  auto rep = fat::fill(*vol, a.fill, &progress);
  if (!rep) return fsio::cli::report(tool, rep.error());
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet && !a.json)
    for (const auto& w : rep->warnings) std::fprintf(stderr, "fatfill: warning: %s\n", w.c_str());
  if (a.json) std::cout << report_json(a, *rep, *queue, elapsed).dump(2) << '\n';
  else if (!a.quiet) print_report(a, *rep, *queue, elapsed);
  return fsio::cli::exit_ok;
}

void text_option(CLI::App& app, const std::string& name, std::optional<std::string>& out, const std::string& help) {
  app.add_option_function<std::string>(
      name, [&out](const std::string& v) { out = v; }, help);
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Args a;
  auto& f = a.fill;
  CLI::App app{"Preallocate files on an existing FAT12, FAT16 or FAT32 volume, every FAT copy kept in step."};
  app.add_option("TARGET", a.target, "block device or image file holding the volume")->required();
  text_option(app, "--size", a.size, "size of each file (512, 4K, 1MiB, 1G; at most 4 GiB - 1)");
  text_option(app, "--count", a.count, "number of files (1..65536, default 1)");
  app.add_option("--name", a.name, "file name pattern, %d or %0Nd for the number (default FILL%04d.BIN)");
  text_option(app, "--start", a.start, "number of the first file (default 0)");
  text_option(app, "--dir", a.dir, "directory for the files, made as needed (default /)");
  text_option(app, "--path", a.path, "one file at this path (instead of --count/--name/--dir)");
  app.add_flag("--contiguous", f.contiguous, "every file in one run of clusters, or write nothing");
  app.add_flag(
      "--no-zero", [&f](std::int64_t) { f.zero = false; },
      "do not zero the clusters: the files expose what they held before");
  app.add_option("--mirror", a.mirror, "FAT copy writes: batched (default) or serial (one request per sector)");
  app.add_flag("--sync", f.sync, "each file durable before the next begins (flushes per file)");
  app.add_flag("-f,--force", f.force, "replace files that exist (never directories)");
  text_option(app, "--offset", a.offset, "start of the volume: sectors, or bytes with a suffix");
  app.add_flag("--dry-run", f.dry_run, "print what would be allocated, or the refusal, and write nothing");
  app.add_flag("--json", a.json, "one JSON document on stdout");
  app.add_flag("--stats", a.stats, "print write and I/O statistics");
  app.add_flag("-q,--quiet", a.quiet, "print nothing but errors");
  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc;
  return run(a);
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
