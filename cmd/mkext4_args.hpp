// mkext4's command line: mke2fs's options with their meanings (the ones
// that make an ext4 filesystem of the kinds ext/ writes), and fsio's own.
// Parsed with CLI11 as every fsio tool; "-Fq", "-b4096", "-O^has_journal",
// options after the target and repeated -O work as they do with mke2fs's
// getopt. Every number is range-checked here, naming the option.
#pragma once

#include <optional>
#include <string>

#include "ext/mkfs_params.hpp"

namespace fsio::cli {

struct Mkext4Args {
  ext::MkfsRequest req;
  std::string target;
  std::optional<std::string> offset;  // --offset text
  std::optional<std::string> root;    // -d SRC: a directory or a tar archive ("-": standard input)
  bool create = false, dry_run = false, json = false, stats = false, quiet = false;
};

// -1: go on; else the exit code (help, version, usage errors already said).
int parse_mkext4(int argc, char** argv, Mkext4Args& a);

}  // namespace fsio::cli
