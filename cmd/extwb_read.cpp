// extwb ls, get, stat, df: reading, formatted from ext/inspect.hpp's structs.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cmd/extwb.hpp"
#include "ext/inspect.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/pipe.hpp"
#include "libfsio/size.hpp"

namespace extwb {

using fsio::cli::exit_failure;
using fsio::cli::exit_ok;
using nlohmann::json;

fsio::Result<std::unique_ptr<ext::Filesystem>> open_fs(const Common& c) {
  ext::OpenOptions o;
  o.offset = c.offset;
  o.direct = !c.buffered;
  return ext::Filesystem::open(c.target, o);
}

fsio::Result<std::unique_ptr<ext::Filesystem>> open_fs_to_write(const Common& c) {
  ext::OpenOptions o;
  o.offset = c.offset;
  o.write = !c.dry_run;
  o.check_write = c.dry_run;
  o.direct = !c.buffered;
  return ext::Filesystem::open(c.target, o);
}

namespace {

std::string time_string(const ext::Timestamp& t) {
  std::time_t s = std::time_t(t.sec);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
  return b;
}

json time_json(const ext::Timestamp& t) { return {{"sec", t.sec}, {"nsec", t.nsec}}; }

json inode_json(const ext::InodeInfo& i) {
  json j = {{"inode", i.ino},
            {"type", i.type},
            {"mode", i.mode & 07777},
            {"uid", i.uid},
            {"gid", i.gid},
            {"links", i.links},
            {"size", i.size},
            {"blocks_512", i.blocks_512},
            {"flags", i.flags},
            {"generation", i.generation},
            {"atime", time_json(i.atime)},
            {"ctime", time_json(i.ctime)},
            {"mtime", time_json(i.mtime)}};
  if (i.has_crtime) j["crtime"] = time_json(i.crtime);
  if (i.type == "symlink") j["target"] = i.symlink_target;
  return j;
}

}  // namespace

int cmd_ls(const Common& c, const std::string& path, bool long_format) {
  auto fs = open_fs(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  auto list = ext::list_dir(**fs, path, long_format || c.json);
  if (!list) return fsio::cli::report(kTool, list.error());
  if (c.json) {
    json arr = json::array();
    for (const auto& e : *list) {
      json j = inode_json(e.inode);
      j["name"] = e.name;
      arr.push_back(j);
    }
    std::cout << json{{"path", path}, {"entries", arr}}.dump(2) << '\n';
    return exit_ok;
  }
  for (const auto& e : *list) {
    if (!long_format) {
      std::printf("%s\n", e.name.c_str());
      continue;
    }
    const auto& i = e.inode;
    std::printf("%s %3u %5u %5u %12" PRIu64 " %s %s%s%s\n", ext::mode_string(i.mode).c_str(), i.links, i.uid, i.gid,
                i.size, time_string(i.mtime).c_str(), e.name.c_str(), i.type == "symlink" ? " -> " : "",
                i.symlink_target.c_str());
  }
  return exit_ok;
}

int cmd_get(const Common& c, const std::string& path) {
  // Standard output, when it is a file or a device, must not share the image's storage.
  if (auto apart = fsio::check_apart({"", "standard output", STDOUT_FILENO}, {{"the image", c.target, -1, c.offset}});
      !apart)
    return fsio::cli::report(kTool, apart.error());
  auto fs = open_fs(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  auto ino = (*fs)->lookup(path);
  if (!ino) return fsio::cli::report(kTool, ino.error());
  auto inode = (*fs)->read_inode(*ino);
  if (!inode) return fsio::cli::report(kTool, inode.error());
  if (!inode->is_reg())
    return fsio::cli::report(kTool, fsio::make_error(fsio::Errc::invalid_argument, path + ": not a regular file"));
  const fsio::FdKind out_kind = fsio::fd_kind(STDOUT_FILENO);
  std::uint64_t written = 0;
  auto st = (*fs)->read_file(*inode, [&](std::span<const std::byte> d) {
    auto w = fsio::write_all(STDOUT_FILENO, out_kind, d, "standard output", written);
    written += d.size();
    return w;
  });
  if (!st) return fsio::cli::report(kTool, st.error());
  return exit_ok;
}

int cmd_stat(const Common& c, const std::string& path) {
  auto fs = open_fs(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  auto s = ext::stat_path(**fs, path);
  if (!s) return fsio::cli::report(kTool, s.error());
  const auto& i = s->inode;
  if (c.json) {
    json j = inode_json(i);
    j["path"] = path;
    j["extent_mapped"] = s->extent_mapped;
    j["tree_blocks"] = s->tree_blocks;
    json ex = json::array();
    for (const auto& e : s->extents)
      ex.push_back({{"logical", e.logical}, {"length", e.len}, {"physical", e.physical}, {"unwritten", e.unwritten}});
    j["extents"] = ex;
    std::cout << j.dump(2) << '\n';
    return exit_ok;
  }
  std::printf("  path: %s\n inode: %u  type: %s  mode: %s (%04o)\n   uid: %u  gid: %u  links: %u\n  size: %" PRIu64
              "  blocks (512 B): %" PRIu64 "  flags: 0x%x  generation: %u\n",
              path.c_str(), i.ino, i.type.c_str(), ext::mode_string(i.mode).c_str(), i.mode & 07777, i.uid, i.gid,
              i.links, i.size, i.blocks_512, i.flags, i.generation);
  std::printf(" atime: %s.%09u\n mtime: %s.%09u\n ctime: %s.%09u\n", time_string(i.atime).c_str(), i.atime.nsec,
              time_string(i.mtime).c_str(), i.mtime.nsec, time_string(i.ctime).c_str(), i.ctime.nsec);
  if (i.has_crtime) std::printf("crtime: %s.%09u\n", time_string(i.crtime).c_str(), i.crtime.nsec);
  if (i.type == "symlink") std::printf("target: %s\n", i.symlink_target.c_str());
  std::printf("%s: %zu, tree blocks: %u\n", s->extent_mapped ? "extents" : "block runs", s->extents.size(),
              s->tree_blocks);
  for (const auto& e : s->extents)
    std::printf("  %10u..%-10u -> %" PRIu64 "..%" PRIu64 "%s\n", e.logical, e.logical + e.len - 1, e.physical,
                e.physical + e.len - 1, e.unwritten ? " (unwritten)" : "");
  return exit_ok;
}

int cmd_df(const Common& c) {
  auto fs = open_fs(c);
  if (!fs) return fsio::cli::report(kTool, fs.error());
  const auto d = ext::describe_fs(**fs);
  if (c.json) {
    json j = {{"block_size", d.block_size},
              {"blocks", d.blocks_count},
              {"free_blocks", d.free_blocks},
              {"reserved_blocks", d.reserved_blocks},
              {"inodes", d.inodes_count},
              {"free_inodes", d.free_inodes},
              {"groups", d.group_count},
              {"inode_size", d.inode_size},
              {"uuid", d.uuid},
              {"label", d.label},
              {"features", d.features},
              {"state", d.state},
              {"writable", d.writable}};
    if (!d.writable) j["write_refusal"] = d.write_refusal;
    std::cout << j.dump(2) << '\n';
    return exit_ok;
  }
  std::printf("%s: %s blocks of %u bytes (%s), %s free; %u inodes, %u free\n", c.target.c_str(),
              std::to_string(d.blocks_count).c_str(), d.block_size,
              fsio::format_size(d.blocks_count * d.block_size).c_str(),
              fsio::format_size(d.free_blocks * d.block_size).c_str(), d.inodes_count, d.free_inodes);
  std::printf("uuid %s%s%s, %u groups, %u-byte inodes, %s\nfeatures: %s\n", d.uuid.c_str(),
              d.label.empty() ? "" : ", label ", d.label.c_str(), d.group_count, d.inode_size, d.state.c_str(),
              d.features.c_str());
  if (!d.writable) std::printf("writing: refused: %s\n", d.write_refusal.c_str());
  return exit_ok;
}

}  // namespace extwb
