// Mount detection. A filesystem is mounted from a block device, identified
// in /proc/self/mountinfo by its device number (field 3, "major:minor"). A
// device is in use by a mount if it, one of its partitions, or something
// stacked on it (holders: dm, md) is mounted. An image file is in use if a
// loop device backed by it is, where "backed by it" compares the backing
// file's st_dev/st_ino, so other spellings of the path (symlinks, relative
// paths, bind mounts) still match. A block device can be a loop device's
// backing file too, and a device or file can be active swap.
#include "libfsio/mount.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fsio {
namespace {

namespace fs = std::filesystem;
using MountTable = std::map<dev_t, std::string>;  // device -> first mount point

// mountinfo escapes space, tab, newline and backslash as \ooo octal.
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

// Format (proc(5)): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw"
Result<MountTable> read_mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return errno_error("/proc/self/mountinfo: open");
  MountTable table;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, majmin, root, mount_point;
    if (!(fields >> id >> parent >> majmin >> root >> mount_point)) continue;
    unsigned maj = 0, min = 0;
    if (std::sscanf(majmin.c_str(), "%u:%u", &maj, &min) != 2) continue;
    table.emplace(makedev(maj, min), unescape(mount_point));
  }
  return table;
}

std::optional<dev_t> read_dev_file(const fs::path& file) {
  std::ifstream in(file);
  unsigned maj = 0, min = 0;
  char colon = 0;
  if (!(in >> maj >> colon >> min) || colon != ':') return std::nullopt;
  return makedev(maj, min);
}

std::string sysfs_dir(dev_t dev) {
  return "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

// The mount point of dev, of one of its partitions, or of a device stacked
// on it. Depth-limited: stacks deeper than a few levels do not occur, and a
// bound keeps a sysfs loop from hanging us.
std::optional<std::string> mounted_block(dev_t dev, const MountTable& table, int depth = 0) {
  if (auto it = table.find(dev); it != table.end()) return it->second;
  if (depth >= 4) return std::nullopt;
  std::error_code ec;
  fs::path dir = sysfs_dir(dev);
  // Partitions are subdirectories of the disk's directory with a "partition" file.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!fs::exists(entry.path() / "partition", ec)) continue;
    if (auto part = read_dev_file(entry.path() / "dev"))
      if (auto mp = mounted_block(*part, table, depth + 1)) return mp;
  }
  for (const auto& entry : fs::directory_iterator(dir / "holders", ec)) {
    if (auto holder = read_dev_file(entry.path() / "dev"))
      if (auto mp = mounted_block(*holder, table, depth + 1)) return mp;
  }
  return std::nullopt;
}

// Is `st` the target: the same block device (by device number) or the same
// regular file (by st_dev/st_ino)?
bool same_target(const struct stat& st, const struct stat& target) {
  if (S_ISBLK(target.st_mode)) return S_ISBLK(st.st_mode) && st.st_rdev == target.st_rdev;
  return S_ISREG(st.st_mode) && st.st_dev == target.st_dev && st.st_ino == target.st_ino;
}

// The same for a path. A deleted backing file reads "path (deleted)" and
// fails to stat: it cannot be the target we were given, which exists.
bool same_target(const std::string& path, const struct stat& target) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && same_target(st, target);
}

// Mounted through a loop device backed by the target (an image file, or a
// block device under a loop device).
std::optional<std::string> mounted_through_loop(const struct stat& target, const MountTable& table) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/block", ec)) {
    if (entry.path().filename().string().rfind("loop", 0) != 0) continue;
    std::ifstream in(entry.path() / "loop" / "backing_file");
    std::string backing;
    if (!std::getline(in, backing) || backing.empty()) continue;  // unbound loop device
    if (!same_target(backing, target)) continue;
    if (auto loop = read_dev_file(entry.path() / "dev"))
      if (auto mp = mounted_block(*loop, table)) return mp;
  }
  return std::nullopt;
}

// Active swap (/proc/swaps: "Filename Type Size Used Priority", the name
// escaped like mountinfo's). A swap device goes into the table as if mounted
// on kSwap, so a disk whose partition is swap is busy like one whose
// partition is mounted. A swap file is returned when it is the target. (The
// kernel holds a swap device O_EXCL, not a swap file, and either way the
// message should say why.)
std::optional<std::string> add_swap(MountTable& table, const struct stat& target) {
  std::ifstream in("/proc/swaps");
  std::string line;
  std::getline(in, line);  // header
  std::optional<std::string> file_in_use;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    if (!(fields >> name)) continue;
    name = unescape(name);
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) continue;
    if (S_ISBLK(st.st_mode)) table.emplace(st.st_rdev, std::string(kSwap));
    else if (same_target(st, target)) file_in_use = std::string(kSwap);
  }
  return file_in_use;
}

}  // namespace

Result<std::optional<std::string>> find_mount(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error(path + ": stat");
  if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) return std::optional<std::string>{};
  auto table = FSIO_TRY(read_mountinfo());
  if (auto swap_file = add_swap(table, st)) return swap_file;
  if (S_ISBLK(st.st_mode))
    if (auto mp = mounted_block(st.st_rdev, table)) return mp;
  return mounted_through_loop(st, table);
}

}  // namespace fsio
