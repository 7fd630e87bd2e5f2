// mkdir: directories made in their parents, and a path's parent resolved
// (missing directories made on the way with -p), for put too.
#include "ext/dir_write.hpp"
#include "ext/extent_build.hpp"
#include "ext/op_steps.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint16_t kLinkMax = 65000;  // EXT4_LINK_MAX

}  // namespace

std::pair<std::string, std::string> split_parent(const std::string& path) {
  const auto parts = split_path(path);
  std::string parent;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) parent += "/" + std::string(parts[i]);
  return {parent.empty() ? "/" : parent, parts.empty() ? std::string() : std::string(parts.back())};
}

fsio::Result<Inode> read_dir(Filesystem& fs, std::uint32_t ino, const std::string& path) {
  Inode d = FSIO_TRY(fs.read_inode(ino));
  if (!d.is_dir()) return make_error(Errc::invalid_argument, "ext: " + path + " is not a directory");
  return d;
}

fsio::Result<std::uint32_t> create_dir(Transaction& tx, Inode& parent, const std::string& name, const Owner& owner) {
  Filesystem& fs = tx.fs();
  const Layout& l = fs.layout();
  FSIO_TRY(check_name(name));
  if (parent.fields().i_links_count >= kLinkMax - 1 && !l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_DIR_NLINK))
    return fsio::errno_error(EMLINK,
                             "ext: directory inode " + std::to_string(parent.ino) + " has too many subdirectories");
  const std::uint32_t ino = FSIO_TRY(tx.alloc().alloc_inode(l.group_of_inode(parent.ino), true));
  Inode dir = new_inode(l, ino, std::uint16_t(S_IFDIR_ | (owner.mode & 07777)), owner);
  const BlockRun run = FSIO_TRY(tx.alloc().alloc_blocks(l.group_first_block(l.group_of_inode(ino)), 1));
  init_dir_block(fs.meta_new(run.start, MetaKind::fresh), dir, parent.ino, l);
  FSIO_TRY(build_extent_tree(fs, tx.alloc(), dir, {Extent{0, 1, run.start, false}}, run.start));
  FSIO_TRY(set_inode_blocks(dir, 1, l));
  set_size(dir, l.block_size);
  set_links(dir, 2);
  set_inode_times(dir, tx.now(), nullptr, true);
  FSIO_TRY(fs.write_inode(dir));
  FSIO_TRY(add_entry(fs, tx.alloc(), parent, name, ino, file_type_for(S_IFDIR_, l)));
  const std::uint16_t links = parent.fields().i_links_count;
  // dir_nlink: past EXT4_LINK_MAX a directory's count stays at 1 ("many").
  set_links(parent, links >= kLinkMax - 1 || links == 1 ? 1 : std::uint16_t(links + 1));
  set_inode_times(parent, tx.now());
  FSIO_TRY(fs.write_inode(parent, MetaKind::directory));
  return ino;
}

fsio::Result<std::pair<Inode, std::string>> resolve_parent(Transaction& tx, Filesystem& fs, const std::string& path,
                                                           bool parents, const Owner& dir_owner,
                                                           std::vector<std::string>& created) {
  const auto parts = split_path(path);
  if (parts.empty()) return make_error(Errc::invalid_argument, "ext: '" + path + "' names no file");
  Inode dir = FSIO_TRY(read_dir(fs, EXT2_ROOT_INO, "/"));
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    walked += "/" + name;
    const std::uint32_t next = FSIO_TRY(fs.find_entry(dir, name));
    if (next != 0) {
      dir = FSIO_TRY(read_dir(fs, next, walked));
      continue;
    }
    if (!parents) return make_error(Errc::not_found, "ext: " + walked + ": no such directory (-p creates it)");
    created.push_back(walked);
    const std::uint32_t ino = FSIO_TRY(create_dir(tx, dir, name, dir_owner));
    dir = FSIO_TRY(fs.read_inode(ino));
  }
  return std::pair<Inode, std::string>(std::move(dir), std::string(parts.back()));
}

fsio::Result<MkdirReport> make_dirs(Filesystem& fs, const std::string& path, bool parents, const Owner& owner,
                                    const Timestamp& now, bool dry_run) {
  MkdirReport rep;
  FSIO_TRY(check_op_times(fs.layout(), now, std::nullopt));
  if (dry_run) FSIO_TRY(fs.write_gate());
  Transaction tx(fs, now);
  // A dry run makes the directories in the cache only (the device is open
  // read-only), so it meets the refusals of the allocation and the commit.
  auto finish = [&]() -> fsio::Status { return dry_run ? tx.prepare() : tx.commit(); };
  auto [parent, name] = FSIO_TRY(resolve_parent(tx, fs, path, parents, owner, rep.created));
  const std::uint32_t existing = FSIO_TRY(fs.find_entry(parent, name));
  if (existing != 0) {
    const Inode e = FSIO_TRY(fs.read_inode(existing));
    if (parents && e.is_dir()) {
      if (!rep.created.empty()) FSIO_TRY(finish());
      return rep;
    }
    return make_error(Errc::busy, "ext: " + path + " exists");
  }
  FSIO_TRY(check_name(name));
  rep.created.push_back(split_parent(path).first == "/" ? "/" + name : split_parent(path).first + "/" + name);
  FSIO_TRY(create_dir(tx, parent, name, owner));
  FSIO_TRY(finish());
  return rep;
}

}  // namespace ext
