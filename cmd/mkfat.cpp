// mkfat: create a FAT12/16/32 filesystem with mkfs.fat's geometry, in a few
// large batched writes. Options are mkfs.fat's; the work is fat::compute_geometry
// and fat::format_volume, and the refusals are named before anything is written.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"
#include "fat/device_facts.hpp"
#include "fat/format.hpp"
#include "fat/label.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace {

using fsio::Errc;
using fsio::Result;

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(std::numeric_limits<off_t>::max());
// 128 sectors of 32 KiB, the most compute_geometry can ever make a cluster.
constexpr std::uint64_t kMaxClusterBytes = 4u << 20;

// mkfs.fat counts BLOCKS in KiB and --offset in sectors; with a suffix ("64M",
// "1MiB") either is a size in bytes instead. `plain` says which was typed.
struct CountOrSize {
  std::uint64_t value = 0;
  bool plain = false;
};

struct Args {
  fat::FormatOptions fmt;
  std::string target, label;
  // Options whose text must be checked even when empty (-i '' is an error).
  std::optional<std::string> blocks, offset, volume_id, cluster_size, media, drive, hidden, backup;
  std::optional<CountOrSize> offset_parsed;  // --offset, unit resolved once the sector size is known
  bool create = false, force = false, dry_run = false, discard = false, json = false, stats = false,
       quiet = false;
};

fsio::Error usage(std::string what) { return fsio::make_error(Errc::invalid_argument, std::move(what)); }

Result<CountOrSize> count_or_size(const std::string& text, const char* what) {
  auto v = fsio::parse_size(text);
  if (!v) return std::move(v).error().wrap(what);
  return CountOrSize{*v, text.find_first_not_of("0123456789") == std::string::npos};
}

Result<unsigned> number(const std::string& text, const char* what, unsigned max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || text.find('-') != std::string::npos || *end || errno || v > max)
    return usage(std::string(what) + " '" + text + "': expected a number from 0 to " + std::to_string(max));
  return unsigned(v);
}

// BLOCKS: KiB, or a size that is a whole number of KiB; never 0, never more
// than a 64-bit byte count can hold.
Result<std::uint64_t> parse_blocks(const std::string& text) {
  const auto b = FSIO_TRY(count_or_size(text, "BLOCKS"));
  if (b.plain && b.value > kMaxU64 / 1024)
    return usage("BLOCKS " + text + ": more than " + std::to_string(kMaxU64 / 1024) +
                 " blocks of 1024 bytes, which no size can hold");
  if (!b.plain && b.value % 1024)
    return usage("BLOCKS " + text + ": not a whole number of 1024-byte blocks");
  const std::uint64_t kib = b.plain ? b.value : b.value / 1024;
  if (kib == 0) return usage("BLOCKS " + text + ": nothing to format");
  return kib;
}

// Turns the text options into FormatOptions; every mistake is a usage error
// naming the option and its limit, found before anything is multiplied.
fsio::Status finish_options(Args& a) {
  auto& f = a.fmt;
  if (a.blocks) f.blocks = FSIO_TRY(parse_blocks(*a.blocks));
  if (a.create && f.blocks == 0) return usage("-C needs the size of the image to create (BLOCKS)");
  if (a.create && a.dry_run) return usage("-C and --dry-run: nothing to measure; omit -C");
  if (a.cluster_size) {
    const auto c = FSIO_TRY(count_or_size(*a.cluster_size, "--cluster-size"));
    if (c.value == 0 || c.value > kMaxClusterBytes)
      return usage("--cluster-size " + *a.cluster_size + ": must be from 512 bytes to 4 MiB (128 sectors)");
    f.cluster_size = std::uint32_t(c.value);
  }
  if (a.offset) a.offset_parsed = FSIO_TRY(count_or_size(*a.offset, "--offset"));
  if (a.volume_id) f.volume_id = FSIO_TRY(fat::parse_volume_id(*a.volume_id));
  if (a.media) {
    f.media = FSIO_TRY(number(*a.media, "-M", 0xFF));
    if (f.media == 0) return usage("-M " + *a.media + ": the media byte must be 0xF0 or 0xF8 to 0xFF");
  }
  if (a.drive) f.drive_number = FSIO_TRY(number(*a.drive, "-D", 0xFF));
  if (a.hidden) f.hidden_sectors = FSIO_TRY(number(*a.hidden, "-h", 0xFFFFFFFFu));
  if (a.backup) f.backup_boot = FSIO_TRY(number(*a.backup, "-b", 0xFFFF));
  f.label = a.label;
  FSIO_TRY(fat::parse_label(a.label, f.uppercase_label));  // validate before touching the target
  return {};
}

// --offset in bytes, for a target of `size` bytes with `ss`-byte sectors:
// in range before it is multiplied.
Result<std::uint64_t> offset_sectors(const Args& a, std::uint64_t size, std::uint32_t ss) {
  const CountOrSize& off = *a.offset_parsed;
  const std::string name = "--offset " + *a.offset;
  if (!off.plain && off.value % ss) return usage(name + ": not a multiple of the " + std::to_string(ss) + "-byte sector");
  const std::uint64_t sectors = off.plain ? off.value : off.value / ss;
  if (sectors >= size / ss)
    return usage(name + ": at or beyond the end of the target (it has " + std::to_string(size / ss) + " sectors of " +
                 std::to_string(ss) + " bytes)");
  return sectors;
}

// -C: BLOCKS KiB after the offset, as mkfs.fat sizes the image it creates.
Result<std::uint64_t> create_size(const Args& a) {
  const std::uint64_t bytes = a.fmt.blocks * 1024;  // parse_blocks bounded it
  if (bytes > kMaxFileBytes)
    return usage("BLOCKS " + *a.blocks + ": the image would be larger than a file can hold (2^63-1 bytes)");
  std::uint64_t offset = 0;
  if (a.offset_parsed) {
    const std::uint64_t ss = a.fmt.sector_size ? a.fmt.sector_size : 512;
    const auto& off = *a.offset_parsed;
    if (off.plain && off.value > (kMaxFileBytes - bytes) / ss)
      return usage("--offset " + *a.offset + " with BLOCKS: the image would be larger than a file can hold");
    offset = off.plain ? off.value * ss : off.value;
  }
  if (offset > kMaxFileBytes - bytes)
    return usage("BLOCKS and --offset: the image would be larger than a file can hold (2^63-1 bytes)");
  return bytes + offset;
}

void print_summary(const std::string& target, const fat::Layout& layout, bool dry_run) {
  std::printf("%s%s: %s\n", dry_run ? "would format " : "", target.c_str(), fsio::cli::layout_summary(layout).c_str());
}

void print_result(const Args& a, const fat::Layout& summary, const fat::FormatReport& rep,
                  fsio::IoQueue& queue) {
  print_summary(a.target, summary, false);
  std::printf("volume id %s%s%s\n", fat::format_volume_id(rep.volume_id).c_str(), rep.label.empty() ? "" : ", label ",
              rep.label.c_str());
  if (rep.bytes_wiped) std::printf("wiped %" PRIu64 " bytes of foreign signatures\n", rep.bytes_wiped);
  if (!a.stats) return;
  const auto& s = queue.stats();
  std::printf("stats: %" PRIu64 " requests queued, %" PRIu64 " submitted after merging, %" PRIu64
              " syscalls, %s written, %" PRIu64 " flushes, %.3f s (%s engine, %s)\n",
              s.requests_queued, s.requests_submitted, s.syscalls, fsio::format_size(s.bytes_written).c_str(),
              s.flushes, s.elapsed_seconds, queue.engine().name(), queue.device().direct() ? "direct" : "buffered");
}

// The target opened as this run needs it: for writing, or with --dry-run
// read-only but refusing what a write would meet (in use, read-only,
// claimed), so the dry run reports the same refusal.
Result<fsio::Device> open_target(const Args& a) {
  fsio::OpenOptions oo;
  oo.write = !a.dry_run;
  oo.check_write = a.dry_run;
  if (a.create) {
    oo.create_size = FSIO_TRY(create_size(a));
    oo.create_new = true;  // O_EXCL, as mkfs.fat -C: never follows a symlink
  }
  return fsio::Device::open(a.target, oo);
}

// Everything that can refuse, before a single byte is written: the
// geometry, then filesystems and partition tables in the volume (libblkid).
Result<fat::Geometry> plan(Args& a, const fsio::Device& dev, std::vector<fat::ByteRange>& wipe) {
  const fat::DeviceFacts facts = fat::device_facts(dev);
  if (a.offset_parsed)
    a.fmt.offset_sectors = FSIO_TRY(offset_sectors(a, dev.size(), fat::logical_sector_size(a.fmt, facts)));
  auto g = FSIO_TRY_CTX(fat::compute_geometry(dev.size(), a.fmt, facts), a.target);
  // Probe exactly the volume: with --offset, a partition table before it is expected.
  auto sigs = FSIO_TRY(fsio::check_overwrite(dev.path(), dev.offset() + g.offset_bytes, g.filesystem_bytes(),
                                             a.force, "formatting"));
  for (const auto& s : sigs) wipe.push_back({g.offset_bytes + s.offset, s.length});
  return g;
}

Result<fat::FormatReport> format(const Args& a, fsio::IoQueue& queue, const fat::Geometry& g,
                                 const std::vector<fat::ByteRange>& wipe) {
  auto identity = FSIO_TRY(fat::resolve_identity(a.fmt, [] () -> std::optional<std::string_view> {
    if (const char* e = std::getenv("SOURCE_DATE_EPOCH")) return std::string_view(e);
    return std::nullopt;
  }()));
  // Like mke2fs: a device that cannot discard is still formatted, with a word.
  if (a.discard) {
    if (auto d = queue.device().discard(g.offset_bytes, g.filesystem_bytes()); !d && !a.quiet)
      std::fprintf(stderr, "mkfat: warning: discard failed, formatting anyway: %s\n", d.error().message().c_str());
    if (fsio::InterruptGuard::requested())
      return fsio::make_error(Errc::interrupted, a.target + ": interrupted after --discard: the old contents are "
                                                             "discarded and no filesystem was made; run mkfat again");
  }
  fsio::Progress progress("mkfat", fat::format_bytes(g), !a.quiet && !a.json && fsio::stderr_is_terminal());
  return fat::format_volume(queue, g, a.fmt, &progress, {wipe, identity});
}

int run(Args& a) {
  const char* tool = "mkfat";
  if (auto st = finish_options(a); !st) return fsio::cli::report(tool, st.error());
  // Ctrl-C from here on is reported (exit 130) with the state it leaves,
  // instead of killing the run between two writes. A dry run writes
  // nothing, so there Ctrl-C just ends it.
  std::optional<fsio::InterruptGuard> interrupt;
  if (!a.dry_run) interrupt.emplace();
  auto dev = open_target(a);
  if (!dev) return fsio::cli::report(tool, dev.error());
  // From here on a failure removes the image -C created: a half-made image
  // would only block the retry.
  auto fail = [&](const fsio::Error& e) {
    std::string msg = e.message();
    // What was written into an image that is removed again does not matter.
    if (dev->created() && e.code == Errc::interrupted) msg = a.target + ": interrupted";
    if (dev->created()) {
      auto rm = dev->remove_created();
      msg += rm ? "; removed " + a.target + ", which -C had created"
                : "; could not remove the image -C created: " + rm.error().message();
    }
    return fsio::cli::report(tool, fsio::Error{e.code, 0, msg});
  };

  std::vector<fat::ByteRange> wipe;
  auto geo = plan(a, *dev, wipe);
  if (!geo) return fail(geo.error());
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

  auto queue = fsio::IoQueue::create(*dev);
  if (!queue) return fail(std::move(queue).error().wrap(a.target));
  auto rep = format(a, *queue, *geo, wipe);
  if (!rep) return fail(rep.error());

  out["volume_id"] = fat::format_volume_id(rep->volume_id);
  out["label"] = rep->label;
  out["bytes_written"] = rep->bytes_written;
  out["bytes_wiped"] = rep->bytes_wiped;
  out["stats"] = fsio::cli::to_json(queue->stats());
  out["engine"] = queue->engine().name();
  out["direct"] = dev->direct();
  if (a.json) std::cout << out.dump(2) << '\n';
  else if (!a.quiet) print_result(a, summary, *rep, *queue);
  return fsio::cli::exit_ok;
}

// An option whose text is kept even when empty, so -i '' can be refused.
void text_option(CLI::App& app, const std::string& name, std::optional<std::string>& out, const std::string& help) {
  app.add_option_function<std::string>(name, [&out](const std::string& v) { out = v; }, help);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  auto& f = a.fmt;
  CLI::App app{"Create a FAT12, FAT16 or FAT32 filesystem, choosing the geometry mkfs.fat would."};
  app.set_help_flag("--help", "print this help and exit");  // -h is mkfs.fat's hidden sectors
  app.add_option("TARGET", a.target, "block device or image file")->required();
  text_option(app, "BLOCKS", a.blocks, "size to use: 1024-byte blocks, or a size with a suffix (64M)");
  app.add_option("-F", f.fat_type, "FAT type: 12, 16 or 32")->check(CLI::IsMember({12u, 16u, 32u}));
  app.add_option("-s", f.sectors_per_cluster, "sectors per cluster (1..128, a power of two)")
      ->check(CLI::IsMember({1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}));
  text_option(app, "--cluster-size", a.cluster_size, "cluster size in bytes (instead of -s)");
  app.add_option("-S", f.sector_size, "logical sector size (512..4096, a power of two)")
      ->check(CLI::IsMember({512u, 1024u, 2048u, 4096u}));
  app.add_option("-n", a.label, "volume label (up to 11 characters)");
  text_option(app, "-i", a.volume_id, "volume id, 8 hex digits");
  app.add_option("-f", f.num_fats, "number of FATs (1..4)")->check(CLI::Range(1u, 4u));
  // mkfs.fat refuses 0 for both ("Bad number of ..."); here 0 would mean "choose".
  app.add_option("-r", f.root_entries, "root directory entries (FAT12/16, 16..32768)")->check(CLI::Range(16u, 32768u));
  app.add_option("-R", f.reserved_sectors, "minimum reserved sectors (1..65535)")->check(CLI::Range(1u, 65535u));
  app.add_flag("-a", f.no_align, "do not align structures to the cluster size");
  text_option(app, "-h", a.hidden, "hidden sectors");
  text_option(app, "-M", a.media, "media descriptor byte (0xF0, 0xF8..0xFF)");
  text_option(app, "-D", a.drive, "BIOS drive number");
  text_option(app, "-b", a.backup, "backup boot sector (FAT32)");
  app.add_flag("-C", a.create, "create TARGET as an image of BLOCKS size");
  text_option(app, "--offset", a.offset, "start of the filesystem: sectors, or bytes with a suffix");
  app.add_flag("--invariant", f.invariant, "fixed volume id and timestamps (reproducible)");
  app.add_flag("-I,--force", a.force, "format even over a filesystem or partition table (never a mounted one)");
  app.add_flag("--dry-run", a.dry_run, "print the geometry, or the refusal, and write nothing");
  app.add_flag("--discard", a.discard, "discard (TRIM) the volume first; punch holes in an image");
  app.add_flag("--json", a.json, "one JSON document on stdout");
  app.add_flag("--stats", a.stats, "print I/O statistics");
  app.add_flag("-q,--quiet", a.quiet, "print nothing but errors");
  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc;
  return run(a);
}
