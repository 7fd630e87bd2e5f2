// extwb: read and write files in ext2/3/4 images and devices without
// mounting them. This file binds the subcommands' options; the work is in
// ext/ (fs.hpp, inspect.hpp, ops.hpp), the output in extwb_read.cpp and
// extwb_write.cpp.
#include "cmd/extwb.hpp"

#include <CLI/CLI.hpp>

namespace {

using namespace extwb;

void add_common(CLI::App* sub, Common& c, bool json_flag) {
  sub->add_option("TARGET", c.target, "image file or block device holding the filesystem")->required();
  fsio::cli::add_size_option(*sub, "--offset", &c.offset, "where the filesystem starts, in bytes (1MiB, 1048576)");
  if (json_flag) sub->add_flag("--json", c.json, "one JSON document on stdout");
  sub->add_flag("--buffered", c.buffered, "go through the page cache instead of O_DIRECT");
}

void add_writing(CLI::App* sub, Common& c) {
  sub->add_flag("--dry-run", c.dry_run, "check and report, write nothing");
  sub->add_flag("--stats", c.stats, "print I/O statistics on standard error");
  sub->add_flag("-q,--quiet", c.quiet, "print nothing but errors");
}

std::vector<CLI::Option*> add_owner(CLI::App* sub, WriteArgs& a) {
  sub->add_option("--mode", a.mode, "permission bits, octal (put: 0644, mkdir: 0755)");
  return {fsio::cli::add_u32_option(*sub, "--uid", &a.uid, "owner (default 0)"),
          fsio::cli::add_u32_option(*sub, "--gid", &a.gid, "group (default 0)")};
}

// put of a tree: the source's owners mapped, or all 0:0.
void add_tree_owners(CLI::App* put, WriteArgs& a) {
  for (auto [name, out, what] : {std::tuple{"--uid-map", &a.uid_maps, "uids"}, {"--gid-map", &a.gid_maps, "gids"}})
    put->add_option(name, *out,
                    std::string("a tree's owners from the source: its ") + what + " FROM.. become TO.. (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false)
        ->type_name("FROM:TO:COUNT");
  put->add_flag("--all-root", a.all_root, "a tree's every file owned by 0:0");
  put->add_flag("--tar", a.tar, "SRC (or standard input) is a tar archive whose tree is copied into DEST");
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Read and write files in ext2/3/4 images and devices without mounting them."};
  app.require_subcommand(1);
  Common c;
  WriteArgs w;
  std::string path = "/";
  bool long_format = false;

  auto* ls = app.add_subcommand("ls", "list a directory");
  add_common(ls, c, true);
  ls->add_option("PATH", path, "directory (default /)");
  ls->add_flag("-l", long_format, "mode, links, owner, size and mtime");

  auto* get = app.add_subcommand("get", "copy a file to standard output");
  add_common(get, c, false);
  get->add_option("PATH", path, "file to read")->required();

  auto* stat = app.add_subcommand("stat", "show an inode and its extents");
  add_common(stat, c, true);
  stat->add_option("PATH", path, "file or directory")->required();

  auto* df = app.add_subcommand("df", "show sizes, free space and features");
  add_common(df, c, true);

  auto* put = app.add_subcommand("put", "write a file from SRC or standard input");
  add_common(put, c, true);
  add_writing(put, c);
  const auto put_owner = add_owner(put, w);
  add_tree_owners(put, w);
  put->add_option("DEST", w.dest, "path of the file in the filesystem")->required();
  put->add_option("SRC", w.source, "file to copy, or - for standard input (the default)");
  put->add_flag("-p,--parents", w.parents, "create missing parent directories");
  put->add_flag("-f,--force", w.force, "replace an existing file");
  put->add_flag("--sparse", w.sparse, "leave all-zero blocks as holes");
  put->add_option("--mtime", w.mtime, "modification time, seconds since the epoch");
  fsio::cli::add_size_option(*put, "--dirty-limit", &w.dirty_limit, "data buffered before writeback (default 64M)");
  fsio::cli::add_size_option(*put, "--writeback-chunk", &w.writeback_chunk,
                             "data mapped and submitted per writeback pass (default 16M)");

  auto* mkdir = app.add_subcommand("mkdir", "make a directory");
  add_common(mkdir, c, true);
  add_writing(mkdir, c);
  add_owner(mkdir, w);
  mkdir->add_option("PATH", w.dest, "directory to make")->required();
  mkdir->add_flag("-p,--parents", w.parents, "make missing parents; an existing directory is not an error");

  auto* rm = app.add_subcommand("rm", "remove a file, symbolic link or empty directory");
  add_common(rm, c, true);
  add_writing(rm, c);
  rm->add_option("PATH", w.dest, "what to remove")->required();

  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc;
  if (ls->parsed()) return cmd_ls(c, path, long_format);
  if (get->parsed()) return cmd_get(c, path);
  if (stat->parsed()) return cmd_stat(c, path);
  if (df->parsed()) return cmd_df(c);
  w.owner_given = put_owner[0]->count() > 0 || put_owner[1]->count() > 0;
  if (put->parsed()) return cmd_put(c, w);
  if (mkdir->parsed()) return cmd_mkdir(c, w);
  if (rm->parsed()) return cmd_rm(c, w);
  return fsio::cli::exit_failure;
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
