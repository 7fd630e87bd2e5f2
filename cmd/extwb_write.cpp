// extwb put, mkdir, rm: one transaction each (ext/ops.hpp), with --dry-run,
// --stats, --json, progress on a terminal and Ctrl-C leaving the
// filesystem consistent.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cmd/extwb.hpp"
#include "cmd/tree/source.hpp"
#include "ext/ops.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace extwb {
namespace {

using fsio::Errc;
using fsio::cli::exit_ok;
using nlohmann::json;

fsio::Result<ext::Owner> owner(const WriteArgs& a, std::uint16_t default_mode) {
  ext::Owner o{default_mode, a.uid, a.gid};
  if (!a.mode.empty()) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(a.mode.c_str(), &end, 8);
    if (*end != '\0' || m > 07777)
      return fsio::make_error(Errc::invalid_argument,
                              "--mode '" + a.mode + "': expected octal permission bits up to 7777");
    o.mode = std::uint16_t(m);
  }
  return o;
}

fsio::Result<ext::Timestamp> parse_epoch(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0)
    return fsio::make_error(Errc::invalid_argument, "--mtime '" + text + "': expected seconds since the epoch");
  return ext::Timestamp{v, 0};
}

// Physical memory in bytes (sysconf), 0 when unknown.
std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
}

// SOURCE_DATE_EPOCH's time when it is set (cmd/common.hpp), else the clock's.
fsio::Result<ext::Timestamp> current_time() {
  if (const auto sde = FSIO_TRY(fsio::cli::source_date_epoch())) return ext::Timestamp{*sde, 0};
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ext::Timestamp{ts.tv_sec, std::uint32_t(ts.tv_nsec)};
}

// Times the filesystem's inodes cannot hold are refused before anything is
// written, naming where they came from (ext/inode.hpp time_limits).
fsio::Status check_times(const ext::Filesystem& fs, const ext::Timestamp& now,
                         const std::optional<ext::Timestamp>& mtime, const std::string& mtime_text) {
  const char* sde = std::getenv("SOURCE_DATE_EPOCH");
  FSIO_TRY(
      ext::check_time(fs.layout(), now.sec,
                      sde ? "SOURCE_DATE_EPOCH " + std::string(sde) : "the clock's time " + std::to_string(now.sec)));
  if (mtime) FSIO_TRY(ext::check_time(fs.layout(), mtime->sec, "--mtime " + mtime_text));
  return {};
}

json stats_json(const fsio::IoStats& s) {
  json j = fsio::cli::to_json(s);
  j["average_request_bytes"] = s.requests_submitted ? (s.bytes_read + s.bytes_written) / s.requests_submitted : 0;
  return j;
}

void print_stats(const fsio::IoStats& s, const ext::WritebackStats* wb) {
  std::fprintf(
      stderr,
      "stats: %" PRIu64 " requests submitted (average %s), %s read, %s written, %" PRIu64 " flushes, %.3f s in I/O\n",
      s.requests_submitted,
      fsio::format_size(s.requests_submitted ? (s.bytes_read + s.bytes_written) / s.requests_submitted : 0).c_str(),
      fsio::format_size(s.bytes_read).c_str(), fsio::format_size(s.bytes_written).c_str(), s.flushes,
      s.elapsed_seconds);
  if (wb)
    std::fprintf(stderr,
                 "writeback: %" PRIu64 " input segments, %" PRIu64 " blocks committed once each, %" PRIu64
                 " passes, %" PRIu64 " runs, %" PRIu64 " hole blocks\n",
                 wb->segments, wb->blocks_committed, wb->passes, wb->runs, wb->hole_blocks);
}

void print_put_json(const Common& c, const ext::PutReport& r, const ext::Filesystem& fs, bool tree) {
  json j = {{"target", c.target},
            {"path", r.path},
            {"dry_run", c.dry_run},
            {"inode", r.ino},
            {"size", r.size},
            {"data_blocks", r.data_blocks},
            {"tree_blocks", r.tree_blocks},
            {"extents", r.extents},
            {"replaced", r.replaced},
            {"created_dirs", r.created_dirs},
            {"writeback",
             {{"segments", r.writeback.segments},
              {"blocks_committed", r.writeback.blocks_committed},
              {"passes", r.writeback.passes},
              {"runs", r.writeback.runs},
              {"hole_blocks", r.writeback.hole_blocks}}},
            {"stats", stats_json(fs.queue().stats())},
            {"direct", fs.device().direct()}};
  if (tree) j["tree"] = {{"files", r.files}, {"dirs", r.dirs}, {"symlinks", r.symlinks}};
  std::cout << j.dump(2) << '\n';
}

// SRC is a directory (or with --tar an archive): listed (cmd/tree, symbolic links kept as links), then
// the whole tree in one transaction.
int put_tree(const Common& c, const WriteArgs& a, ext::PutOptions& o) {
  fsio::tree::SourceOptions so;
  so.symlinks = fsio::SymlinkPolicy::keep;
  so.holes = true;  // holes stay holes
  so.attrs = true;  // xattrs, ACLs and chattr flags
  auto src = a.tar ? fsio::tree::open_archive(a.source, so) : fsio::tree::open_source(a.source, so);
  if (!src) return fsio::cli::report(kTool, src.error());
  auto tree = (*src)->list();
  if (!tree) return fsio::cli::report(kTool, tree.error());
  if (auto apart = fsio::check_apart({"", c.target, -1, c.offset}, (*src)->storage()); !apart)
    return fsio::cli::report(kTool, apart.error());
  auto fs = open_fs_to_write(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  if (auto t = check_times(**fs, o.now, o.mtime, a.mtime); !t) return fsio::cli::report(kTool, t.error());
  fsio::InterruptGuard interrupt;
  o.interrupted = [] { return fsio::InterruptGuard::requested(); };
  auto rep = ext::put_tree(**fs, a.dest, *tree, **src, o);
  if (!rep) return fsio::cli::report(kTool, std::move(rep).error().wrap("put " + a.dest).at(c.target));
  if (c.json) {
    print_put_json(c, *rep, **fs, true);
  } else if (!c.quiet) {
    std::printf("%s: %s %s: %" PRIu64 " files, %" PRIu64 " directories, %" PRIu64 " symlinks, %s\n", c.target.c_str(),
                c.dry_run ? "would copy into" : "copied into", a.dest.c_str(), rep->files, rep->dirs, rep->symlinks,
                fsio::format_size(rep->size).c_str());
  }
  if (c.stats && !c.dry_run) print_stats((*fs)->queue().stats(), &rep->writeback);
  return exit_ok;
}

// The dirty buffer grows with the data up to the limit: a limit the
// machine's memory cannot hold would end in an allocation failure halfway.
fsio::Status check_writeback_limits(const WriteArgs& a) {
  constexpr std::uint64_t kMinDirty = 1u << 20;
  const std::uint64_t ram = physical_memory();
  if (a.dirty_limit < kMinDirty)
    return fsio::make_error(Errc::invalid_argument,
                            "--dirty-limit " + fsio::format_size(a.dirty_limit) + ": expected at least 1M");
  if (ram != 0 && a.dirty_limit > ram)
    return fsio::make_error(Errc::invalid_argument, "--dirty-limit " + fsio::format_size(a.dirty_limit) +
                                                        ": more than this machine's " + fsio::format_size(ram) +
                                                        " of memory");
  if (a.writeback_chunk == 0 || a.writeback_chunk > a.dirty_limit)
    return fsio::make_error(Errc::invalid_argument, "--writeback-chunk " + std::to_string(a.writeback_chunk) +
                                                        ": expected above 0 and at most --dirty-limit");
  return {};
}

// --uid-map, --gid-map, --all-root: the owners of a tree's files, instead
// of --uid and --gid; checked here, whether SRC is a tree in cmd_put.
fsio::Status tree_owners(const WriteArgs& a, ext::PutOptions& o) {
  auto add = [](const std::vector<std::string>& specs, const char* option,
                std::optional<ext::IdMap>& out) -> fsio::Status {
    if (specs.empty()) return {};
    out.emplace();
    for (const std::string& s : specs) FSIO_TRY(out->add(s, option));
    return {};
  };
  FSIO_TRY(add(a.uid_maps, "--uid-map", o.uid_map));
  FSIO_TRY(add(a.gid_maps, "--gid-map", o.gid_map));
  const bool mapped = o.uid_map || o.gid_map;
  auto bad = [](const std::string& what) { return fsio::make_error(Errc::invalid_argument, what); };
  if (a.all_root && mapped) return bad("--all-root makes every owner 0:0; it takes no --uid-map or --gid-map");
  if ((a.all_root || mapped) && a.owner_given)
    return bad(std::string(a.all_root ? "--all-root" : "--uid-map and --gid-map") +
               " set a tree's owners; --uid and --gid set one owner for all: give one or the other");
  return {};
}

// put's options from the command line, each checked.
fsio::Result<ext::PutOptions> put_options(const Common& c, const WriteArgs& a) {
  const ext::Timestamp now = FSIO_TRY(current_time());
  const ext::Owner own = FSIO_TRY(owner(a, 0644));
  ext::PutOptions o;
  o.parents = a.parents;
  o.force = a.force;
  o.dry_run = c.dry_run;
  o.owner = own;
  o.now = now;
  if (!a.mtime.empty()) o.mtime = FSIO_TRY(parse_epoch(a.mtime));
  o.clamp = FSIO_TRY(fsio::cli::source_date_epoch());  // a tree's later times become it, as mkext4 -d
  o.writeback.dirty_limit = a.dirty_limit;
  o.writeback.chunk = a.writeback_chunk;
  o.writeback.sparse = a.sparse;
  o.meta_cache = FSIO_TRY(fsio::cli::test_size("FSIO_META_CACHE", o.meta_cache));
  FSIO_TRY(check_writeback_limits(a));
  FSIO_TRY(tree_owners(a, o));
  return o;
}

// What put reads (the file, standard input, every file of the tree) must not share the image's storage.
fsio::Status check_source_apart(const Common& c, const WriteArgs& a, bool tree) {
  const bool in_stdin = a.source == "-";
  const fsio::StorageRef src_ref{tree ? "the source tree" : "the source",
                                 in_stdin ? "standard input" : a.source,
                                 in_stdin ? STDIN_FILENO : -1,
                                 0,
                                 fsio::kToEnd,
                                 tree};
  return fsio::check_apart({"", c.target, -1, c.offset}, {src_ref});
}

void print_put(const Common& c, const ext::PutReport& r) {
  if (c.dry_run)
    std::printf("would %s %s%s\n", r.replaced ? "replace" : "create", r.path.c_str(),
                r.created_dirs.empty() ? "" : " (and its missing parent directories)");
  else
    std::printf("%s: %s %s, %s in %zu extent%s, inode %u\n", c.target.c_str(), r.replaced ? "replaced" : "wrote",
                r.path.c_str(), fsio::format_size(r.size).c_str(), r.extents, r.extents == 1 ? "" : "s", r.ino);
}

// SRC is a file or standard input: one file, with progress on a terminal.
int put_one_file(const Common& c, const WriteArgs& a, ext::PutOptions& o) {
  int fd = STDIN_FILENO;
  if (a.source != "-") {
    fd = ::open(a.source.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fsio::cli::report(kTool, fsio::errno_error("open " + a.source));
  }
  ext::FdSource src(fd, a.source == "-" ? "standard input" : a.source);
  auto fs = open_fs_to_write(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  if (auto t = check_times(**fs, o.now, o.mtime, a.mtime); !t) return fsio::cli::report(kTool, t.error());

  fsio::InterruptGuard interrupt;
  fsio::Progress progress("extwb", src.size().value_or(0), !c.quiet && !c.json && fsio::stderr_is_terminal());
  o.interrupted = [] { return fsio::InterruptGuard::requested(); };
  o.progress = &progress;
  auto rep = ext::put_file(**fs, a.dest, src, o);
  if (fd != STDIN_FILENO) ::close(fd);
  if (!rep) return fsio::cli::report(kTool, std::move(rep).error().wrap("put " + a.dest).at(c.target));
  const auto& s = (*fs)->queue().stats();
  if (c.json) {
    print_put_json(c, *rep, **fs, false);
    return exit_ok;
  }
  if (!c.quiet) print_put(c, *rep);
  if (c.stats && !c.dry_run) print_stats(s, &rep->writeback);
  return exit_ok;
}

}  // namespace

int cmd_put(const Common& c, const WriteArgs& a) {
  auto o = put_options(c, a);
  if (!o) return fsio::cli::report(kTool, o.error());
  struct stat st {};
  const bool dir = !a.tar && a.source != "-" && ::stat(a.source.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!dir && !a.tar && (a.all_root || o->uid_map || o->gid_map))
    return fsio::cli::report(
        kTool,
        fsio::make_error(Errc::invalid_argument, std::string(a.all_root ? "--all-root" : "--uid-map and --gid-map") +
                                                     " set a tree's owners: SRC is a directory, or a tar with --tar"));
  if (auto apart = check_source_apart(c, a, dir); !apart) return fsio::cli::report(kTool, apart.error());
  return dir || a.tar ? put_tree(c, a, *o) : put_one_file(c, a, *o);
}

int cmd_mkdir(const Common& c, const WriteArgs& a) {
  auto now = current_time();
  if (!now) return fsio::cli::report(kTool, now.error());
  auto own = owner(a, 0755);
  if (!own) return fsio::cli::report(kTool, own.error());
  auto fs = open_fs_to_write(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  if (auto t = check_times(**fs, *now, std::nullopt, ""); !t) return fsio::cli::report(kTool, t.error());
  auto rep = ext::make_dirs(**fs, a.dest, a.parents, *own, *now, c.dry_run);
  if (!rep) return fsio::cli::report(kTool, std::move(rep).error().wrap("mkdir " + a.dest).at(c.target));
  if (c.json) {
    std::cout << json{{"target", c.target},
                      {"dry_run", c.dry_run},
                      {"created", rep->created},
                      {"stats", stats_json((*fs)->queue().stats())}}
                     .dump(2)
              << '\n';
  } else if (!c.quiet) {
    for (const auto& p : rep->created) std::printf("%s%s\n", c.dry_run ? "would create " : "created ", p.c_str());
  }
  if (c.stats && !c.dry_run) print_stats((*fs)->queue().stats(), nullptr);
  return exit_ok;
}

int cmd_rm(const Common& c, const WriteArgs& a) {
  auto now = current_time();
  if (!now) return fsio::cli::report(kTool, now.error());
  auto fs = open_fs_to_write(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  if (auto t = check_times(**fs, *now, std::nullopt, ""); !t) return fsio::cli::report(kTool, t.error());
  auto rep = ext::remove_path(**fs, a.dest, *now, c.dry_run);
  if (!rep) return fsio::cli::report(kTool, std::move(rep).error().wrap("rm " + a.dest).at(c.target));
  if (c.json) {
    std::cout << json{{"target", c.target},
                      {"path", a.dest},
                      {"dry_run", c.dry_run},
                      {"inode", rep->ino},
                      {"inode_freed", rep->inode_freed},
                      {"blocks_freed", rep->blocks_freed},
                      {"stats", stats_json((*fs)->queue().stats())}}
                     .dump(2)
              << '\n';
  } else if (!c.quiet) {
    std::printf("%s %s (inode %u%s)\n", c.dry_run ? "would remove" : "removed", a.dest.c_str(), rep->ino,
                rep->inode_freed || c.dry_run ? "" : ", other links remain");
  }
  if (c.stats && !c.dry_run) print_stats((*fs)->queue().stats(), nullptr);
  return exit_ok;
}

}  // namespace extwb
