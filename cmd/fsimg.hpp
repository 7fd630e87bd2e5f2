// fsimg's commands (save, restore, verify, info), each in the shape of
// every fsio tool: options bound, one library call (img/), output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmd/img/input.hpp"
#include "cmd/img/restore.hpp"
#include "cmd/img/save.hpp"
#include "cmd/img/source.hpp"

namespace fsimg {

struct Args {
  std::string source, out, in, target;
  std::vector<std::string> targets;  // restore: one or more
  std::string bmap;                  // restore --bmap
  std::string fs = "auto";
  int level = 3;
  unsigned threads = 0;
  std::uint64_t offset = 0;
  std::uint64_t frame_bytes = 16u << 20;
  bool force = false, keep_unused = false, create = false, dry_run = false, unused = false, verify = false;
  bool json = false, quiet = false;
};

int run_save(const Args& a);
int run_restore(const Args& a);
int run_verify(const Args& a);
int run_info(const Args& a);
// restore to several targets, or from anything but an fsimg stream, or
// with --verify or --bmap (fsimg_multi.cpp): `in` is open, its kind told.
int run_restore_many(const Args& a, img::StreamReader& in, img::InputKind kind);

// "-" is stdin/stdout; refused when that is a terminal.
inline constexpr const char* kTool = "fsimg";

}  // namespace fsimg
