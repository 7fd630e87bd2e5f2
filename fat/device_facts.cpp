#include "fat/device_facts.hpp"

#include <linux/hdreg.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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

}  // namespace

DeviceFacts device_facts(const fsio::Device& device) {
  DeviceFacts facts;
  if (!device.is_block_device()) return facts;
  facts.block_device = true;
  facts.logical_sector_size = device.logical_sector_size();

  struct stat st{};
  if (::fstat(device.fd(), &st) != 0 || major(st.st_rdev) == kLoopMajor) return facts;

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
