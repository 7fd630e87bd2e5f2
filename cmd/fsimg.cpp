// fsimg: save the used blocks of a FAT or ext2/3/4 filesystem as a zstd
// stream, and restore it onto a device. The work is in img/ (FORMAT.md has
// the stream); this file binds the options of the four commands.
#include "cmd/fsimg.hpp"

#include <CLI/CLI.hpp>
#include <csignal>

#include "cmd/common.hpp"

namespace {

// --json and -q, on every command.
void add_output_flags(CLI::App* c, fsimg::Args& a) {
  c->add_flag("--json", a.json, "one JSON document on stdout");
  c->add_flag("-q,--quiet", a.quiet, "print nothing but errors");
}

void add_threads(CLI::App* c, fsimg::Args& a, const char* what) {
  c->add_option("-T,--threads", a.threads, std::string(what) + " threads (0: one per CPU, the default)")
      ->check(CLI::Range(0u, 256u));
}

void add_offset(CLI::App* c, fsimg::Args& a, const char* what) {
  fsio::cli::add_size_option(*c, "--offset", &a.offset, what);
}

CLI::App* add_save(CLI::App& app, fsimg::Args& a) {
  auto* save = app.add_subcommand("save", "save a filesystem's used blocks to OUT (- for stdout)");
  save->add_option("SOURCE", a.source, "block device or image file")->required();
  save->add_option("OUT", a.out, "image file to create, or - for stdout")->required();
  save->add_option("--fs", a.fs, "auto (libblkid), fat, ext4 or raw")
      ->check(CLI::IsMember({"auto", "fat", "vfat", "ext4", "ext2", "ext3", "ext", "raw"}));
  save->add_option("-l,--level", a.level, "zstd level (-7..22, default 3)")->check(CLI::Range(-7, 22));
  add_threads(save, a, "compression");
  fsio::cli::add_size_option(*save, "--frame-size", &a.frame_bytes,
                             "stored bytes per zstd frame, a multiple of the block size up to 64MiB (default 16MiB)");
  add_offset(save, a, "where the filesystem starts in SOURCE (bytes, or a size: 1MiB)");
  save->add_flag("-f,--force", a.force, "replace OUT if it is an existing file");
  save->add_flag("--dry-run", a.dry_run, "plan only: print what would be saved");
  add_output_flags(save, a);
  return save;
}

CLI::App* add_restore(CLI::App& app, fsimg::Args& a) {
  auto* restore = app.add_subcommand("restore", "write an image onto one or more devices or files at once");
  restore->add_option("IN", a.in, "fsimg stream, raw image (.img, .img.zst, .img.xz), or - for stdin")->required();
  restore->add_option("TARGET", a.targets, "block devices or image files, written at once")->required();
  restore->add_flag("--verify", a.verify, "read every written range back from each target (O_DIRECT) and compare");
  restore->add_option("--bmap", a.bmap, "bmaptool's block map of a raw image: write only its ranges, each checked");
  add_offset(restore, a, "where the filesystem starts in TARGET");
  restore->add_flag("-f,--force", a.force, "overwrite a filesystem or partition table (never a mounted one)");
  restore->add_flag("--keep-unused", a.keep_unused, "leave the blocks the image does not hold as they are");
  restore->add_flag("-C,--create", a.create, "create TARGET as a file of the filesystem's size");
  restore->add_flag("--dry-run", a.dry_run, "check the target and the whole image, write nothing");
  add_threads(restore, a, "decompression");
  add_output_flags(restore, a);
  return restore;
}

CLI::App* add_verify(CLI::App& app, fsimg::Args& a) {
  auto* verify = app.add_subcommand("verify", "compare every block an image holds with TARGET");
  verify->add_option("IN", a.in, "image file, or - for stdin")->required();
  verify->add_option("TARGET", a.target, "block device or image file")->required();
  add_offset(verify, a, "where the filesystem starts in TARGET");
  verify->add_flag("--unused", a.unused, "also check that the blocks the image does not hold read as zeros");
  add_threads(verify, a, "decompression");
  add_output_flags(verify, a);
  return verify;
}

CLI::App* add_info(CLI::App& app, fsimg::Args& a) {
  auto* info = app.add_subcommand("info", "describe an image: header, map, frames, ratio");
  info->add_option("IN", a.in, "image file, or - for stdin")->required();
  add_output_flags(info, a);
  return info;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  // A closed pipe is an error to report (EPIPE), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  fsimg::Args a;
  CLI::App app{"Save the used blocks of a FAT or ext4 filesystem as a zstd stream, and restore it onto a device."};
  app.set_help_flag("-h,--help", "print this help and exit");
  app.require_subcommand(1);
  auto* save = add_save(app, a);
  auto* restore = add_restore(app, a);
  auto* verify = add_verify(app, a);
  add_info(app, a);

  if (int rc = fsio::cli::parse(app, argc, argv); rc >= 0) return rc;
  if (save->parsed()) return fsimg::run_save(a);
  if (restore->parsed()) return fsimg::run_restore(a);
  if (verify->parsed()) return fsimg::run_verify(a);
  return fsimg::run_info(a);
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
