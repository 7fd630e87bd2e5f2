// mkfat's command line: mkfs.fat 4.2's options with their meanings, and
// ours. Parsed with getopt_long, as mkfs.fat parses them, so that every
// spelling a script uses means the same: "-F32", "-vI", "--mbr" without a
// value (an optional argument is only ever "--mbr=y", never the next word,
// which is the target), "--offset=2048", options after the target.
//
// Invoked as mkfs.fat, mkfs.vfat, mkfs.msdos or mkdosfs (links, or `mkfs -t vfat`)
// the tool takes mkfs.fat's personality (Personality::mkfs): what scripts
// see is what mkfs.fat gives them (see mkfat.8, "Under mkfs.fat's names").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fat/geometry.hpp"
#include "libfsio/result.hpp"

namespace fsio::cli {

enum class Personality {
  mkfat,  // our own name: refuse to overwrite without --force, exit 2 for usage
  mkfs,   // mkfs.fat's names: overwrite with a note, exit 1 for any error
};

struct Invocation {
  std::string tool;  // argv[0]'s file name: the prefix of every message
  Personality personality = Personality::mkfat;
};
Invocation invocation(const char* argv0);

// mkfs.fat counts BLOCKS in KiB and --offset in sectors; with a suffix ("64M",
// "1MiB") either is a size in bytes instead. `plain` says which was typed.
struct CountOrSize {
  std::uint64_t value = 0;
  bool plain = false;
};

struct MkfatArgs {
  Invocation inv;
  fat::FormatOptions fmt;
  std::string target, label;
  // Option texts, checked by finish_options (even when empty: -i '' is an error).
  std::optional<std::string> blocks, offset, volume_id, cluster_size, media, drive, hidden, backup;
  std::optional<CountOrSize> offset_parsed;   // --offset, unit resolved once the sector size is known
  std::optional<std::string> bad_block_file;  // -l
  std::optional<std::string> message_file;    // -m ("-": standard input)
  std::optional<std::string> root;            // -d, --root: a directory or tar archive to fill the volume with
  std::optional<std::string> slack, tz;       // --slack SIZE|PCT, --tz ZONE (with -d; mkfat_tree.cpp reads them)
  bool skip_special = false;                  // --skip-special (with -d)
  bool auto_size = false;                     // -C -d with SIZE auto or omitted: the smallest that holds the tree
  unsigned codepage = 850;                    // --codepage
  bool label_lowercase = false;               // a non-ASCII lowercase letter (warned)
  int verbose = 0;                            // -v
  bool check = false, create = false, force = false, dry_run = false, discard = false, json = false, stats = false,
       quiet = false, help = false, version = false;
};

// Reads argv. Errc::invalid_argument for an unknown option, a missing or
// malformed value (checked as mkfs.fat checks it: -s, -S, -F, -f, -r, -R,
// -g, --mbr, --variant, --codepage), a missing target or an extra word.
// The text options are checked later by finish_options.
Result<MkfatArgs> parse_args(const Invocation& inv, int argc, char** argv);

// Turns the text options into FormatOptions; every mistake is a usage error
// naming the option and its limit, found before anything is multiplied.
// The label is converted from the locale's character set (`charset`) to
// --codepage.
Status finish_options(MkfatArgs& a, const std::string& charset);

// --offset in sectors for a target of `size` bytes with `ss`-byte sectors.
Result<std::uint64_t> offset_sectors(const MkfatArgs& a, std::uint64_t size, std::uint32_t ss);

// -C: the size of the image to create (BLOCKS KiB after the offset).
Result<std::uint64_t> create_size(const MkfatArgs& a);

// "mkfs.fat 4.2 (fsio mkfat 0.1.0)" under mkfs.fat's names (their version
// line, which scripts read for the version), "mkfat 0.1.0 (fsio; mkfs.fat
// 4.2 options)" under ours.
std::string version_line(const Invocation& inv);

// mkfs.fat's option list in its order and words, then ours.
std::string usage_text(const Invocation& inv);

}  // namespace fsio::cli
