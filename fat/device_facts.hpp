// What mkfs.fat asks the kernel about a target before choosing a geometry
// (its get_device_info): sector size, disk geometry, partition start, and
// whether it is a fixed disk. Kept apart from compute_geometry so that stays
// pure and testable without devices.
#pragma once

#include "fat/geometry.hpp"
#include "libfsio/device.hpp"

namespace fat {

// Image files: nothing known (mkfs.fat treats them as removable media, so the
// floppy table applies). Loop devices: the same as their image file, since
// they answer neither HDIO_GETGEO nor a partition start (checked against
// mkfs.fat on loop devices in tests/cli/mkfat_blockdev.sh). Other block
// devices: BLKSSZGET via the Device, HDIO_GETGEO for heads, sectors per track
// and the partition start, /sys/class/block/NAME/{removable,partition}.
DeviceFacts device_facts(const fsio::Device& device);

}  // namespace fat
