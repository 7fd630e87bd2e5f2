// fatck as fsck.fat 4.2 (fatck_peer.hpp): the options, banner, findings in
// fsck.fat's layout (the path, then what is wrong and what is done, indented),
// "*** Filesystem was changed ***", the summary line and the exit codes.
#include "cmd/fatck_peer.hpp"

#include <getopt.h>
#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cmd/common.hpp"
#include "cmd/version.hpp"
#include "fat/check.hpp"
#include "fat/check_target.hpp"
#include "fat/codepage.hpp"

namespace fsio::cli::fatck {

namespace {

// fsck.fat's exit codes: fsck.fat.c returns 1 when anything was (or with -n
// would be) changed, usage() exits 2, fs_open() 6; die() exits 1.
constexpr int kClean = 0, kChanged = 1, kUsage = 2, kCannotOpen = 6;

struct PeerArgs {
  std::string tool, target;
  bool rw = true, interactive = true;  // fsck.fat's default is -r
  bool salvage = false, boot_only = false, verbose = false, write_now = false;
  long fat_table = 0;  // -F: 1 the first FAT copy, 2 the second; 0 chosen as read_fat does
};

void usage(const std::string& tool) {
  std::fprintf(stderr,
               "Usage: %s [OPTIONS] DEVICE\n"
               "Check FAT filesystem on DEVICE for errors (fsio fatck under fsck.fat's name).\n\n"
               "Options:\n"
               "  -a              automatically repair the filesystem\n"
               "  -b              make read-only boot sector check\n"
               "  -c N            use DOS codepage N to decode short file names (default: 850)\n"
               "  -f              salvage unused chains to files\n"
               "  -F NUM          specify FAT table NUM used for filesystem access\n"
               "  -n              no-op, check non-interactively without changing\n"
               "  -p              same as -a, for compat with other *fsck\n"
               "  -v              verbose mode\n"
               "  --variant=TYPE  handle variant TYPE of the filesystem (standard only)\n"
               "  -w              write changes to disk immediately\n"
               "  -y              same as -a, for compat with other *fsck\n"
               "  --help          print this message\n"
               "Refused, each with its reason: -A, -d, -l, -r (and no mode), -S, -t, -u, -U, -V.\n"
               "See fatck(8), \"Under fsck.fat's names\".\n",
               tool.c_str());
}

int refuse(const PeerArgs& a, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", a.tool.c_str(), what.c_str());
  return kUsage;
}

// The options fsck.fat 4.2 has and fatck does not carry out, with why.
const char* refusal(int c) {
  switch (c) {
    case 'A': return "-A: the Atari variant is not supported by fatck";
    case 'd': return "-d: dropping files by name is not supported by fatck";
    case 'u': return "-u: undeleting files is not supported by fatck";
    case 'l': return "-l: listing every path is not supported by fatck";
    case 'S': return "-S: the stricter short-name rule is not supported by fatck";
    case 't': return "-t: testing clusters for bad sectors is not supported by fatck";
    case 'U': return "-U: the upper-case-only label rule is not supported by fatck";
    case 'V': return "-V: a verification pass is not supported; run it again with -n to verify";
    default: return nullptr;
  }
}

// -c N: a DOS code page iconv knows.
bool codepage_ok(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text, &end, 10);
  return *text && !*end && !errno && n > 0 && n <= 0xFFFF && fat::check_codepage("UTF-8", unsigned(n));
}

// fsck.fat's -F NUM: digits (a sign allowed, as strtol reads them), 0 to 255.
bool parse_fat_table(const char* text, long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtol(text, &end, 10);
  return *text && !std::isspace(static_cast<unsigned char>(*text)) && !*end && !errno && out >= 0 && out <= 255;
}

// Reads argv as fsck.fat does: the mode options in order, the last one wins.
// Returns -1 to go on, else the exit code.
int parse(int argc, char** argv, PeerArgs& a) {
  enum { kHelp = 1000, kVariant, kCodepage };
  static const option longs[] = {{"variant", required_argument, nullptr, kVariant},
                                 {"help", no_argument, nullptr, kHelp},
                                 {"codepage", required_argument, nullptr, kCodepage},
                                 {nullptr, 0, nullptr, 0}};
  opterr = 0;
  optind = 0;
  for (int c; (c = getopt_long(argc, argv, ":Aac:d:bfF:lnprStu:UvVwy", longs, nullptr)) != -1;) {
    if (const char* why = refusal(c)) return refuse(a, why);
    switch (c) {
      case 'a':
      case 'p':
      case 'y': a.rw = true, a.interactive = false, a.salvage = true; break;
      case 'b': a.rw = false, a.interactive = false, a.boot_only = true; break;
      case 'f': a.salvage = true; break;
      case 'n': a.rw = false, a.interactive = false; break;
      case 'r': a.rw = true, a.interactive = true; break;
      case 'v': a.verbose = true; break;
      case 'w': a.write_now = true; break;
      case 'c':
        if (!codepage_ok(optarg)) return refuse(a, std::string("Invalid codepage : ") + optarg);
        break;
      case 'F':
        if (!parse_fat_table(optarg, a.fat_table)) {
          std::fprintf(stderr, "Invalid FAT table : %s\n", optarg);
          usage(a.tool);
          return kUsage;
        }
        break;
      case kVariant:
        if (!strcasecmp(optarg, "atari")) return refuse(a, "--variant=atari: not supported by fatck");
        if (strcasecmp(optarg, "standard")) return refuse(a, std::string("Unknown variant: ") + optarg);
        break;
      case kCodepage: return refuse(a, "--codepage: fsck.fat 4.2 has no such option; use -c N");
      case kHelp: usage(a.tool); return kClean;
      case ':':
        std::fprintf(stderr, "%s: option requires an argument -- '%c'\n", a.tool.c_str(), optopt);
        usage(a.tool);
        return kUsage;
      default:
        if (optopt) std::fprintf(stderr, "%s: invalid option -- '%c'\n", a.tool.c_str(), optopt);
        else std::fprintf(stderr, "%s: unrecognized option '%s'\n", a.tool.c_str(), argv[optind - 1]);
        usage(a.tool);
        return kUsage;
    }
  }
  if (a.write_now && !a.rw) return refuse(a, "-t and -w can not be used in read only mode");
  if (optind != argc - 1) return usage(a.tool), kUsage;
  a.target = argv[optind];
  if (a.interactive)
    return refuse(a,
                  "interactive repair (-r, the default without -a, -p, -y or -n) is not supported: "
                  "use -a to repair or -n to check");
  return -1;
}

void print_finding(const PeerArgs& a, const fat::CheckFinding& f) {
  if (f.severity == fat::Severity::info && !a.verbose) return;
  // With -F fsck.fat says which copy it uses, and nothing of how they differ.
  if (a.fat_table && f.kind == fat::CheckKind::copies_differ) return;
  std::printf("%s\n  %s\n", f.where.c_str(), f.message.c_str());
  if (!f.action.empty()) std::printf("  %s\n", f.action.c_str());
}

// Where among the boot area's findings FAT[0] of the copy read is found
// damaged (its reserved bits not set), or r.boot_findings when it is not.
std::size_t fat0_damaged_at(const fat::CheckResult& r) {
  for (std::size_t i = 0; i < r.boot_findings; ++i)
    if (r.findings[i].kind == fat::CheckKind::fat0_reserved && r.findings[i].severity == fat::Severity::error) return i;
  return r.boot_findings;
}

// The boot area's findings, then (with -F) read_fat's "Using first FAT."
// (before its "Fixing first cluster in FAT.", our repair of FAT[0]), then
// the rest.
void print_findings(const PeerArgs& a, const fat::CheckResult& r) {
  const std::size_t at = fat0_damaged_at(r);
  for (std::size_t i = 0; i <= r.findings.size(); ++i) {
    if (i == at && a.fat_table)
      a.fat_table <= 2 ? std::printf("Using %s FAT.\n", a.fat_table == 1 ? "first" : "second")
                       : std::printf("Using FAT %ld.\n", a.fat_table);
    if (i < r.findings.size()) print_finding(a, r.findings[i]);
  }
}

// fsck.fat read_fat without -F gives up, writing nothing, when no copy's
// FAT[0] has its reserved bits: the one read (the first intact one) is not
// intact either.
bool gives_up(const PeerArgs& a, const fat::CheckResult& r, const fat::Volume& vol) {
  const std::size_t at = fat0_damaged_at(r);
  if (a.fat_table || at == r.boot_findings) return false;
  for (std::size_t j = 0; j < at; ++j) print_finding(a, r.findings[j]);
  std::fprintf(stderr, "%s\n",
               vol.layout().num_fats < 2 ? "First FAT appears to be corrupt and second FAT does not exist. Giving "
                                           "up. Run fsck.fat with -F 1 option."
                                         : "Both FATs appear to be corrupt. Giving up. Run fsck.fat with non-zero "
                                           "-F option.");
  return true;
}

// The summary line: every entry checked and every FSCKnnnn.REC made (fsck.fat
// counts each in add_file and alloc_rootdir_entry), and the clusters not
// free once the plan is carried out (salvaged chains included).
void print_summary(const PeerArgs& a, const fat::CheckResult& r) {
  const auto& c = r.counts;
  std::printf("%s: %" PRIu64 " files, %" PRIu64 "/%" PRIu64 " clusters\n", a.target.c_str(),
              c.entries + c.recovered_files, c.clusters - c.free_after, c.clusters);
}

int check(const PeerArgs& a, fat::CheckTarget& target) {
  fat::Volume& vol = *target.volume;
  fat::CheckOptions opts;
  opts.salvage = a.salvage;
  auto result = fat::check_volume(vol, opts);
  if (!result) return report(a.tool.c_str(), result.error()) == exit_interrupted ? exit_interrupted : kChanged;
  if (gives_up(a, *result, vol)) return kChanged;  // fsck.fat's die(): exit 1
  print_findings(a, *result);
  const bool changed = result->count(fat::Severity::error) > 0;
  if (a.rw && !result->plan.empty()) {
    fat::RepairReport rep;
    if (auto done = fat::repair_volume(vol, result->plan, rep); !done) {
      const int rc = report(a.tool.c_str(), fsio::Error(done.error()).at(a.target));
      return rc == exit_interrupted ? rc : kChanged;
    }
  }
  if (changed)
    std::printf(a.rw ? "\n*** Filesystem was changed ***\nWriting changes.\n" : "\nLeaving filesystem unchanged.\n");
  print_summary(a, *result);
  return changed ? kChanged : kClean;
}

}  // namespace

bool is_fsck_name(const char* argv0) {
  if (!argv0) return false;
  const std::string name = std::filesystem::path(argv0).filename();
  return name == "fsck.fat" || name == "fsck.vfat" || name == "fsck.msdos" || name == "dosfsck";
}

int fsck_main(int argc, char** argv) {
  PeerArgs a;
  a.tool = std::filesystem::path(argv[0]).filename();
  if (const int rc = parse(argc, argv, a); rc >= 0) return rc;
  if (const int rc = announce_environment(a.tool.c_str()); rc >= 0) return rc;
  InterruptGuard interrupt;
  std::printf("fsck.fat 4.2 (fsio fatck %s)\n", fsio::kVersion);
  std::fflush(stdout);
  fat::CheckTargetOptions o;
  o.repair = a.rw;
  auto target = fat::open_check_target(a.target, o);
  if (!target) {
    report(a.tool.c_str(), target.error());
    return target.error().code == Errc::interrupted ? exit_interrupted : kCannotOpen;
  }
  if (auto st = fat::open_check_volume(**target); !st) {
    const int rc = report(a.tool.c_str(), st.error());
    return rc == exit_interrupted ? rc : kChanged;
  }
  if (a.boot_only) return kClean;
  if (a.fat_table > (*target)->volume->layout().num_fats) {
    std::fprintf(stderr, "Requested FAT table %ld does not exist.\n", a.fat_table);  // fsck.fat's die(): exit 1
    return kChanged;
  }
  if (auto st = fat::choose_fat_copy(**target, std::uint32_t(a.fat_table)); !st) {
    const int rc = report(a.tool.c_str(), st.error());
    return rc == exit_interrupted ? rc : kChanged;
  }
  return check(a, **target);
}

}  // namespace fsio::cli::fatck
