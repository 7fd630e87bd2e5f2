// extwb's subcommands, shared between the files of the tool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cmd/common.hpp"
#include "ext/fs.hpp"

namespace extwb {

inline constexpr const char* kTool = "extwb";

// Options every subcommand has.
struct Common {
  std::string target;
  std::uint64_t offset = 0;
  bool json = false, buffered = false, quiet = false, stats = false, dry_run = false;
};

fsio::Result<std::unique_ptr<ext::Filesystem>> open_fs(const Common& c);
// For put, mkdir and rm: read-write, or under --dry-run read-only with every
// refusal a write would meet.
fsio::Result<std::unique_ptr<ext::Filesystem>> open_fs_to_write(const Common& c);

int cmd_ls(const Common& c, const std::string& path, bool long_format);
int cmd_get(const Common& c, const std::string& path);
int cmd_stat(const Common& c, const std::string& path);
int cmd_df(const Common& c);

struct WriteArgs {
  std::string dest, source = "-";
  bool parents = false, force = false, sparse = false;
  std::string mode, mtime;
  std::uint32_t uid = 0, gid = 0;
  bool owner_given = false;                     // --uid or --gid on the command line
  std::vector<std::string> uid_maps, gid_maps;  // put of a tree: --uid-map, --gid-map FROM:TO:COUNT
  bool all_root = false;                        // put of a tree: every owner 0:0
  bool tar = false;                             // put: SRC (or standard input) is a tar archive of a tree
  std::uint64_t dirty_limit = 64u << 20, writeback_chunk = 16u << 20;
};

int cmd_put(const Common& c, const WriteArgs& a);
int cmd_mkdir(const Common& c, const WriteArgs& a);
int cmd_rm(const Common& c, const WriteArgs& a);

}  // namespace extwb
