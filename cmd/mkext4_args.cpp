// mkext4's command line (see mkext4_args.hpp).
#include "cmd/mkext4_args.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "cmd/common.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

struct Texts {
  std::optional<std::string> b, G, N, i, I, m;
  std::vector<std::string> uid_maps, gid_maps;
};

Error usage(std::string what) { return make_error(Errc::invalid_argument, std::move(what)); }

// strtoul(text, &end, 0) with an optional K/M/G/T suffix counting bytes
// (mke2fs's parse_num_blocks with log_block_size -1), at most `max`.
Result<std::uint64_t> number(const std::string& text, const std::string& opt, std::uint64_t max, bool suffix) {
  auto bad = [&] {
    return usage(opt + " '" + text + "': expected a number from 0 to " + std::to_string(max) +
                 (suffix ? " (K, M, G suffixes count bytes)" : ""));
  };
  if (text.empty() || text[0] == '-' || text[0] == '+' || std::isspace(static_cast<unsigned char>(text[0])))
    return bad();
  errno = 0;
  char* end = nullptr;
  std::uint64_t v = std::strtoull(text.c_str(), &end, 0);
  if (errno || end == text.c_str()) return bad();
  int shift = 0;
  if (*end && suffix && !end[1]) {
    switch (*end | 0x20) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: return bad();
    }
  } else if (*end) {
    return bad();
  }
  if (v > (max >> shift)) return bad();
  return v << shift;
}

// --uid-map, --gid-map, --all-root: only with -d, and not together.
Status convert_owners(const Texts& t, Mkext4Args& a) {
  auto add = [](const std::vector<std::string>& specs, const char* option, std::optional<ext::IdMap>& out) -> Status {
    if (specs.empty()) return {};
    out.emplace();
    for (const std::string& s : specs) FSIO_TRY(out->add(s, option));
    return {};
  };
  FSIO_TRY(add(t.uid_maps, "--uid-map", a.owners.uid_map));
  FSIO_TRY(add(t.gid_maps, "--gid-map", a.owners.gid_map));
  const bool mapped = a.owners.uid_map || a.owners.gid_map;
  if (a.owners.all_root && mapped) return usage("--all-root makes every owner 0:0; it takes no --uid-map or --gid-map");
  if ((a.owners.all_root || mapped) && !a.root)
    return usage(std::string(a.owners.all_root ? "--all-root" : "--uid-map and --gid-map") +
                 " set the owners of a tree's files: they need -d SRC");
  return {};
}

Status convert(const Texts& t, Mkext4Args& a) {
  auto& r = a.req;
  if (t.b) {
    const auto v = FSIO_TRY(number(*t.b, "-b", 65536, true));
    if (v < 1024 || (v & (v - 1))) return usage("-b " + *t.b + ": the block size must be 1024, 2048, 4096, ... 65536");
    r.block_size = std::uint32_t(v);
  }
  if (t.G) {
    const auto v = FSIO_TRY(number(*t.G, "-G", 1ull << 31, false));
    if (v == 0 || (v & (v - 1))) return usage("-G " + *t.G + ": the flex_bg size must be a power of 2 up to 2^31");
    r.flex_bg_size = std::uint32_t(v);
  }
  if (t.N) r.inodes = FSIO_TRY(number(*t.N, "-N", 0xFFFFFFFFull, false));
  if (t.i) {
    const auto v = FSIO_TRY(number(*t.i, "-i", 65536ull * 1024, true));
    if (v < 1024) return usage("-i " + *t.i + ": the inode ratio must be from 1024 to 67108864 bytes");
    r.inode_ratio = std::uint32_t(v);
  }
  if (t.I) {
    const auto v = FSIO_TRY(number(*t.I, "-I", 65536, false));
    if (v < 128 || (v & (v - 1))) return usage("-I " + *t.I + ": the inode size must be 128, 256, 512, ... bytes");
    r.inode_size = std::uint32_t(v);
  }
  if (t.m) {
    char* end = nullptr;
    const double v = std::strtod(t.m->c_str(), &end);
    if (t.m->empty() || *end || !(v >= 0 && v <= 50))
      return usage("-m '" + *t.m + "': expected a percentage from 0 to 50");
    r.reserved_percent = v;
  }
  if (a.offset) {
    auto v = fsio::parse_size(*a.offset);
    if (!v) return std::move(v).error().wrap("--offset");
    r.offset = *v;
  }
  a.auto_size = a.create && a.root && (!r.size || *r.size == "auto");
  if (r.size && *r.size == "auto" && !a.auto_size)
    return usage("SIZE auto goes with -C and -d: a new image just large enough for the tree");
  if (a.auto_size) r.size.reset();
  if (a.slack && !a.auto_size) return usage("--slack goes with -C, -d and SIZE auto (the size is chosen for the tree)");
  if (a.create && !r.size && !a.auto_size) return usage("-C needs the SIZE of the file to create (or -d and auto)");
  return convert_owners(t, a);
}

}  // namespace

int parse_mkext4(int argc, char** argv, Mkext4Args& a) {
  CLI::App app{"Make an ext4 filesystem as mke2fs -t ext4 makes it, byte for byte, in a few merged writes."};
  app.positionals_at_end(false);
  auto& r = a.req;
  Texts t;
  std::optional<std::string> fs_type, extended;
  bool noaction = false, force = false, version = false;
  auto one = [&](const std::string& name, std::optional<std::string>& out, const std::string& help) {
    return app.add_option(name, out, help)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  one("-t", fs_type, "filesystem type: ext4 only")->type_name("TYPE");
  one("-T", r.usage_types, "usage types from mke2fs.conf (small, default, big, huge, ...)")->type_name("TYPES");
  one("-b", t.b, "block size in bytes (1024 to 65536)")->type_name("BLOCK");
  one("-G", t.G, "groups per flex_bg (a power of 2)")->type_name("FLEX_BG_SIZE");
  one("-N", t.N, "number of inodes wanted")->type_name("INODES");
  one("-i", t.i, "bytes per inode")->type_name("BYTES_PER_INODE");
  one("-I", t.I, "inode size in bytes (128, 256, ...)")->type_name("INODE_SIZE");
  one("-m", t.m, "percentage of blocks reserved for root (0 to 50)")->type_name("PCT");
  one("-L", r.label, "volume label (16 bytes)")->type_name("LABEL");
  one("-M", r.last_mounted, "last mounted directory")->type_name("DIR");
  one("-U", r.uuid, "UUID, or null, clear, random")->type_name("UUID");
  one("-e", r.errors, "errors behaviour: continue, remount-ro, panic")->type_name("BEHAVIOUR");
  one("-E", extended, "extended options (hash_seed=UUID, root_owner=UID:GID, nodiscard, ...)")->type_name("OPTS");
  app.add_option("-O", r.features, "features to set or clear (^name), as mke2fs -O")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->type_name("FEATURES");
  app.add_option("-J", r.journal, "journal options: size=MiB, fast_commit_size=KiB")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->type_name("OPTS");
  one("-d", a.root, "fill the filesystem from a directory or a tar archive (plain, gzip, zstd, xz; - for stdin)")
      ->type_name("SRC");
  app.add_option("--uid-map", t.uid_maps, "with -d: the source's uids FROM.. become TO.. (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->type_name("FROM:TO:COUNT");
  app.add_option("--gid-map", t.gid_maps, "with -d: the source's gids FROM.. become TO.. (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->type_name("FROM:TO:COUNT");
  app.add_flag("--all-root", a.owners.all_root, "with -d: every file owned by 0:0");
  one("--slack", a.slack, "with -C -d and SIZE auto: room beyond the tree, a size (64M) or a percentage (10%)")
      ->type_name("SIZE|PCT");
  app.add_flag("-j", r.journal_flag, "add a journal (the default size)");
  app.add_flag("-n", noaction, "show what would be made; write nothing (as --dry-run)");
  app.add_flag("-F,--force", force, "make it over an existing filesystem or partition table (never over one in use)");
  app.add_flag("-q,--quiet", a.quiet, "print nothing but errors");
  app.add_flag("-C", a.create, "create TARGET as a file of SIZE (never replacing one)");
  one("--offset", a.offset, "where the filesystem starts in TARGET, in bytes (1MiB, 1048576)")->type_name("BYTES");
  app.add_flag("--dry-run", a.dry_run, "show what would be made and any refusal; write nothing");
  app.add_flag("--json", a.json, "one JSON document on stdout");
  app.add_flag("--stats", a.stats, "print I/O statistics");
  app.add_flag("-V", version, "print the version and exit");
  std::optional<std::string> target;
  app.add_option("TARGET", target, "the block device or image file");
  app.add_option("SIZE", r.size,
                 "the size: blocks (of -b, else 1 KiB), or bytes with K, M, G, T (64M, 1G); auto with -C -d");
  if (int rc = parse(app, argc, argv); rc >= 0) return rc;
  if (version) return std::printf("%s\n", version_line("mkext4").c_str()), exit_ok;
  if (!target)
    return report("mkext4", usage("no TARGET given (mkext4 [OPTIONS] TARGET [SIZE]; --help shows the options)"));
  a.target = *target;
  r.fs_type = fs_type;
  r.extended = extended;
  r.force = force;
  a.dry_run = a.dry_run || noaction;
  if (auto st = convert(t, a); !st) return report("mkext4", st.error());
  return -1;
}

}  // namespace fsio::cli
