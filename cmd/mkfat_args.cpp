// mkfat's command line (see mkfat_args.hpp).
#include "cmd/mkfat_args.hpp"

#include <getopt.h>
#include <strings.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <vector>

#include "cmd/common.hpp"
#include "fat/codepage.hpp"
#include "fat/label.hpp"
#include "libfsio/size.hpp"
#include "version.hpp"

namespace fsio::cli {

namespace {

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(std::numeric_limits<off_t>::max());
// 128 sectors of 32 KiB, the most compute_geometry can ever make a cluster.
constexpr std::uint64_t kMaxClusterBytes = 4u << 20;

Error usage(std::string what) { return make_error(Errc::invalid_argument, std::move(what)); }

// A number as mkfs.fat reads it (strtol base 0: 0x.. hex, 0.. octal), no
// sign, no blanks, at most `max`.
Result<std::uint64_t> number(const std::string& text, const std::string& what, std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text.find_first_of("+- \t") != std::string::npos || *end || errno || v > max)
    return usage(what + " '" + text + "': expected a number from 0 to " + std::to_string(max));
  return std::uint64_t(v);
}

Result<unsigned> one_of(const std::string& text, const std::string& what, std::initializer_list<unsigned> allowed) {
  const auto v = FSIO_TRY(number(text, what, 0xFFFFFFFFu));
  std::string list;
  for (unsigned a : allowed) {
    if (v == a) return unsigned(v);
    list += (list.empty() ? "" : ", ") + std::to_string(a);
  }
  return usage(what + " '" + text + "': expected one of " + list);
}

Result<unsigned> in_range(const std::string& text, const std::string& what, unsigned lo, unsigned hi) {
  const auto v = FSIO_TRY(number(text, what, 0xFFFFFFFFu));
  if (v < lo || v > hi)
    return usage(what + " '" + text + "': expected " + std::to_string(lo) + " to " + std::to_string(hi));
  return unsigned(v);
}

Result<CountOrSize> count_or_size(const std::string& text, const char* what) {
  auto v = parse_size(text);
  if (!v) return std::move(v).error().wrap(what);
  return CountOrSize{*v, text.find_first_not_of("0123456789") == std::string::npos};
}

// BLOCKS: KiB, or a size that is a whole number of KiB; never 0, never more
// than a 64-bit byte count can hold.
Result<std::uint64_t> parse_blocks(const std::string& text) {
  const auto b = FSIO_TRY(count_or_size(text, "BLOCKS"));
  if (b.plain && b.value > kMaxU64 / 1024)
    return usage("BLOCKS " + text + ": more than " + std::to_string(kMaxU64 / 1024) +
                 " blocks of 1024 bytes, which no size can hold");
  if (!b.plain && b.value % 1024) return usage("BLOCKS " + text + ": not a whole number of 1024-byte blocks");
  const std::uint64_t kib = b.plain ? b.value : b.value / 1024;
  if (kib == 0) return usage("BLOCKS " + text + ": nothing to format");
  return kib;
}

Status geometry(const std::string& text, fat::FormatOptions& f) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return usage("-g '" + text + "': expected HEADS/SECTORS_PER_TRACK, like 255/63");
  f.heads = FSIO_TRY(in_range(text.substr(0, slash), "-g heads", 1, 65535));
  f.sectors_per_track = FSIO_TRY(in_range(text.substr(slash + 1), "-g sectors per track", 1, 65535));
  return {};
}

Status mbr(const char* value, fat::FormatOptions& f) {
  using M = fat::FormatOptions::Mbr;
  const std::string v = value ? value : "y";
  auto is = [&](const char* a, const char* b) { return !strcasecmp(v.c_str(), a) || !strcasecmp(v.c_str(), b); };
  if (is("y", "yes")) f.mbr = M::yes;
  else if (is("n", "no")) f.mbr = M::no;
  else if (is("a", "auto")) f.mbr = M::automatic;
  else return usage("--mbr='" + v + "': expected y, n or a");
  return {};
}

enum LongOnly {
  kInvariant = 1000,
  kMbr,
  kVariant,
  kCodepage,
  kOffset,
  kHelp,
  kForce,
  kDryRun,
  kJson,
  kStats,
  kDiscard,
  kClusterSize,
  kSkipSpecial,
  kSlack,
  kTz
};

const option kLong[] = {
    {"codepage", required_argument, nullptr, kCodepage},
    {"invariant", no_argument, nullptr, kInvariant},
    {"mbr", optional_argument, nullptr, kMbr},
    {"variant", required_argument, nullptr, kVariant},
    {"offset", required_argument, nullptr, kOffset},
    {"help", no_argument, nullptr, kHelp},
    {"version", no_argument, nullptr, 'V'},
    {"force", no_argument, nullptr, kForce},
    {"dry-run", no_argument, nullptr, kDryRun},
    {"json", no_argument, nullptr, kJson},
    {"stats", no_argument, nullptr, kStats},
    {"discard", no_argument, nullptr, kDiscard},
    {"quiet", no_argument, nullptr, 'q'},
    {"cluster-size", required_argument, nullptr, kClusterSize},
    {"root", required_argument, nullptr, 'd'},
    {"skip-special", no_argument, nullptr, kSkipSpecial},
    {"slack", required_argument, nullptr, kSlack},
    {"tz", required_argument, nullptr, kTz},
    {nullptr, 0, nullptr, 0},
};

// One option; `v` is its value (nullptr for flags and an absent --mbr value).
Status apply(int c, const char* v, MkfatArgs& a) {
  auto& f = a.fmt;
  const std::string s = v ? v : "";
  switch (c) {
    case 'a': f.no_align = true; break;
    case 'A': f.atari = !f.atari; break;  // mkfs.fat: "toggle"
    case 'b': a.backup = s; break;
    case 'c': a.check = true; break;
    case 'C': a.create = true; break;
    case 'd': a.root = s; break;
    case kSkipSpecial: a.skip_special = true; break;
    case kSlack: a.slack = s; break;
    case kTz: a.tz = s; break;
    case 'D': a.drive = s; break;
    case 'f': f.num_fats = FSIO_TRY(in_range(s, "-f", 1, 4)); break;
    case 'F': f.fat_type = FSIO_TRY(one_of(s, "-F", {12, 16, 32})); break;
    case 'g': FSIO_TRY(geometry(s, f)); break;
    case 'h': a.hidden = s; break;
    case 'i': a.volume_id = s; break;
    case 'I':
    case kForce: a.force = true; break;
    case 'l': a.bad_block_file = s; break;
    case 'm': a.message_file = s; break;
    case 'M': a.media = s; break;
    case 'n': a.label = s; break;
    case 'q': a.quiet = true; break;
    // mkfs.fat refuses 0 for both ("Bad number of ..."); here 0 would mean "choose".
    case 'r': f.root_entries = FSIO_TRY(in_range(s, "-r", 16, 32768)); break;
    case 'R': f.reserved_sectors = FSIO_TRY(in_range(s, "-R", 1, 65535)); break;
    case 's': f.sectors_per_cluster = FSIO_TRY(one_of(s, "-s", {1, 2, 4, 8, 16, 32, 64, 128})); break;
    case 'S': f.sector_size = FSIO_TRY(one_of(s, "-S", {512, 1024, 2048, 4096, 8192, 16384, 32768})); break;
    case 'v': ++a.verbose; break;
    case 'V': a.version = true; break;
    case kInvariant: f.invariant = true; break;
    case kMbr: FSIO_TRY(mbr(v, f)); break;
    case kVariant:
      if (!strcasecmp(v, "standard")) f.atari = false;
      else if (!strcasecmp(v, "atari")) f.atari = true;
      else return usage("--variant '" + s + "': expected standard or atari");
      break;
    case kCodepage: a.codepage = FSIO_TRY(in_range(s, "--codepage", 0, std::numeric_limits<int>::max())); break;
    case kOffset: a.offset = s; break;
    case kHelp: a.help = true; break;
    case kDryRun: a.dry_run = true; break;
    case kJson: a.json = true; break;
    case kStats: a.stats = true; break;
    case kDiscard: a.discard = true; break;
    case kClusterSize: a.cluster_size = s; break;
    default: return usage("unexpected option");
  }
  return {};
}

}  // namespace

Invocation invocation(const char* argv0) {
  Invocation inv;
  inv.tool = std::filesystem::path(argv0 && *argv0 ? argv0 : "mkfat").filename();
  if (inv.tool == "mkfs.fat" || inv.tool == "mkfs.vfat" || inv.tool == "mkfs.msdos" || inv.tool == "mkdosfs")
    inv.personality = Personality::mkfs;
  return inv;
}

Result<MkfatArgs> parse_args(const Invocation& inv, int argc, char** argv) {
  MkfatArgs a;
  a.inv = inv;
  opterr = 0;  // our own messages, prefixed with the tool's name
  optind = 0;  // (re)start: glibc's full reinitialisation
  for (;;) {
    // Leading ':' tells a missing value (':') from an unknown option ('?').
    const int c = getopt_long(argc, argv, ":aAb:cCd:f:D:F:g:Ii:l:m:M:n:qr:R:s:S:h:vV", kLong, nullptr);
    if (c == -1) break;
    const std::string word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    const std::string name = optopt > 0 && optopt < 256 ? std::string("-") + char(optopt) : word;
    if (c == ':') return usage("option '" + name + "' needs a value");
    if (c == '?') return usage("unknown option '" + name + "'");
    FSIO_TRY(apply(c, optarg, a));
  }
  if (a.help || a.version) return a;
  std::vector<std::string> words(argv + optind, argv + argc);
  if (words.empty()) return usage("no device specified (TARGET)");
  if (words.size() > 2) return usage("excess arguments on the command line: '" + words[2] + "'");
  a.target = words[0];
  if (words.size() == 2) a.blocks = words[1];
  return a;
}

Status finish_options(MkfatArgs& a, const std::string& charset) {
  auto& f = a.fmt;
  a.auto_size = a.root && a.create && (!a.blocks || *a.blocks == "auto");
  if (a.blocks && *a.blocks == "auto" && !a.auto_size)
    return usage("SIZE auto goes with -C and -d: a new image just large enough for the tree");
  if (a.blocks && !a.auto_size) f.blocks = FSIO_TRY(parse_blocks(*a.blocks));
  if (a.create && f.blocks == 0 && !a.auto_size) return usage("-C needs the size of the image to create (BLOCKS)");
  if (a.create && a.dry_run && !a.root) return usage("-C and --dry-run: nothing to measure; omit -C");
  if (!a.root && (a.slack || a.tz || a.skip_special)) return usage("--slack, --tz and --skip-special go with -d");
  if (a.root && f.atari) return usage("-d with the Atari variant: not supported");
  if (a.check && a.bad_block_file) return usage("-c and -l: scan for bad blocks or read their list, not both");
  if (a.cluster_size) {
    const auto c = FSIO_TRY(count_or_size(*a.cluster_size, "--cluster-size"));
    if (c.value == 0 || c.value > kMaxClusterBytes)
      return usage("--cluster-size " + *a.cluster_size + ": must be from 512 bytes to 4 MiB (128 sectors)");
    f.cluster_size = std::uint32_t(c.value);
  }
  if (a.offset) a.offset_parsed = FSIO_TRY(count_or_size(*a.offset, "--offset"));
  if (a.volume_id) f.volume_id = FSIO_TRY(fat::parse_volume_id(*a.volume_id));
  if (a.media) {
    f.media = unsigned(FSIO_TRY(number(*a.media, "-M", 0xFF)));
    if (f.media == 0) return usage("-M " + *a.media + ": the media byte must be 0xF0 or 0xF8 to 0xFF");
  }
  if (a.drive) f.drive_number = unsigned(FSIO_TRY(number(*a.drive, "-D", 0xFF)));
  if (a.hidden) f.hidden_sectors = std::uint32_t(FSIO_TRY(number(*a.hidden, "-h", 0xFFFFFFFFu)));
  if (a.backup) f.backup_boot = unsigned(FSIO_TRY(number(*a.backup, "-b", 0xFFFF)));
  FSIO_TRY(fat::check_codepage(charset, a.codepage));
  const auto encoded = FSIO_TRY(fat::encode_label(a.label, charset, a.codepage));
  f.label = encoded.bytes;
  f.label_in_codepage = true;
  a.label_lowercase = encoded.lowercase;
  FSIO_TRY(fat::parse_label(f.label, f.uppercase_label, true));  // validate before touching the target
  return {};
}

Result<std::uint64_t> offset_sectors(const MkfatArgs& a, std::uint64_t size, std::uint32_t ss) {
  const CountOrSize& off = *a.offset_parsed;
  const std::string name = "--offset " + *a.offset;
  if (!off.plain && off.value % ss)
    return usage(name + ": not a multiple of the " + std::to_string(ss) + "-byte sector");
  const std::uint64_t sectors = off.plain ? off.value : off.value / ss;
  if (sectors >= size / ss)
    return usage(name + ": at or beyond the end of the target (it has " + std::to_string(size / ss) + " sectors of " +
                 std::to_string(ss) + " bytes)");
  return sectors;
}

Result<std::uint64_t> create_size(const MkfatArgs& a) {
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

std::string version_line(const Invocation& inv) {
  if (inv.personality == Personality::mkfs) return std::string("mkfs.fat 4.2 (fsio mkfat ") + fsio::kVersion + ")";
  return fsio::cli::version_line("mkfat");
}

// One function although it runs past 60 lines: it is the --help text, laid
// out as mkfs.fat 4.2 prints its own, then fsio's options.
std::string usage_text(const Invocation& inv) {
  return "Usage: " + inv.tool + " [OPTIONS] TARGET [BLOCKS]\n" +
         R"(Create FAT filesystem in TARGET, which can be a block device or file. Use only
up to BLOCKS 1024 byte blocks if specified. With the -C option, file TARGET will be
created with a size of 1024 bytes times BLOCKS, which must be specified.
BLOCKS may also be a size with a suffix (64M, 1GiB).

Options:
  -a              Disable alignment of data structures
  -A              Toggle Atari variant of the filesystem
  -b SECTOR       Select SECTOR as location of the FAT32 backup boot sector
  -c              Check device for bad blocks before creating the filesystem
  -C              Create file TARGET then create filesystem in it
  -D NUMBER       Write BIOS drive number NUMBER to boot sector
  -f COUNT        Create COUNT file allocation tables
  -F SIZE         Select FAT size SIZE (12, 16 or 32)
  -g GEOM         Select disk geometry: heads/sectors_per_track
  -h NUMBER       Write hidden sectors NUMBER to boot sector
  -i VOLID        Set volume ID to VOLID (a 32 bit hexadecimal number)
  -I              Ignore and disable safety checks (same as --force)
  -l FILENAME     Read bad blocks list from FILENAME
  -m FILENAME     Replace default error message in boot block with contents of FILENAME
  -M TYPE         Set media type in boot sector to TYPE
  --mbr[=y|n|a]   Fill (fake) MBR table with one partition which spans whole disk
  -n LABEL        Set volume name to LABEL (up to 11 characters long)
  --codepage=N    use DOS codepage N to encode label (default: 850)
  -r COUNT        Make room for at least COUNT entries in the root directory
  -R COUNT        Set minimal number of reserved sectors to COUNT
  -s COUNT        Set number of sectors per cluster to COUNT
  -S SIZE         Select a sector size of SIZE (a power of two, at least 512)
  -v              Verbose execution
  --variant=TYPE  Select variant TYPE of filesystem (standard or Atari)

  --invariant     Use constants for randomly generated or time based values
  --offset=SECTOR Write the filesystem at a specific sector into the device file.
                  (or at a byte offset with a suffix: --offset=1MiB)
  --help          Show this help message and exit

fsio's own:
  -V, --version   Print the version and exit
  --force         Format over a filesystem, RAID member or partition table
                  (never over one in use); -I is the same
  --dry-run       Print the geometry, the refusal or what would be overwritten;
                  write nothing
  --cluster-size=SIZE  Cluster size in bytes (instead of -s)
  -d, --root=SRC  Fill the volume with SRC: a directory, or a tar archive (plain,
                  gzip, zstd, xz; - reads standard input). With -C, BLOCKS may be
                  auto or omitted: the smallest volume that holds it
  --slack=SIZE|PCT  With -C auto: that much free space beyond the tree
  --skip-special  With -d: leave out devices, FIFOs and sockets, naming each
  --tz=ZONE       With -d: file times in ZONE (a tz name, or local), not UTC
  --discard       Discard (TRIM) the volume first; punch holes in an image
  --json          One JSON document on stdout
  --stats         Print I/O statistics
  -q, --quiet     Print nothing but errors
)" +
         (inv.personality == Personality::mkfs
              ? "\nCalled as " + inv.tool +
                    ", it behaves as mkfs.fat for scripts: an existing filesystem\n"
                    "is overwritten (with a note), and any error exits 1. See mkfat(8).\n"
              : "\nAn existing filesystem, RAID member or partition table is refused without\n"
                "--force; a mounted or in-use target is refused always. See mkfat(8).\n");
}

}  // namespace fsio::cli
