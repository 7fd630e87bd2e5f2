// Choosing a FAT layout: what mkfat takes (FormatOptions), what it knows
// about the device (DeviceFacts), and the resulting Geometry, chosen exactly
// as mkfs.fat 4.2 chooses it (see /work/shared/reference/fat-mkfs-fsck.md
// and FORMAT.md). compute_geometry is pure: no I/O, no clock. What a tool
// prints about the result comes from layout_fields() (layout.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fat/layout.hpp"
#include "libfsio/result.hpp"

namespace fat {

// Everything mkfat takes; option letters are mkfs.fat's. Zero / nullopt means
// "choose like mkfs.fat".
struct FormatOptions {
  unsigned fat_type = 0;                        // -F: 0 auto, 12, 16, 32
  unsigned sectors_per_cluster = 0;             // -s: 1..128, power of two; 0 auto
  std::uint32_t cluster_size = 0;               // bytes, alternative to -s (must be spc * sector)
  std::uint32_t sector_size = 0;                // -S: logical sector, 512..32768; 0 device's or 512
  unsigned num_fats = 2;                        // -f: 1..4
  unsigned root_entries = 0;                    // -r: 16..32768 (FAT12/16); 0 auto
  unsigned reserved_sectors = 0;                // -R: minimum, 1..65535; 0 auto (1, FAT32 32)
  bool no_align = false;                        // -a: do not align to the cluster size
  std::optional<std::uint32_t> hidden_sectors;  // -h
  unsigned media = 0;                           // -M: 0xF0 or 0xF8..0xFF; 0 auto
  std::optional<unsigned> drive_number;         // -D: 0..255
  std::optional<unsigned> backup_boot;          // -b: FAT32 backup boot sector (0 = none)
  unsigned heads = 0;                           // -g heads/spt; both or neither
  unsigned sectors_per_track = 0;
  std::uint64_t offset_sectors = 0;                            // --offset: filesystem start, in logical sectors
  std::uint64_t blocks = 0;                                    // BLOCKS argument: KiB to use; 0 = whole device
  std::optional<std::uint32_t> volume_id;                      // -i
  std::string label;                                           // -n (empty: "NO NAME", no root entry)
  bool uppercase_label = false;                                // convert a lowercase label instead of warning
  bool label_in_codepage = false;                              // `label` holds code-page bytes (encode_label)
  bool invariant = false;                                      // --invariant: fixed id and timestamp
  enum class Mbr { automatic, yes, no } mbr = Mbr::automatic;  // --mbr
  bool atari = false;                                          // -A, --variant=atari: GEMDOS layout rules
};

// What the caller learned about the target (mkfs.fat's get_device_info).
// An image file is the default: nothing known, not a fixed disk.
struct DeviceFacts {
  bool block_device = false;
  bool fixed_disk = false;                // non-removable disk or one of its partitions
  bool whole_disk = false;                // not a partition (with fixed_disk: --mbr auto writes one)
  std::uint32_t logical_sector_size = 0;  // BLKSSZGET; 0 = unknown (files)
  unsigned heads = 0;                     // HDIO_GETGEO; 0 = unknown
  unsigned sectors_per_track = 0;
  std::optional<std::uint64_t> partition_start;  // sectors; sets hidden sectors
  std::optional<std::uint64_t> disk_sectors;     // whole disk size for the CHS default
  bool has_children = false;                     // partitions or holders (dm, md) in sysfs: mkfs.fat wants -I
};

// The layout mkfat writes, plus what only formatting needs.
struct Geometry : Layout {
  bool aligned = true;                // structures aligned to the cluster size
  bool write_mbr = false;             // fake MBR partition table in sector 0
  bool atari = false;                 // Atari (GEMDOS) variant: see geometry_atari.cpp
  bool auto_fat32 = false;            // FAT32 chosen by size, not -F (mkfs.fat -v says so)
  bool needs_tos_104 = false;         // Atari: 32765 sectors or more (mkfs.fat says so on stdout)
  std::vector<std::string> warnings;  // what mkfs.fat warns about, reworded
};

// mkfs.fat's choices for a target of device_bytes bytes (the whole device or
// image, --offset included). Errc::invalid_argument with the numbers when
// mkfs.fat would refuse, and also (where mkfs.fat warns and goes on) for an
// offset at or past the end and for `blocks` beyond what follows the
// offset; Errc::unsupported for valid options we refuse.
fsio::Result<Geometry> compute_geometry(std::uint64_t device_bytes, const FormatOptions& options,
                                        const DeviceFacts& facts = {});

// The logical sector size compute_geometry uses: a block device's own, never
// less (mkfs.fat raises -S to it); an image file's -S, or 512. A plain
// --offset counts these sectors.
std::uint32_t logical_sector_size(const FormatOptions& options, const DeviceFacts& facts);

}  // namespace fat
