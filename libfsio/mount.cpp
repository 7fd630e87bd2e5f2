// In-use detection (see mount.hpp): every mounted filesystem and every swap
// area is resolved down its stack, and the target's extents are compared
// with theirs; then every other block device that shares storage with the
// target is asked whether someone holds it exclusively.
//
// A mount is found by its device number in /proc/self/mountinfo (field 3,
// "major:minor"). Filesystems that span devices (btrfs) show an anonymous
// number there; for those the mount source (after " - fstype ") is used
// when it names a block device or, for file-backed mounts, a regular file.
#include "libfsio/mount.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace fsio {
namespace {

// What is using some storage: a mount or a swap area, and its extents.
struct User {
  std::string where;
  std::string device;
  dev_t rdev = 0;  // the mounted or swapped block device; 0 for a file
  std::vector<StorageExtent> extents;
  bool read_only = false;
};

// mountinfo and /proc/swaps escape space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto octal = [&](std::size_t k) { return s[k] >= '0' && s[k] <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

namespace fs = std::filesystem;

std::string sysfs_of(dev_t dev) {
  return "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

bool is_block_dev(dev_t dev) {
  std::error_code ec;
  return fs::exists(sysfs_of(dev), ec);
}

// A user of `name` (a mount source or swap name) that is not known by a
// block device number: a block device or regular file by path.
bool add_by_path(const std::string& name, const std::string& where, std::vector<User>& users) {
  struct stat st {};
  if (name.empty() || name[0] != '/' || ::stat(name.c_str(), &st) != 0) return false;
  if (S_ISBLK(st.st_mode)) {
    users.push_back({where, block_device_name(st.st_rdev), st.st_rdev, resolve_block_storage(st.st_rdev)});
  } else if (S_ISREG(st.st_mode)) {
    users.push_back({where, name, 0, {{true, st.st_dev, st.st_ino, 0, kToEnd, name, {}}}});
  } else {
    return false;
  }
  return true;
}

// Format (proc(5)): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw"
Status add_mounts(std::vector<User>& users) {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return errno_error("/proc/self/mountinfo: open");
  std::set<dev_t> seen;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, majmin, root, mount_point, word, fstype, source, super_options;
    if (!(fields >> id >> parent >> majmin >> root >> mount_point)) continue;
    while (fields >> word && word != "-") {
    }
    fields >> fstype >> source >> super_options;
    // The filesystem's own options (after the source), not this mount's:
    // a read-only bind mount of a read-write filesystem still changes.
    const bool read_only = super_options == "ro" || super_options.starts_with("ro,");
    unsigned maj = 0, min = 0;
    if (std::sscanf(majmin.c_str(), "%u:%u", &maj, &min) != 2) continue;
    const dev_t dev = makedev(maj, min);
    if (!seen.insert(dev).second) continue;  // a bind mount of one already listed
    const std::string where = unescape(mount_point);
    if (is_block_dev(dev)) users.push_back({where, block_device_name(dev), dev, resolve_block_storage(dev)});
    else if (!add_by_path(unescape(source), where, users)) continue;
    users.back().read_only = read_only;
  }
  return {};
}

// Active swap: /proc/swaps, "Filename Type Size Used Priority".
void add_swaps(std::vector<User>& users) {
  std::ifstream in("/proc/swaps");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    if (fields >> name) add_by_path(unescape(name), std::string(kSwap), users);
  }
}

// ---- devices held open exclusively ----------------------------------------
//
// A program that opened a block device with O_EXCL (another fsio tool, a
// partitioner, a mount in a namespace we cannot see) appears nowhere in
// /proc; the kernel's claim is the only trace. Asking for the same claim
// read-only, and letting go of it at once, tells whether it is held
// (EBUSY). The claims the kernel makes on its own would make such a
// question say "held" where nobody else is, so they are known and left out:
//   - a device that dm or md (or bcache, ...) built on is claimed by them
//     and lists them in holders/; they are asked in its place, since they
//     share its storage too;
//   - a disk is marked claimed while any of its partitions is claimed, so
//     a busy disk is held itself only when none of its partitions can be
//     claimed (a disk held itself lets none of them be claimed);
//   - under the target's own partition or dm/md link lies what that link
//     claims (or, for a partition, what the target's own O_EXCL open
//     already asks about).
bool dir_empty(const fs::path& dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

// What O_EXCL says about dev: 1 held, 0 free, -1 unknown (no node under
// /dev with that number, or another error).
int held_state(dev_t dev) {
  const std::string node = block_device_name(dev);
  struct stat st {};
  if (node.rfind("/dev/", 0) != 0 || ::stat(node.c_str(), &st) != 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev)
    return -1;
  const int fd = ::open(node.c_str(), O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno == EBUSY ? 1 : -1;
}

bool read_devno(const fs::path& file, dev_t& out) {
  std::ifstream in(file);
  unsigned maj = 0, min = 0;
  char colon = 0;
  if (!(in >> maj >> colon >> min) || colon != ':') return false;
  out = makedev(maj, min);
  return true;
}

// Held by someone other than the kernel's own claims (see above). A busy
// disk is not held itself when one of its partitions is claimed by what we
// know of (`users`: mounted or swap; or with holders/), or can be claimed
// (a disk held itself lets no partition be claimed); when every partition
// is busy for reasons unknown, it counts as held.
bool held_by_another(dev_t dev, const std::set<dev_t>& users) {
  const fs::path dir = sysfs_of(dev);
  if (!dir_empty(dir / "holders")) return false;
  if (held_state(dev) != 1) return false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    dev_t part = 0;
    if (!fs::exists(entry.path() / "partition", ec) || !read_devno(entry.path() / "dev", part)) continue;
    if (users.count(part) || !dir_empty(entry.path() / "holders") || held_state(part) == 0) return false;
  }
  return true;
}

// The devices the target's own stack claims (or asks about) below itself.
std::set<dev_t> under_own_links(const std::vector<StorageExtent>& target) {
  std::set<dev_t> out;
  for (const StorageExtent& e : target)
    for (std::size_t i = 0; i < e.links.size(); ++i) {
      if (e.links[i].kind == LinkKind::loop) continue;
      if (i + 1 < e.links.size()) out.insert(e.links[i + 1].dev);
      else if (!e.is_file) out.insert(e.dev);
    }
  return out;
}

std::vector<dev_t> block_devices() {
  std::vector<dev_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/class/block", ec)) {
    dev_t dev = 0;
    if (read_devno(entry.path() / "dev", dev)) out.push_back(dev);
  }
  return out;
}

// Every block device that shares storage with the target and is held by
// another opener, as users found in kHeld. `known`: the devices already
// found mounted or swapped on (not asked again). The target itself is not
// asked either: its own O_EXCL open does that.
void add_held(const std::vector<StorageExtent>& target, const struct stat& st, const std::set<dev_t>& known,
              std::vector<User>& users) {
  std::set<dev_t> skip = under_own_links(target);
  skip.insert(known.begin(), known.end());
  if (S_ISBLK(st.st_mode)) skip.insert(st.st_rdev);
  for (dev_t dev : block_devices()) {
    if (skip.count(dev)) continue;
    auto extents = resolve_block_storage(dev);
    const bool shares = std::any_of(extents.begin(), extents.end(), [&](const StorageExtent& theirs) {
      return std::any_of(target.begin(), target.end(),
                         [&](const StorageExtent& mine) { return shares_storage(mine, theirs); });
    });
    if (shares && held_by_another(dev, known))
      users.push_back({std::string(kHeld), block_device_name(dev), dev, std::move(extents)});
  }
}

}  // namespace

Result<std::vector<InUse>> find_uses(const std::string& path, std::uint64_t begin, std::uint64_t end) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error("stat").at(path);
  std::vector<InUse> found;
  const auto target = FSIO_TRY(resolve_storage(path, begin, end));
  if (target.empty()) return found;
  std::vector<User> users;
  add_swaps(users);
  FSIO_TRY(add_mounts(users));
  std::set<dev_t> known;
  for (const User& u : users)
    if (u.rdev) known.insert(u.rdev);
  add_held(target, st, known, users);
  for (const User& u : users) {
    auto use = [&]() -> std::optional<InUse> {
      for (const StorageExtent& mine : target) {
        for (const StorageExtent& theirs : u.extents) {
          if (!shares_storage(mine, theirs)) continue;
          const bool direct =
              S_ISBLK(st.st_mode) ? u.rdev == st.st_rdev : u.rdev == 0 && theirs.links.empty() && mine.links.empty();
          // A file target is itself the storage it shares: leave that unsaid.
          const std::string shared = mine.links.empty() && mine.is_file ? std::string() : theirs.name;
          return InUse{u.where, u.device, shared, direct, u.read_only};
        }
      }
      return std::nullopt;
    }();
    if (use) found.push_back(std::move(*use));
  }
  return found;
}

Result<std::optional<InUse>> find_use(const std::string& path, std::uint64_t begin, std::uint64_t end) {
  auto uses = FSIO_TRY(find_uses(path, begin, end));
  if (uses.empty()) return std::optional<InUse>{};
  return std::optional<InUse>{std::move(uses.front())};
}

Result<std::optional<std::string>> find_mount(const std::string& path) {
  auto use = FSIO_TRY(find_use(path));
  if (!use) return std::optional<std::string>{};
  return std::optional<std::string>{use->where};
}

std::string describe_use(const InUse& use) {
  if (use.where == kHeld) {
    std::string text = describe_use(use.where) + ": " + use.device + " is held open exclusively";
    if (use.shared.empty()) return text + " and is stacked on it";
    if (use.shared != use.device) text += " (both use " + use.shared + ")";
    return text;
  }
  std::string text = describe_use(use.where);
  if (use.direct) return text;
  text += " through " + use.device;
  if (use.shared.empty()) text += ", which is stacked on it";
  else if (use.shared != use.device) text += " (both use " + use.shared + ")";
  return text;
}

}  // namespace fsio
