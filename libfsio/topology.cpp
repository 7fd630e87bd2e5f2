// Topology: what the kernel says about sector sizes, I/O sizes and direct-I/O
// alignment, from three sources in order of trust:
//   1. the block-device ioctls (BLKSSZGET, BLKPBSZGET, BLKIOMIN, BLKIOOPT),
//   2. statx(STATX_DIOALIGN) for the DIO alignment (Linux 6.1+; answers for
//      regular files on filesystems that do DIO and, since 6.11, for block
//      devices),
//   3. libblkid's topology probe, used when an ioctl is refused (some stacked
//      or odd drivers) so we still learn the sector sizes.
// Image files have no topology of their own: 512-byte logical sectors, like
// mkfs.fat assumes, unless the caller overrides the sector size.
#include <blkid/blkid.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <fstream>
#include <memory>

#include "libfsio/device.hpp"

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U  // linux/stat.h, Linux 6.1
#endif

namespace fsio {
namespace {

struct BlkidTopology {
  std::uint32_t logical = 0, physical = 0, minimum = 0, optimal = 0;
};

// libblkid's view; zeros when it cannot tell.
BlkidTopology probe_blkid_topology(int fd) {
  BlkidTopology t;
  std::unique_ptr<blkid_struct_probe, decltype(&blkid_free_probe)> pr(blkid_new_probe(), blkid_free_probe);
  if (!pr || blkid_probe_set_device(pr.get(), fd, 0, 0) != 0) return t;
  ::blkid_topology topo = blkid_probe_get_topology(pr.get());
  if (topo == nullptr) return t;
  t.logical = std::uint32_t(blkid_topology_get_logical_sector_size(topo));
  t.physical = std::uint32_t(blkid_topology_get_physical_sector_size(topo));
  t.minimum = std::uint32_t(blkid_topology_get_minimum_io_size(topo));
  t.optimal = std::uint32_t(blkid_topology_get_optimal_io_size(topo));
  return t;
}

// /sys/dev/block/M:m/queue/max_sectors_kb; a partition has no queue of its
// own, its parent disk's applies. 0 when unknown.
std::uint64_t sysfs_max_request(dev_t rdev) {
  std::string base = "/sys/dev/block/" + std::to_string(major(rdev)) + ":" + std::to_string(minor(rdev));
  std::string queue = base + "/queue/max_sectors_kb";
  if (access((base + "/partition").c_str(), F_OK) == 0) queue = base + "/../queue/max_sectors_kb";
  std::ifstream in(queue);
  std::uint64_t kb = 0;
  if (!(in >> kb)) return 0;
  return kb * 1024;
}

// {mem, offset} alignment, or {0, 0} when statx does not answer.
std::pair<std::uint32_t, std::uint32_t> statx_dio_align(int fd) {
  struct statx sx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0) return {0, 0};
  if ((sx.stx_mask & STATX_DIOALIGN) == 0) return {0, 0};
  return {sx.stx_dio_mem_align, sx.stx_dio_offset_align};
}

bool valid_sector_size(std::uint32_t s) { return s >= 512 && s <= 65536 && std::has_single_bit(s); }

// An image file: 512-byte logical sectors, unless the caller overrides them.
Topology image_topology(std::uint32_t sector_size_override) {
  Topology t;
  t.logical_sector = sector_size_override != 0 ? sector_size_override : 512;
  t.physical_sector = t.logical_sector;
  t.minimum_io = t.logical_sector;
  return t;
}

// A block device's size ioctls. One the driver refuses falls back to
// libblkid (probed once); if that cannot tell either, the size is unknown
// and guessing would be unsafe.
class SizeIoctls {
 public:
  SizeIoctls(int fd, const std::string& path) : fd_(fd), path_(path) {}

  Status ask(unsigned long req, const char* name, std::uint32_t BlkidTopology::*field, std::uint32_t& out) {
    unsigned int v = 0;
    int iv = 0;
    int r = req == BLKSSZGET ? ioctl(fd_, req, &iv) : ioctl(fd_, req, &v);
    if (r == 0) {
      out = req == BLKSSZGET ? std::uint32_t(iv) : v;
      return {};
    }
    int err = errno;
    if (!asked_blkid_) {
      bt_ = probe_blkid_topology(fd_);
      asked_blkid_ = true;
    }
    if (bt_.*field != 0) {
      out = bt_.*field;
      return {};
    }
    return errno_error(err, name).at(path_);
  }

 private:
  int fd_;
  const std::string& path_;
  BlkidTopology bt_{};
  bool asked_blkid_ = false;
};

// A larger logical sector than the device's, when asked: only a larger
// multiple makes sense, the device cannot address less than its own.
Status override_sector(Topology& t, const std::string& path, std::uint32_t sector_size_override) {
  if (sector_size_override != 0) {
    if (sector_size_override < t.logical_sector)
      return make_error(Errc::invalid_argument, "sector size " + std::to_string(sector_size_override) +
                                                    " is smaller than the device's logical sector size " +
                                                    std::to_string(t.logical_sector))
          .at(path);
    t.logical_sector = sector_size_override;
  }
  return {};
}

// A block device: its sector and I/O sizes, and the kernel's largest request.
Result<Topology> block_topology(int fd, const std::string& path, std::uint32_t sector_size_override) {
  Topology t;
  SizeIoctls sizes(fd, path);
  FSIO_TRY(sizes.ask(BLKSSZGET, "BLKSSZGET", &BlkidTopology::logical, t.logical_sector));
  if (!sizes.ask(BLKPBSZGET, "BLKPBSZGET", &BlkidTopology::physical, t.physical_sector))
    t.physical_sector = t.logical_sector;
  if (!sizes.ask(BLKIOMIN, "BLKIOMIN", &BlkidTopology::minimum, t.minimum_io)) t.minimum_io = t.physical_sector;
  if (!sizes.ask(BLKIOOPT, "BLKIOOPT", &BlkidTopology::optimal, t.optimal_io)) t.optimal_io = 0;
  if (!valid_sector_size(t.logical_sector))
    return make_error(Errc::unsupported,
                      "logical sector size " + std::to_string(t.logical_sector) + " is not supported")
        .at(path);
  FSIO_TRY(override_sector(t, path, sector_size_override));
  if (t.physical_sector < t.logical_sector) t.physical_sector = t.logical_sector;
  if (t.minimum_io < t.logical_sector) t.minimum_io = t.logical_sector;
  struct stat st {};
  if (fstat(fd, &st) == 0) {
    std::uint64_t kernel_max = sysfs_max_request(st.st_rdev);
    if (kernel_max > t.max_request) t.max_request = kernel_max;
  }
  return t;
}

}  // namespace

Result<Topology> query_topology(int fd, const std::string& path, bool is_block, std::uint32_t sector_size_override) {
  if (sector_size_override != 0 && !valid_sector_size(sector_size_override))
    return make_error(Errc::invalid_argument, "sector size " + std::to_string(sector_size_override) +
                                                  " is not a power of two between 512 and 65536")
        .at(path);
  Topology t;
  if (is_block) t = FSIO_TRY(block_topology(fd, path, sector_size_override));
  else t = image_topology(sector_size_override);
  auto [mem, off] = statx_dio_align(fd);
  // Without an answer, the logical sector is the alignment O_DIRECT has
  // always required of block devices and of ext4/xfs files.
  t.dio_mem_align = mem != 0 ? mem : t.logical_sector;
  t.dio_offset_align = off != 0 ? off : t.logical_sector;
  return t;
}

}  // namespace fsio
