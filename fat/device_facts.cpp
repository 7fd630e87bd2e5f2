#include "fat/device_facts.hpp"

#include <linux/hdreg.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fat {

namespace {

constexpr unsigned kLoopMajor = 7;

// /sys/dev/block/MAJ:MIN/<leaf>, or "" when absent.
std::string sysfs_attr(dev_t rdev, const std::string& leaf) {
  std::ifstream in("/sys/dev/block/" + std::to_string(major(rdev)) + ":" + std::to_string(minor(rdev)) + "/" + leaf);
  std::string value;
  std::getline(in, value);
  return value;
}

// mkfs.fat's "partitions or virtual mappings": a partition of the device
// (a subdirectory with a "partition" attribute) or a holder (dm, md) in
// /sys/dev/block/MAJ:MIN. Partitions the kernel has not scanned do not count.
bool sysfs_has_children(dev_t rdev) {
  namespace fs = std::filesystem;
  const fs::path dir = "/sys/dev/block/" + std::to_string(major(rdev)) + ":" + std::to_string(minor(rdev));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && fs::exists(e.path() / "partition", ec)) return true;
  return !fs::is_empty(dir / "holders", ec) && !ec;
}

}  // namespace

DeviceFacts device_facts(const fsio::Device& device) {
  DeviceFacts facts;
  if (!device.is_block_device()) return facts;
  facts.block_device = true;
  facts.logical_sector_size = device.logical_sector_size();

  struct stat st {};
  if (::fstat(device.fd(), &st) != 0) return facts;
  facts.has_children = sysfs_has_children(st.st_rdev);
  if (major(st.st_rdev) == kLoopMajor) return facts;

  const bool partition = !sysfs_attr(st.st_rdev, "partition").empty();
  facts.whole_disk = !partition;
  // A partition's removable flag lives on its parent disk.
  const std::string removable = sysfs_attr(st.st_rdev, partition ? "../removable" : "removable");
  facts.fixed_disk = removable == "0";

  hd_geometry geo{};
  if (::ioctl(device.fd(), HDIO_GETGEO, &geo) == 0 && geo.heads && geo.sectors) {
    facts.heads = geo.heads;
    facts.sectors_per_track = geo.sectors;
    // HDIO_GETGEO's start is in 512-byte units; hidden sectors count logical sectors.
    if (facts.logical_sector_size) facts.partition_start = std::uint64_t(geo.start) * 512 / facts.logical_sector_size;
  }
  return facts;
}

}  // namespace fat
