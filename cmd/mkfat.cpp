// mkfat: create a FAT12/16/32 filesystem with mkfs.fat's geometry, in a few
// large batched writes. Options are mkfs.fat's; the work is fat::compute_geometry
// and fat::format_volume, and the refusals are named before anything is written.
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"
#include "fat/device_facts.hpp"
#include "fat/format.hpp"
#include "fat/label.hpp"
#include "libfsio/mount.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace {

using fsio::Errc;
using fsio::Result;

// mkfs.fat counts BLOCKS in KiB and --offset in sectors; with a suffix ("64M",
// "1MiB") either is a size in bytes instead. `plain` says which was typed.
struct CountOrSize {
  std::uint64_t value = 0;
  bool plain = false;
  std::uint64_t bytes(std::uint64_t unit) const { return plain ? value * unit : value; }
};

struct Args {
  fat::FormatOptions fmt;
  std::optional<CountOrSize> offset_parsed;  // --offset, unit resolved once the sector size is known
  std::string target, blocks, offset, label, volume_id, cluster_size, media, drive, hidden, backup;
  bool create = false, force = false, dry_run = false, discard = false, json = false, stats = false,
       quiet = false;
};

Result<CountOrSize> count_or_size(const std::string& text, const char* what) {
  auto v = fsio::parse_size(text);
  if (!v) return std::move(v).error().wrap(what);
  return CountOrSize{*v, text.find_first_not_of("0123456789") == std::string::npos};
}

Result<unsigned> number(const std::string& text, const char* what, unsigned max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || *end || errno || v > max)
    return fsio::make_error(Errc::invalid_argument, std::string(what) + " '" + text + "': expected a number up to " +
                                                        std::to_string(max));
  return unsigned(v);
}

// Turns the text options into FormatOptions; every mistake is a usage error.
fsio::Status finish_options(Args& a) {
  auto& f = a.fmt;
  if (!a.blocks.empty()) f.blocks = FSIO_TRY(count_or_size(a.blocks, "BLOCKS")).bytes(1024) / 1024;
  if (a.create && f.blocks == 0)
    return fsio::make_error(Errc::invalid_argument, "-C needs the size of the image to create (BLOCKS)");
  if (!a.cluster_size.empty()) f.cluster_size = std::uint32_t(FSIO_TRY(count_or_size(a.cluster_size, "--cluster-size")).value);
  if (!a.offset.empty()) a.offset_parsed = FSIO_TRY(count_or_size(a.offset, "--offset"));
  if (!a.volume_id.empty()) f.volume_id = FSIO_TRY(fat::parse_volume_id(a.volume_id));
  if (!a.media.empty()) f.media = FSIO_TRY(number(a.media, "-M", 0xFF));
  if (!a.drive.empty()) f.drive_number = FSIO_TRY(number(a.drive, "-D", 0xFF));
  if (!a.hidden.empty()) f.hidden_sectors = FSIO_TRY(number(a.hidden, "-h", 0xFFFFFFFFu));
  if (!a.backup.empty()) f.backup_boot = FSIO_TRY(number(a.backup, "-b", 0xFFFF));
  f.label = a.label;
  FSIO_TRY(fat::parse_label(a.label, f.uppercase_label));  // validate before touching the target
  return {};
}

void print_summary(const std::string& target, const fat::Layout& layout, bool dry_run) {
  std::printf("%s%s: %s\n", dry_run ? "would format " : "", target.c_str(), fsio::cli::layout_summary(layout).c_str());
}

// Everything that can refuse, before a single byte is written.
Result<std::vector<fat::ByteRange>> check_target(const fsio::Device& dev, const fat::Geometry& g, bool force) {
  if (auto where = FSIO_TRY(fsio::find_mount(dev.path())))
    return fsio::make_error(Errc::busy, dev.path() + ": " + fsio::describe_use(*where) + "; refusing to format it");
  // Probe exactly the volume: with --offset, a partition table before it is expected.
  auto sigs = FSIO_TRY(fsio::check_overwrite(dev.path(), dev.offset() + g.offset_bytes, g.filesystem_bytes(), force,
                                             "formatting"));
  std::vector<fat::ByteRange> wipe;
  for (const auto& s : sigs) wipe.push_back({g.offset_bytes + s.offset, s.length});
  return wipe;
}

int run(Args& a) {
  const char* tool = "mkfat";
  if (auto st = finish_options(a); !st) return fsio::cli::report(tool, st.error());

  struct stat st{};
  if (a.create && ::stat(a.target.c_str(), &st) == 0)
    return fsio::cli::report(tool, fsio::make_error(Errc::busy, a.target + ": already exists; -C creates a new image"));

  fsio::OpenOptions oo;
  oo.write = !a.dry_run;
  if (a.create) oo.create_size = a.fmt.blocks * 1024;
  if (a.create && a.dry_run) return fsio::cli::report(tool, fsio::make_error(Errc::invalid_argument, "-C and --dry-run: nothing to measure; omit -C"));
  auto dev = fsio::Device::open(a.target, oo);
  if (!dev) return fsio::cli::report(tool, dev.error());
  auto created_cleanup = [&] { if (a.create) ::unlink(a.target.c_str()); };

  const fat::DeviceFacts facts = fat::device_facts(*dev);
  if (const auto& off = a.offset_parsed) {
    const std::uint32_t ss = a.fmt.sector_size ? a.fmt.sector_size : facts.logical_sector_size ? facts.logical_sector_size : 512;
    if (!off->plain && off->value % ss) {
      created_cleanup();
      return fsio::cli::report(tool, fsio::make_error(Errc::invalid_argument, "--offset " + a.offset +
                                                                                  ": not a multiple of the " + std::to_string(ss) + "-byte sector"));
    }
    a.fmt.offset_sectors = off->plain ? off->value : off->value / ss;
  }
  auto geo = fat::compute_geometry(dev->size(), a.fmt, facts);
  if (!geo) { created_cleanup(); return fsio::cli::report(tool, std::move(geo).error().wrap(a.target)); }
  auto wipe = check_target(*dev, *geo, a.force);
  if (!wipe) { created_cleanup(); return fsio::cli::report(tool, wipe.error()); }
  if (!a.quiet && !a.json)
    for (const auto& w : geo->warnings) std::fprintf(stderr, "mkfat: warning: %s\n", w.c_str());

  const fat::Layout& summary = *geo;
  nlohmann::json out = {{"target", a.target}, {"dry_run", a.dry_run}, {"geometry", fsio::cli::layout_json(summary)},
                        {"warnings", geo->warnings}};
  if (a.dry_run) {
    if (a.json) std::cout << out.dump(2) << '\n';
    else if (!a.quiet) print_summary(a.target, summary, true);
    return fsio::cli::exit_ok;
  }

  auto identity = fat::resolve_identity(a.fmt, [] () -> std::optional<std::string_view> {
    if (const char* e = std::getenv("SOURCE_DATE_EPOCH")) return std::string_view(e);
    return std::nullopt;
  }());
  if (!identity) { created_cleanup(); return fsio::cli::report(tool, identity.error()); }
  auto queue = fsio::IoQueue::create(*dev);
  if (!queue) return fsio::cli::report(tool, queue.error());
  // Like mke2fs: a device that cannot discard is still formatted, with a word.
  if (a.discard)
    if (auto d = dev->discard(geo->offset_bytes, geo->filesystem_bytes()); !d && !a.quiet)
      std::fprintf(stderr, "mkfat: warning: discard failed, formatting anyway: %s\n", d.error().message().c_str());

  fsio::InterruptGuard interrupt;
  fsio::Progress progress("mkfat", fat::format_bytes(*geo), !a.quiet && !a.json && fsio::stderr_is_terminal());
  auto rep = fat::format_volume(*queue, *geo, a.fmt, &progress, {*wipe, *identity});
  if (!rep) return fsio::cli::report(tool, rep.error());

  out["volume_id"] = fat::format_volume_id(rep->volume_id);
  out["label"] = rep->label;
  out["bytes_written"] = rep->bytes_written;
  out["bytes_wiped"] = rep->bytes_wiped;
  out["stats"] = fsio::cli::to_json(queue->stats());
  out["engine"] = queue->engine().name();
  out["direct"] = dev->direct();
  if (a.json) {
    std::cout << out.dump(2) << '\n';
  } else if (!a.quiet) {
    print_summary(a.target, summary, false);
    std::printf("volume id %s%s%s\n", fat::format_volume_id(rep->volume_id).c_str(),
                rep->label.empty() ? "" : ", label ", rep->label.c_str());
    if (rep->bytes_wiped) std::printf("wiped %" PRIu64 " bytes of foreign signatures\n", rep->bytes_wiped);
    if (a.stats) {
      const auto& s = queue->stats();
      std::printf("stats: %" PRIu64 " requests queued, %" PRIu64 " submitted after merging, %" PRIu64
                  " syscalls, %s written, %" PRIu64 " flushes, %.3f s (%s engine, %s)\n",
                  s.requests_queued, s.requests_submitted, s.syscalls, fsio::format_size(s.bytes_written).c_str(),
                  s.flushes, s.elapsed_seconds, queue->engine().name(), dev->direct() ? "direct" : "buffered");
    }
  }
  return fsio::cli::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  auto& f = a.fmt;
  CLI::App app{"Create a FAT12, FAT16 or FAT32 filesystem, choosing the geometry mkfs.fat would."};
  app.set_help_flag("--help", "print this help and exit");  // -h is mkfs.fat's hidden sectors
  app.add_option("TARGET", a.target, "block device or image file")->required();
  app.add_option("BLOCKS", a.blocks, "size to use: 1024-byte blocks, or a size with a suffix (64M)");
  app.add_option("-F", f.fat_type, "FAT type: 12, 16 or 32")->check(CLI::IsMember({12u, 16u, 32u}));
  app.add_option("-s", f.sectors_per_cluster, "sectors per cluster (1..128, a power of two)")
      ->check(CLI::IsMember({1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}));
  app.add_option("--cluster-size", a.cluster_size, "cluster size in bytes (instead of -s)");
  app.add_option("-S", f.sector_size, "logical sector size (512..4096, a power of two)")
      ->check(CLI::IsMember({512u, 1024u, 2048u, 4096u}));
  app.add_option("-n", a.label, "volume label (up to 11 characters)");
  app.add_option("-i", a.volume_id, "volume id, 8 hex digits");
  app.add_option("-f", f.num_fats, "number of FATs (1..4)")->check(CLI::Range(1u, 4u));
  app.add_option("-r", f.root_entries, "root directory entries (FAT12/16)");
  app.add_option("-R", f.reserved_sectors, "minimum reserved sectors");
  app.add_flag("-a", f.no_align, "do not align structures to the cluster size");
  app.add_option("-h", a.hidden, "hidden sectors");
  app.add_option("-M", a.media, "media descriptor byte");
  app.add_option("-D", a.drive, "BIOS drive number");
  app.add_option("-b", a.backup, "backup boot sector (FAT32)");
  app.add_flag("-C", a.create, "create TARGET as an image of BLOCKS size");
  app.add_option("--offset", a.offset, "start of the filesystem: sectors, or bytes with a suffix");
  app.add_flag("--invariant", f.invariant, "fixed volume id and timestamps (reproducible)");
  app.add_flag("-I,--force", a.force, "format even over a filesystem or partition table");
  app.add_flag("--dry-run", a.dry_run, "print the geometry, write nothing");
  app.add_flag("--discard", a.discard, "discard (TRIM) the volume first; punch holes in an image");
  app.add_flag("--json", a.json, "one JSON document on stdout");
  app.add_flag("--stats", a.stats, "print I/O statistics");
  app.add_flag("-q,--quiet", a.quiet, "print nothing but errors");
  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc;
  return run(a);
}
