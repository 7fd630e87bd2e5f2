// mkext4's command line: mke2fs's options with their meanings (the ones
// that make an ext4 filesystem of the kinds ext/ writes), and fsio's own.
// Parsed with CLI11 as every fsio tool; "-Fq", "-b4096", "-O^has_journal",
// options after the target and repeated -O work as they do with mke2fs's
// getopt. Every number is range-checked here, naming the option.
#pragma once

#include <optional>
#include <string>

#include "ext/id_map.hpp"
#include "ext/mkfs_params.hpp"

namespace fsio::cli {

// -d's owners: the source's, through the maps, or 0:0 for all.
struct TreeOwners {
  std::optional<ext::IdMap> uid_map, gid_map;  // --uid-map, --gid-map
  bool all_root = false;                       // --all-root
};

struct Mkext4Args {
  ext::MkfsRequest req;
  std::string target;
  std::optional<std::string> offset;  // --offset text
  std::optional<std::string> root;    // -d SRC: a directory or a tar archive ("-": standard input)
  TreeOwners owners;
  bool auto_size = false;            // -C -d with SIZE auto or none: the size chosen for the tree
  std::optional<std::string> slack;  // --slack: room left beyond the tree (SIZE auto)
  bool create = false, dry_run = false, json = false, stats = false, quiet = false;
};

// -1: go on; else the exit code (help, version, usage errors already said).
int parse_mkext4(int argc, char** argv, Mkext4Args& a);

}  // namespace fsio::cli
