// fsimg's commands (save, restore, verify, info), each in the shape of
// every fsio tool: options bound, one library call (img/), output.
#pragma once

#include <cstdint>
#include <string>

#include "cmd/img/restore.hpp"
#include "cmd/img/save.hpp"
#include "cmd/img/source.hpp"

namespace fsimg {

struct Args {
  std::string source, out, in, target;
  std::string fs = "auto";
  int level = 3;
  unsigned threads = 0;
  std::uint64_t offset = 0;
  std::uint64_t frame_bytes = 16u << 20;
  bool force = false, keep_unused = false, create = false, dry_run = false, unused = false;
  bool json = false, quiet = false;
};

int run_save(const Args& a);
int run_restore(const Args& a);
int run_verify(const Args& a);
int run_info(const Args& a);

// "-" is stdin/stdout; refused when that is a terminal.
inline constexpr const char* kTool = "fsimg";

}  // namespace fsimg
