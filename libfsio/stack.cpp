// Storage stacks from sysfs (see stack.hpp). Every block device has a
// directory /sys/dev/block/MAJ:MIN holding what we need:
//   partition, start, size      a partition (start and size in 512-byte units,
//                               whatever the logical sector size);
//   loop/backing_file, offset, sizelimit   a bound loop device (bytes);
//   slaves/<name>/dev           the members of a dm or md device;
//   dm/                         present on device-mapper devices;
//   uevent DEVNAME=             the node's name under /dev.
#include "libfsio/stack.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fsio {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 16;

std::string sysfs_dir(dev_t dev) {
  return "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

bool read_u64(const fs::path& file, std::uint64_t& out) {
  std::ifstream in(file);
  return static_cast<bool>(in >> out);
}

bool read_dev(const fs::path& file, dev_t& out) {
  std::ifstream in(file);
  unsigned maj = 0, min = 0;
  char colon = 0;
  if (!(in >> maj >> colon >> min) || colon != ':') return false;
  out = makedev(maj, min);
  return true;
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return b > kToEnd - a ? kToEnd : a + b; }

// [begin, end) of a child device placed at `start` inside its parent and at
// most `limit` bytes long (kToEnd: unbounded). False when nothing of it is left.
bool shift(std::uint64_t start, std::uint64_t limit, std::uint64_t& begin, std::uint64_t& end) {
  end = std::min(end, limit);
  if (begin >= end) return false;
  begin = add_sat(start, begin);
  end = end == kToEnd ? kToEnd : add_sat(start, end);
  return true;
}

struct Walker {
  std::vector<StorageExtent> out;

  void block(dev_t dev, std::uint64_t begin, std::uint64_t end, std::vector<StackLink> links, int depth) {
    const std::string dir = sysfs_dir(dev);
    std::error_code ec;
    if (depth < kMaxDepth && fs::exists(dir + "/partition", ec)) {
      partition(dev, dir, begin, end, links, depth);
      return;
    }
    if (depth < kMaxDepth && fs::exists(dir + "/loop/backing_file", ec) && loop(dev, dir, begin, end, links, depth))
      return;
    if (depth < kMaxDepth && members(dev, dir, links, depth)) return;
    out.push_back({false, dev, 0, begin, end, block_device_name(dev), std::move(links)});
  }

  void partition(dev_t dev, const std::string& dir, std::uint64_t begin, std::uint64_t end,
                 std::vector<StackLink> links, int depth) {
    std::uint64_t start = 0, size = 0;
    dev_t disk = 0;
    std::error_code ec;
    const fs::path real = fs::canonical(dir, ec);
    if (ec || !read_u64(real / "start", start) || !read_u64(real / "size", size) ||
        !read_dev(real.parent_path() / "dev", disk)) {
      out.push_back({false, dev, 0, begin, end, block_device_name(dev), std::move(links)});
      return;
    }
    links.push_back({dev, false, LinkKind::partition});
    if (shift(start * 512, size * 512, begin, end)) block(disk, begin, end, std::move(links), depth + 1);
  }

  // False when the loop device's backing cannot be found: it is then the bottom.
  bool loop(dev_t dev, const std::string& dir, std::uint64_t begin, std::uint64_t end, std::vector<StackLink> links,
            int depth) {
    const std::string backing = read_line(dir + "/loop/backing_file");
    std::uint64_t offset = 0, sizelimit = 0;
    struct stat st {};
    if (backing.empty() || ::stat(backing.c_str(), &st) != 0 || !read_u64(dir + "/loop/offset", offset)) return false;
    if (!read_u64(dir + "/loop/sizelimit", sizelimit)) sizelimit = 0;
    links.push_back({dev, false, LinkKind::loop});
    if (!shift(offset, sizelimit ? sizelimit : kToEnd, begin, end)) return true;
    if (S_ISBLK(st.st_mode)) {
      block(st.st_rdev, begin, end, std::move(links), depth + 1);
      return true;
    }
    if (!S_ISREG(st.st_mode)) return false;
    out.push_back({true, st.st_dev, st.st_ino, begin, end, backing, std::move(links)});
    return true;
  }

  // dm and md: every member, whole. False when there are none.
  bool members(dev_t dev, const std::string& dir, const std::vector<StackLink>& links, int depth) {
    std::error_code ec;
    std::vector<dev_t> slaves;
    for (const auto& entry : fs::directory_iterator(dir + "/slaves", ec)) {
      dev_t slave = 0;
      if (read_dev(entry.path() / "dev", slave)) slaves.push_back(slave);
    }
    if (slaves.empty()) return false;
    const bool dm = fs::exists(dir + "/dm", ec);
    for (dev_t slave : slaves) {
      auto below = links;
      below.push_back({dev, dm, LinkKind::members});
      block(slave, 0, kToEnd, std::move(below), depth + 1);
    }
    return true;
  }
};

}  // namespace

std::vector<StorageExtent> resolve_block_storage(dev_t dev, std::uint64_t begin, std::uint64_t end) {
  Walker w;
  if (begin < end) w.block(dev, begin, end, {}, 0);
  return std::move(w.out);
}

Result<std::vector<StorageExtent>> resolve_storage(const std::string& path, std::uint64_t begin, std::uint64_t end) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error("stat").at(path);
  if (S_ISBLK(st.st_mode)) return resolve_block_storage(st.st_rdev, begin, end);
  std::vector<StorageExtent> out;
  if (S_ISREG(st.st_mode) && begin < end) out.push_back({true, st.st_dev, st.st_ino, begin, end, path, {}});
  return out;
}

bool shares_storage(const StorageExtent& a, const StorageExtent& b) {
  if (a.is_file != b.is_file || a.dev != b.dev || (a.is_file && a.ino != b.ino)) return false;
  if (a.begin >= b.end || b.begin >= a.end) return false;
  // Walk up from the bottom while both stacks pass through the same devices.
  auto i = a.links.size(), j = b.links.size();
  while (i > 0 && j > 0 && a.links[i - 1].dev == b.links[j - 1].dev) --i, --j;
  const bool dm_siblings = i > 0 && j > 0 && a.links[i - 1].device_mapper && b.links[j - 1].device_mapper;
  return !dm_siblings;
}

std::string block_device_name(dev_t dev) {
  std::ifstream in(sysfs_dir(dev) + "/uevent");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("DEVNAME=", 0) == 0) return "/dev/" + line.substr(8);
  return "block device " + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

}  // namespace fsio
