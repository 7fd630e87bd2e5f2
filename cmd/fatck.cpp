// fatck: check a FAT12/16/32 volume as fsck.fat does, in a bitmap's worth of
// memory, and with -a repair it in crash-safe order. Exit codes are
// e2fsck's: 0 clean, 1 errors fixed, 4 errors left, 8 operational error,
// 16 usage; 130 when Ctrl-C stopped it. Under fsck.fat's names it is
// fsck.fat instead (fatck_peer.cpp). The work is fat::check_volume and
// fat::repair_volume; this file parses, prints and maps to exit codes.
#include <CLI/CLI.hpp>
#include <sys/resource.h>

#include <cstdio>
#include <iostream>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"
#include "cmd/fatck_output.hpp"
#include "cmd/fatck_peer.hpp"
#include "fat/check.hpp"
#include "fat/check_target.hpp"
#include "libfsio/size.hpp"

namespace {

using namespace fsio::cli::fatck;

constexpr int kUsage = 16, kOperational = 8, kLeft = 4, kFixed = 1;

struct Args {
  std::string target, offset;
  std::uint32_t fat_copy = 0;  // -F: fsck.fat's numbering, 1 the first copy; 0 automatic
  bool check_only = false, repair = false, dry_run = false, verbose = false, json = false, force = false, quiet = false;
};

int fail(const Args& a, const fsio::Error& e, int code) {
  std::fprintf(stderr, "fatck: %s\n", e.message().c_str());
  if (a.json)
    std::cout << nlohmann::json{{"target", a.target}, {"error", e.message()}, {"exit_code", code}}.dump(2) << '\n';
  return code;
}

int code_for(const fsio::Error& e) {
  return e.code == fsio::Errc::interrupted ? fsio::cli::exit_interrupted : kOperational;
}

fsio::Result<fat::CheckTargetOptions> target_options(const Args& a) {
  fat::CheckTargetOptions o;
  o.repair = a.repair;
  o.refuse_like_repair = a.dry_run;
  if (a.offset.empty()) return o;
  auto v = fsio::parse_size(a.offset);
  if (!v) return std::move(v).error().wrap("--offset");
  o.offset = *v;
  o.offset_in_sectors = a.offset.find_first_not_of("0123456789") == std::string::npos;
  return o;
}

std::uint64_t peak_rss_kib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return std::uint64_t(ru.ru_maxrss);
}

int run(const Args& a) {
  fsio::InterruptGuard interrupt;  // -n too: Ctrl-C ends with a word, not mid-line
  const auto opts = target_options(a);
  if (!opts) return fail(a, opts.error(), kUsage);
  auto target = fat::open_check_target(a.target, *opts);
  if (!target) return fail(a, target.error(), code_for(target.error()));
  if ((*target)->in_use && !a.quiet)
    std::fprintf(stderr,
                 "fatck: warning: %s is %s; checking it read-only: what the mounted filesystem changes "
                 "meanwhile can show up as damage\n",
                 a.target.c_str(), fsio::describe_use(*(*target)->in_use).c_str());
  if (auto st = fat::open_check_volume(**target); !st) return fail(a, st.error(), code_for(st.error()));
  if (auto st = fat::choose_fat_copy(**target, a.fat_copy); !st) return fail(a, st.error(), code_for(st.error()));
  fat::Volume& vol = *(*target)->volume;
  const bool bar = !a.quiet && !a.json && fsio::stderr_is_terminal();
  std::optional<fsio::Progress> progress(std::in_place, "fatck", fat::check_work(vol), bar);
  auto result = fat::check_volume(vol, {1000, &*progress});
  progress.reset();
  if (!result) return fail(a, result.error(), code_for(result.error()));

  Outcome out{a.target, a.repair, a.verbose, {}, 0, 0, std::nullopt};
  std::optional<fsio::Error> stopped;
  if (a.repair && !result->plan.empty()) {
    fsio::Progress repair_bar("fatck repair", fat::check_work(vol), bar);
    auto done = fat::repair_volume(vol, result->plan, out.report, &repair_bar);
    if (!done) stopped = done.error();
  }
  // e2fsck's sum: 1 errors fixed, 4 errors left, 8 operational error.
  const std::uint64_t errors = result->count(fat::Severity::error), left = result->unfixable_errors();
  int code = 0;
  if (!a.repair) code = errors ? kLeft : 0;
  else if (!stopped) code = (errors > left ? kFixed : 0) | (left ? kLeft : 0);
  else code = stopped->code == fsio::Errc::interrupted ? fsio::cli::exit_interrupted : kOperational | kLeft;
  out.exit_code = code;
  out.peak_rss_kib = peak_rss_kib();
  out.stopped = stopped;
  if (a.json) std::cout << to_json(out, *result, vol, (*target)->queue->stats()).dump(2) << '\n';
  else if (!a.quiet || code) print(out, *result, vol);
  // An I/O error names the target itself; an interruption is said about it too.
  if (stopped) std::fprintf(stderr, "fatck: %s\n", fsio::Error(*stopped).at(a.target).message().c_str());
  return code;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  if (argc > 0 && is_fsck_name(argv[0])) return fsck_main(argc, argv);
  Args a;
  bool preen = false, yes = false, interactive = false;
  CLI::App app{"Check a FAT12, FAT16 or FAT32 filesystem, and with -a repair it, as fsck.fat does."};
  app.add_option("TARGET", a.target, "block device or image file")->required();
  app.add_flag("-n", a.check_only, "check only: open the target read-only and change nothing (the default)");
  app.add_flag("-a", a.repair, "repair automatically, making fsck.fat -a's choices");
  app.add_flag("-y", yes, "the same as -a");
  app.add_flag("-p", preen, "the same as -a (fsck's preen)");
  app.add_flag("--dry-run", a.dry_run, "-n, refusing what -a refuses (a target in use or read-only): what -a would do");
  app.add_flag("-r", interactive, "interactive repair: not supported, use -a or -n");
  app.add_flag("-f,--force", a.force,
               "check even a clean volume (fatck always does; never overrides the in-use "
               "or read-only refusals)");
  app.add_flag("-v,--verbose", a.verbose, "say what was checked, and each repair step");
  app.add_flag("--json", a.json, "one JSON document on stdout: findings, repairs, counts, exit code");
  app.add_flag("-q,--quiet", a.quiet, "print nothing on a clean volume");
  app.add_option("--offset", a.offset, "start of the filesystem: sectors, or bytes with a suffix (1MiB)");
  app.add_option("-F,--fat-copy", a.fat_copy,
                 "the FAT copy to read, as fsck.fat -F counts: 1 the first (copy 0 in the findings), 2 the "
                 "second; 0 chooses as fsck.fat does (the default). -a writes it over the others where they differ")
      ->check(CLI::Range(0u, 255u))
      ->type_name("NUM");
  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc == fsio::cli::exit_ok ? rc : kUsage;
  a.repair = a.repair || yes || preen;
  if (interactive) {
    std::fprintf(stderr, "fatck: -r: interactive repair is not supported; use -a to repair or -n to check\n");
    return kUsage;
  }
  if (a.repair && (a.check_only || a.dry_run)) {
    std::fprintf(stderr, "fatck: -n or --dry-run and -a/-y/-p: choose checking only or repairing\n");
    return kUsage;
  }
  return run(a);
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
