// mkfat: create a FAT12/16/32 filesystem with mkfs.fat's geometry, in a few
// large batched writes. Options are mkfs.fat's (mkfat_args.hpp); the work is
// fat::compute_geometry, fat::scan_bad_blocks and fat::format_volume, and
// every refusal is named before anything is written.
#include <fcntl.h>
#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <iostream>

#include "cmd/common.hpp"
#include "cmd/mkfat_args.hpp"
#include "cmd/mkfat_report.hpp"
#include "cmd/mkfat_tree.hpp"
#include "fat/badblocks.hpp"
#include "fat/device_facts.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/created_file.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/pipe.hpp"
#include "libfsio/size.hpp"

namespace {

using namespace fsio::cli;
using fsio::Errc;
using fsio::Result;

bool as_mkfs(const MkfatArgs& a) { return a.inv.personality == Personality::mkfs; }

// "TOOL: message"; under mkfs.fat's names every error exits 1, as there.
int fail(const MkfatArgs& a, const fsio::Error& e) {
  const int rc = report(a.inv.tool.c_str(), e);
  return as_mkfs(a) && rc != exit_interrupted ? exit_failure : rc;
}
void say(const MkfatArgs& a, const char* kind, const std::string& what) {
  if (!a.quiet && !a.json) std::fprintf(stderr, "%s: %s: %s\n", a.inv.tool.c_str(), kind, what.c_str());
}

constexpr std::size_t kMessageRead = 64 << 10;       // far more than a boot sector's message holds
constexpr std::size_t kBadBlockListMax = 64u << 20;  // millions of block numbers

// The text of a -m or -l file ("-": standard input), at most `limit` bytes:
// reading /dev/zero or /dev/urandom must not fill memory. The boot message
// keeps what fits (mkfs.fat reads no more than that either); a longer
// bad-block list is refused. A stalled pipe still lets Ctrl-C through.
Result<std::string> read_file(const std::string& path, const char* what, std::size_t limit, bool cut) {
  const std::string name = std::string(what) + " " + path;
  const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fsio::errno_error(name);
  const fsio::FdKind kind = fsio::fd_kind(fd);
  std::string text;
  std::byte buf[65536];
  fsio::Status st;
  for (;;) {
    auto n = fsio::read_some(fd, kind, buf, name, text.size());
    if (!n) {
      st = std::move(n).error();
      break;
    }
    if (*n == 0) break;
    text.append(reinterpret_cast<const char*>(buf), *n);
    if (text.size() > limit) {
      if (cut) text.resize(limit);
      else
        st = fsio::make_error(Errc::invalid_argument,
                              name + ": longer than " + fsio::format_size(limit) + "; not a list of bad blocks");
      break;
    }
  }
  if (fd != STDIN_FILENO) ::close(fd);
  if (!st) return std::move(st).error();
  return text;
}

// -m and -l are read while the target is written (-l after it is open):
// neither may share its storage, through a loop device or otherwise.
fsio::Status check_reads_apart(const MkfatArgs& a) {
  std::vector<fsio::StorageRef> reads;
  auto add = [&](const std::optional<std::string>& path, const char* what) {
    if (path) reads.push_back({what, *path == "-" ? "standard input" : *path, *path == "-" ? STDIN_FILENO : -1});
  };
  add(a.message_file, "the -m file");
  add(a.bad_block_file, "the -l file");
  return fsio::check_apart({"", a.target}, reads);
}

struct Plan {
  fat::Geometry g;
  std::vector<fsio::Signature> sigs;
  fat::FormatExtras extras;
};

// What libblkid finds in the volume, and whether the kernel lists
// partitions or holders (dm, md) of a block device. mkfs.fat overwrites any
// signature, and refuses only a device with partitions or holders (without
// -I). Ours: any of them is refused without --force (or -I). --dry-run only
// reports.
fsio::Status judge(const MkfatArgs& a, bool children, const std::vector<fsio::Signature>& sigs) {
  if (a.force || a.dry_run) return {};
  if (children)
    return as_mkfs(a) ? fsio::make_error(Errc::busy, "Partitions or virtual mappings on device '" + a.target +
                                                         "', not making filesystem (use -I to override)")
                      : fsio::make_error(Errc::busy,
                                         "has partitions or virtual mappings (dm, md) in use of it; "
                                         "formatting would destroy them (use --force, or -I as with "
                                         "mkfs.fat, to override)")
                            .at(a.target);
  if (sigs.empty() || as_mkfs(a)) return {};
  const auto& first = sigs.front();
  const bool table = first.usage == "partition_table";
  return fsio::make_error(Errc::busy, "holds " + fsio::describe(first) + "; formatting would destroy it (use --force" +
                                          (table ? ", or -I as with mkfs.fat," : "") + " to overwrite it)")
      .at(a.target);
}

// Everything that can refuse, before a single byte is written: the
// geometry, the signatures in the volume, the boot message.
Result<Plan> plan(MkfatArgs& a, const fsio::Device& dev, std::optional<std::int64_t> source_date_epoch) {
  Plan p;
  const fat::DeviceFacts facts = fat::device_facts(dev);
  if (a.offset_parsed)
    a.fmt.offset_sectors = FSIO_TRY(offset_sectors(a, dev.size(), fat::logical_sector_size(a.fmt, facts)));
  p.g = FSIO_TRY_AT(fat::compute_geometry(dev.size(), a.fmt, facts), a.target);
  // mkfs.fat warns when BLOCKS is not what the target holds after the offset.
  const std::uint64_t before = a.fmt.offset_sectors * fat::logical_sector_size(a.fmt, facts);
  if (a.fmt.blocks && dev.size() > before && (dev.size() - before) / 1024 != a.fmt.blocks)
    p.g.warnings.push_back("block count mismatch: found " + std::to_string((dev.size() - before) / 1024) +
                           " but assuming " + std::to_string(a.fmt.blocks));
  if (a.label_lowercase && (p.g.warnings.empty() || as_mkfs(a)))
    p.g.warnings.push_back("lowercase labels might not work on some systems");
  // Probe exactly the volume: with --offset, a partition table before it is expected.
  p.sigs =
      FSIO_TRY(fsio::check_overwrite(dev.path(), dev.offset() + p.g.offset_bytes, p.g.filesystem_bytes(), true, ""));
  FSIO_TRY(judge(a, facts.has_children, p.sigs));
  for (const auto& s : p.sigs) p.extras.wipe.push_back({p.g.offset_bytes + s.offset, s.length});
  if (a.message_file) {
    p.extras.boot.message = fat::boot_message_from_text(FSIO_TRY(read_file(*a.message_file, "-m", kMessageRead, true)));
    if (p.extras.boot.message->size() > fat::boot_message_capacity(p.g))
      p.g.warnings.push_back("message too long; truncated");
  }
  // mkfs.fat 4.2 does not read SOURCE_DATE_EPOCH: under its names
  // --invariant's constants win, so the image is its image. Under ours the
  // variable wins (mkfat.8, SOURCE_DATE_EPOCH).
  const bool invariant_wins = as_mkfs(a) && a.fmt.invariant;
  p.extras.identity = fat::resolve_identity(a.fmt, invariant_wins ? std::nullopt : source_date_epoch);
  return p;
}

// -c or -l: the bad clusters to mark. mkfs.fat prints their count on stdout.
fsio::Status find_bad(const MkfatArgs& a, fsio::IoQueue& queue, Plan& p) {
  std::vector<std::uint64_t> blocks;
  if (a.bad_block_file) {
    blocks = FSIO_TRY(fat::parse_bad_block_list(FSIO_TRY(read_file(*a.bad_block_file, "-l", kBadBlockListMax, false))));
  } else if (a.check) {
    if (a.verbose && !a.json) std::printf("Searching for bad blocks \n");
    fsio::Progress progress(a.inv.tool + " -c", p.g.filesystem_bytes(),
                            !a.quiet && !a.json && fsio::stderr_is_terminal());
    blocks = FSIO_TRY_AT(fat::scan_bad_blocks(queue, p.g, &progress), a.target);
  }
  p.extras.bad_clusters = FSIO_TRY_AT(fat::bad_clusters(p.g, blocks), a.target);
  if (!blocks.empty() && !a.json) std::printf("%zu bad block%s\n", blocks.size(), blocks.size() == 1 ? "" : "s");
  return {};
}

// The target, created for -C as mkfs.fat -C creates it: never over a file
// that exists, never through a symbolic link (O_EXCL).
Result<fsio::Device> open_target(const MkfatArgs& a) {
  fsio::OpenOptions oo;
  oo.write = !a.dry_run;
  oo.check_write = a.dry_run;
  if (a.create) {
    oo.create_size = FSIO_TRY(create_size(a));
    oo.create_new = true;
  }
  return fsio::Device::open(a.target, oo);
}

// A failure once the target is open removes the image -C created (a
// half-made image would only block the retry) and says so.
int failed(const MkfatArgs& a, fsio::CreatedFile& made, fsio::Error e) {
  if (made.armed() && e.code == Errc::interrupted) e = fsio::make_error(Errc::interrupted, "interrupted").at(a.target);
  return fail(a, made.fail(std::move(e)));
}

// A warning in mkfs.fat 4.2's words, and whether it goes to stdout as
// there; nullopt for one it does not give.
std::optional<std::pair<std::string, bool>> mkfs_words(const std::string& w, const fat::Geometry& g) {
  auto starts = [&](const char* prefix) { return w.rfind(prefix, 0) == 0; };
  if (starts("lowercase label"))
    return std::pair{std::string("mkfs.fat: Warning: lowercase labels might not work properly on some systems"), false};
  if (w.find("below the FAT32 minimum") != std::string::npos)
    return std::pair{std::string("WARNING: Number of clusters for 32 bit FAT is less then suggested minimum."), false};
  if (starts("block count mismatch")) return std::pair{"Warning: " + w + ".", false};
  if (starts("root directory entries (-r)"))
    return std::pair{std::string("Warning: root directory entries specified with -r have no effect on FAT32"), false};
  if (starts("message too long")) return std::pair{std::string("Warning: message too long; truncated"), true};
  if (starts("target too large"))
    return std::pair{std::string("Warning: target too large, space at end will be left unused"), true};
  if (starts("sector size raised"))
    return std::pair{"Warning: sector size was set to " + std::to_string(g.sector_size) + " (minimal for this device)",
                     false};
  if (starts("sector size"))
    return std::pair{"Warning: sector size " + std::to_string(g.sector_size) +
                         " > 4096 is non-standard, filesystem may not be usable",
                     false};
  return std::nullopt;
}

// Under mkfs.fat's names each warning is said once, in its words.
void say_warnings(const MkfatArgs& a, const fat::Geometry& g) {
  std::vector<std::string> said;
  for (const auto& w : g.warnings) {
    const auto words = as_mkfs(a) ? mkfs_words(w, g) : std::nullopt;
    if (!words) {
      say(a, "warning", w);
      continue;
    }
    if (a.quiet || a.json || std::find(said.begin(), said.end(), words->first) != said.end()) continue;
    said.push_back(words->first);
    std::fprintf(words->second ? stdout : stderr, "%s\n", words->first.c_str());
  }
}

// The plan's warnings on stderr, mkfs.fat's TOS line on stdout in its words
// (scripts compare stdout), and -v's description.
void say_plan(const MkfatArgs& a, Plan& p) {
  if (p.g.needs_tos_104 && as_mkfs(a) && !a.json)
    std::printf("Warning: More than 32765 sector need TOS 1.04 or higher.\n");
  else if (p.g.needs_tos_104) p.g.warnings.push_back("more than 32765 sectors need TOS 1.04 or higher");
  say_warnings(a, p.g);
  if (a.verbose && !a.json) std::fputs(verbose_text(a, p.g, p.extras.identity->volume_id).c_str(), stdout);
}

// --dry-run: what would be made and overwritten (and, with -d, what it
// would hold); nothing is written.
int print_dry_run(const MkfatArgs& a, const Plan& p, const nlohmann::json& out, const TreeBuild* tree) {
  if (a.json) std::cout << out.dump(2) << '\n';
  for (const auto& s : p.sigs)
    if (!a.json && !a.quiet) std::printf("would overwrite %s\n", fsio::describe(s).c_str());
  if (!a.json && !a.quiet && !as_mkfs(a)) print_summary(a.target, p.g, true);
  if (tree && !a.json && !a.quiet) std::printf("%s\n", tree->summary(true).c_str());
  return exit_ok;
}

// The queue for the writes. FAT sectors smaller than the direct-I/O unit
// (-S 512 for an image on a 4 KiB-sector disk) can only be written through
// the page cache.
Result<fsio::IoQueue> open_queue(fsio::Device& dev, const fat::Geometry& g) {
  if (dev.direct() && dev.topology().dio_offset_align > g.sector_size)
    FSIO_TRY(dev.use_buffered("the " + std::to_string(g.sector_size) +
                              "-byte sector is smaller than the device's direct-I/O unit"));
  return fsio::IoQueue::create(dev);
}

// The writes: the bad blocks (-c reads the volume, -l a list), the tree's
// clusters placed around them (-d), --discard, then the format itself.
Result<fat::FormatReport> write_volume(MkfatArgs& a, fsio::Device& dev, fsio::IoQueue& queue, Plan& p,
                                       TreeBuild* tree) {
  FSIO_TRY(find_bad(a, queue, p));
  if (tree) {
    FSIO_TRY(tree->lay_out(p.g, p.extras.bad_clusters, *p.extras.identity, a.target));
    p.extras.content = &tree->content();
  }
  // Like mke2fs: a device that cannot discard is still formatted, with a word.
  if (a.discard) {
    if (auto d = dev.discard(p.g.offset_bytes, p.g.filesystem_bytes()); !d)
      say(a, "warning", "discard failed, formatting anyway: " + d.error().message());
    if (fsio::InterruptGuard::requested())
      return fsio::make_error(Errc::interrupted,
                              "interrupted after --discard: the old contents are discarded and "
                              "no filesystem was made")
          .at(a.target);
  }
  fsio::Progress progress(a.inv.tool, fat::format_bytes(p.g) + (tree ? tree->file_bytes() : 0),
                          !a.quiet && !a.json && fsio::stderr_is_terminal());
  if (tree) progress.count_items(tree->files(), "files");
  return fat::format_volume(queue, p.g, a.fmt, &progress, p.extras);
}

int run(MkfatArgs& a) {
  if (auto st = finish_options(a, nl_langinfo(CODESET)); !st) return fail(a, st.error());
  // Ctrl-C from here on is reported (exit 130) with the state it leaves.
  std::optional<fsio::InterruptGuard> interrupt;
  if (!a.dry_run) interrupt.emplace();
  const auto sde = source_date_epoch();  // before -C makes anything
  if (!sde) return fail(a, sde.error());
  // -d: the tree listed and named before the target is opened (-C with SIZE
  // auto needs its size).
  std::unique_ptr<TreeBuild> tree;
  if (a.root) {
    auto t = TreeBuild::start(a, *sde);
    if (!t) return fail(a, t.error());
    tree = std::move(*t);
    for (const auto& s : tree->skipped()) say(a, "warning", "skipped " + s);
    if (a.create && a.dry_run) {
      auto st = tree->dry_run_image(a);
      return st ? exit_ok : fail(a, st.error());
    }
  }
  if (auto st = check_reads_apart(a); !st) return fail(a, st.error());
  auto dev = open_target(a);
  if (!dev) return fail(a, dev.error());
  fsio::CreatedFile made(*dev, "-C");
  if (tree)
    if (auto st = tree->check_apart(a.target); !st) return failed(a, made, st.error());
  auto p = plan(a, *dev, *sde);
  if (!p) return failed(a, made, p.error());
  say_plan(a, *p);
  if (tree && a.dry_run)
    if (auto st = tree->lay_out(p->g, {}, *p->extras.identity, a.target); !st) return failed(a, made, st.error());
  nlohmann::json out = plan_json(a, p->g, p->sigs);
  if (tree) out["tree"] = tree->json(false);
  if (a.dry_run) return print_dry_run(a, *p, out, tree.get());
  // mkfs.fat overwrites what it finds without a word; so do we under its names.
  if (!as_mkfs(a))
    for (const auto& s : p->sigs) say(a, "note", "overwriting " + fsio::describe(s) + " on " + a.target);
  auto queue = open_queue(*dev, p->g);
  if (!queue) return failed(a, made, queue.error());
  auto rep = write_volume(a, *dev, *queue, *p, tree.get());
  if (!rep) return failed(a, made, rep.error());
  made.keep();
  add_result_json(out, *rep, *queue);
  if (tree) out["tree"] = tree->json(true);
  if (a.json) std::cout << out.dump(2) << '\n';
  else if (!a.quiet && !as_mkfs(a)) print_result(a, p->g, *rep, *queue);
  if (tree && !a.json && !a.quiet) std::printf("%s\n", tree->summary(false).c_str());
  return exit_ok;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  std::setlocale(LC_CTYPE, "");  // the label's character set, as mkfs.fat reads it
  const Invocation inv = invocation(argc > 0 ? argv[0] : nullptr);
  // mkfs.fat prints its version line first, whatever follows.
  if (inv.personality == Personality::mkfs) std::printf("%s\n", version_line(inv).c_str());
  auto a = parse_args(inv, argc, argv);
  if (!a) {
    const int rc = report(inv.tool.c_str(), a.error());
    std::fprintf(stderr, "Try '%s --help' for the options.\n", inv.tool.c_str());
    return inv.personality == Personality::mkfs ? exit_failure : rc;
  }
  if (a->help) return std::printf("%s", usage_text(inv).c_str()), exit_ok;
  if (inv.personality == Personality::mkfat && (a->version || (a->verbose && !a->json)))
    std::printf("%s\n", version_line(inv).c_str());
  if (a->version) return exit_ok;
  if (auto notes = fsio::environment_overrides(); !notes) return fail(*a, notes.error());
  else
    for (const auto& n : *notes) std::fprintf(stderr, "%s: note: %s\n", inv.tool.c_str(), n.c_str());
  return run(*a);
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
