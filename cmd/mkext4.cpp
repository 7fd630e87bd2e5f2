// mkext4: make an ext4 filesystem byte for byte as mke2fs -t ext4 makes it,
// in a few merged writes. Options are mke2fs's (mkext4_args.hpp); the work
// is ext::plan_mkfs and ext::write_mkfs, and every refusal (options, the
// profile, a target in use or read-only, an existing filesystem without
// -F) comes before the first write.
#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cmd/common.hpp"
#include "cmd/mkext4_args.hpp"
#include "cmd/mkext4_report.hpp"
#include "cmd/mkext4_size.hpp"
#include "cmd/mkext4_tree.hpp"
#include "ext/mkfs.hpp"
#include "libfsio/created_file.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/signatures.hpp"

namespace {

using namespace fsio::cli;
using fsio::Errc;
using fsio::Result;

int fail(const fsio::Error& e) { return report("mkext4", e); }

std::array<std::uint8_t, 16> random16() {
  std::array<std::uint8_t, 16> u{};
  for (std::size_t got = 0; got < u.size();) {
    const ssize_t n = ::getrandom(u.data() + got, u.size() - got, 0);
    if (n > 0) got += std::size_t(n);
    else if (errno != EINTR) std::abort();  // the kernel always has random bytes for us
  }
  return u;
}

// $MKE2FS_CONFIG, else /etc/mke2fs.conf, else the built-in copy (mke2fs's
// order: a missing file falls through, an unreadable or malformed one is an error).
Result<ext::Mke2fsConf> load_conf() {
  const char* env = std::getenv("MKE2FS_CONFIG");
  const std::string path = env && *env ? env : "/etc/mke2fs.conf";
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return ext::Mke2fsConf::builtin();
    return fsio::errno_error(path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ext::Mke2fsConf::parse(text.str(), path);
}

// What mke2fs learns about the target before writing, through a read-only
// open that refuses what a write would refuse (in use, read-only).
Result<ext::MkfsTarget> inspect(const Mkext4Args& a) {
  ext::MkfsTarget t;
  t.name = a.target;
  struct stat st {};
  const int r = a.create ? ::lstat(a.target.c_str(), &st) : ::stat(a.target.c_str(), &st);
  if (r != 0 && errno != ENOENT) return fsio::errno_error(a.target);
  t.exists = r == 0;
  if (a.create && t.exists)
    return fsio::make_error(Errc::busy, "exists; -C makes a new file and never replaces one").at(a.target);
  if (!t.exists) return t;
  fsio::OpenOptions o;
  o.check_write = true;
  auto dev = FSIO_TRY(fsio::Device::open(a.target, o));
  t.bytes = dev.size();
  t.is_block_device = dev.is_block_device();
  if (t.is_block_device) {
    t.logical_sector = dev.topology().logical_sector;
    t.physical_sector = dev.topology().physical_sector;
    t.min_io = dev.topology().minimum_io;
    t.opt_io = dev.topology().optimal_io;
  }
  return t;
}

int make(const Mkext4Args& a, ext::MkfsPlan& plan, const ext::MkfsTarget& t, Mkext4Tree* tree) {
  fsio::InterruptGuard interrupt;
  fsio::OpenOptions o;
  o.write = true;
  o.offset = plan.params.offset;
  if (!t.exists) o.create_new = true;
  if (!t.is_block_device) o.create_size = plan.params.offset + plan.fs_bytes();  // never shrinks a file
  auto opened = fsio::Device::open(a.target, o);
  if (!opened) return fail(opened.error());
  auto dev = std::make_unique<fsio::Device>(std::move(*opened));
  // A file this run created is removed again on any failure, Ctrl-C too.
  fsio::CreatedFile made(*dev, "mkext4");
  auto failed = [&](fsio::Error e) { return fail(made.fail(std::move(e))); };
  // Blocks smaller than the direct-I/O unit (1 KiB blocks in an image on a
  // 4 KiB-sector disk), or an offset off it, go through the page cache.
  const std::uint32_t unit = dev->topology().dio_offset_align;
  if (dev->direct() && (unit > plan.layout.l.block_size || plan.params.offset % unit))
    if (auto st = dev->use_buffered("the " + std::to_string(plan.layout.l.block_size) + "-byte blocks at offset " +
                                    std::to_string(plan.params.offset) + " are not aligned to the device's " +
                                    std::to_string(unit) + "-byte direct-I/O unit");
        !st)
      return failed(st.error());
  auto created = fsio::IoQueue::create(*dev);
  if (!created) return failed(created.error());
  auto queue = std::make_unique<fsio::IoQueue>(std::move(*created));
  const std::uint64_t work = ext::mkfs_work_bytes(plan) + (tree ? tree->work_bytes() : 0);
  fsio::Progress progress("mkext4", work, !a.quiet && !a.json && fsio::stderr_is_terminal());
  // With -d the primary superblock is held back and written after the tree.
  std::vector<std::byte> primary;
  auto rep = ext::write_mkfs(*queue, plan, &progress, tree ? &primary : nullptr);
  if (!rep) return failed(rep.error());
  fsio::IoStats stats = queue->stats();
  const std::string engine = queue->engine().name();
  const bool direct = dev->direct();
  if (tree) {
    auto filled = tree->fill(std::move(dev), std::move(queue), a.target, primary, &progress);
    if (!filled) return failed(filled.error());
    stats = *filled;
  }
  made.keep();
  print_result(a, *rep, stats, engine, direct);
  if (tree && !a.quiet && !a.json) std::printf("%s\n", tree->summary(false).c_str());
  if (a.json) {
    auto out = plan_json(a, plan, {});
    add_result_json(out, *rep, stats);
    if (tree) out["tree"] = tree->json(true);
    std::cout << out.dump(2) << '\n';
  }
  return exit_ok;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Mkext4Args a;
  if (int rc = parse_mkext4(argc, argv, a); rc >= 0) return rc;
  auto epoch = source_date_epoch();
  if (!epoch) return fail(epoch.error());
  a.req.time = *epoch;
  auto conf = load_conf();
  if (!conf) return fail(conf.error());
  auto target = inspect(a);
  if (!target) return fail(target.error());
  // -C -d with SIZE auto: the tree listed first, the size chosen for it.
  std::unique_ptr<Mkext4Tree> tree;
  if (a.auto_size) {
    auto opened = Mkext4Tree::open(*a.root);
    if (!opened) return fail(opened.error());
    tree = std::move(*opened);
    Slack slack;
    if (a.slack) {
      auto parsed = parse_slack(*a.slack);
      if (!parsed) return fail(parsed.error());
      slack = *parsed;
    }
    auto chosen = choose_size(tree->tree(), a.req, *target, *conf, slack);
    if (!chosen) return fail(chosen.error());
    a.req.size = std::to_string(chosen->mib) + "M";
    tree->set_chosen(chosen->mib);
  }
  auto plan = ext::plan_mkfs(a.req, *target, *conf, random16);
  if (!plan) return fail(plan.error());
  // What the target holds matters to a refusal (no -F) or a dry run's
  // report; a format with -F overwrites it unread, as mke2fs -F does.
  std::vector<fsio::Signature> sigs;
  if (target->exists && (!a.req.force || a.dry_run)) {
    auto found = fsio::check_overwrite(a.target, plan->params.offset, plan->fs_bytes(), a.req.force || a.dry_run,
                                       "making an ext4 filesystem");
    if (!found) return fail(found.error());
    sigs = *found;
  }
  // -d: the tree listed, checked and counted against the plan, and kept
  // apart from the target, before the first write.
  if (a.root) {
    if (!tree) {
      auto opened = Mkext4Tree::open(*a.root);
      if (!opened) return fail(opened.error());
      tree = std::move(*opened);
    }
    if (auto st = tree->check(*plan, *epoch, a.owners); !st) return fail(st.error());
    if (auto st = tree->check_apart(a.target); !st) return fail(st.error());
  }
  print_plan(a, *plan, a.dry_run);
  if (a.dry_run) {
    if (a.json) {
      auto out = plan_json(a, *plan, sigs);
      if (tree) out["tree"] = tree->json(false);
      std::cout << out.dump(2) << '\n';
    }
    for (const auto& s : sigs)
      if (!a.json && !a.quiet) std::printf("would overwrite %s\n", fsio::describe(s).c_str());
    if (tree && !a.json && !a.quiet) std::printf("%s\n", tree->summary(true).c_str());
    return exit_ok;
  }
  return make(a, *plan, *target, tree.get());
}

int main(int argc, char** argv) { return fsio::cli::finish(tool_main(argc, argv)); }
