// The layout of one FAT volume: where the reserved area, the FAT copies, the
// FAT12/16 root directory and the clusters are. One struct for every use:
// compute_geometry fills it for a new volume (Geometry derives from it),
// parse_boot_sector fills it from a boot sector read off a disk, and the
// summary, --json and describe output of every tool come from
// layout_fields(), its one field list.
//
//   sector 0                                                       total_sectors
//   | reserved | FAT copy 0 | ... | FAT copy n-1 | root (12/16) | clusters 2..N+1 |
//
// Sector numbers are filesystem sectors of sector_size bytes, counted from
// the filesystem start; byte offsets returned by the *_offset() helpers are
// relative to the Device window (offset_bytes is added), ready for IoQueue.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "fat/fat_entry.hpp"

namespace fat {

// v rounded up to a multiple of `to` (> 0).
inline std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

struct Layout {
  FatType type = FatType::fat32;
  std::uint32_t sector_size = 512;        // BPB_BytsPerSec
  std::uint32_t sectors_per_cluster = 1;  // BPB_SecPerClus
  std::uint32_t reserved_sectors = 1;     // BPB_RsvdSecCnt
  std::uint32_t num_fats = 2;             // BPB_NumFATs
  std::uint32_t root_entries = 0;         // BPB_RootEntCnt: 0 on FAT32
  std::uint32_t total_sectors = 0;        // BPB_TotSec16 or BPB_TotSec32
  std::uint32_t fat_sectors = 0;          // BPB_FATSz16 or BPB_FATSz32, per copy
  std::uint32_t cluster_count = 0;        // data clusters, numbered 2..cluster_count+1
  std::uint8_t media = 0xF8;              // BPB_Media
  std::uint8_t drive_number = 0x80;       // BS_DrvNum
  std::uint32_t heads = 0;                // BPB_NumHeads
  std::uint32_t sectors_per_track = 0;    // BPB_SecPerTrk
  std::uint32_t hidden_sectors = 0;       // BPB_HiddSec
  std::uint32_t fsinfo_sector = 0;        // BPB_FSInfo (FAT32); 0 = none
  std::uint32_t backup_boot_sector = 0;   // BPB_BkBootSec (FAT32); 0 = none
  std::uint32_t root_cluster = 0;         // BPB_RootClus (FAT32); 0 on FAT12/16
  std::uint16_t ext_flags = 0;            // BPB_ExtFlags (FAT32): 0 = every copy mirrored
  std::uint64_t offset_bytes = 0;         // filesystem start in the Device window

  std::uint32_t root_dir_sectors() const {
    return std::uint32_t((std::uint64_t(root_entries) * 32 + sector_size - 1) / sector_size);
  }
  std::uint64_t first_fat_sector() const { return reserved_sectors; }
  std::uint64_t root_dir_sector() const { return reserved_sectors + std::uint64_t(num_fats) * fat_sectors; }
  std::uint64_t data_start_sector() const { return root_dir_sector() + root_dir_sectors(); }
  std::uint64_t cluster_bytes() const { return std::uint64_t(sectors_per_cluster) * sector_size; }
  std::uint64_t filesystem_bytes() const { return std::uint64_t(total_sectors) * sector_size; }
  std::uint64_t data_bytes() const { return std::uint64_t(cluster_count) * cluster_bytes(); }
  std::uint64_t fat_bytes() const { return std::uint64_t(fat_sectors) * sector_size; }  // per copy

  // FAT entries that exist: 0 and 1 (reserved) and one per cluster.
  std::uint32_t entry_count() const { return cluster_count + 2; }
  // A cluster number that names a data cluster (2..cluster_count+1).
  bool is_cluster(std::uint64_t n) const { return n >= 2 && n < std::uint64_t(cluster_count) + 2; }

  // BPB_ExtFlags bit 7 set: only the copy in bits 0-3 is active (fatgen103
  // p.13). Linux ignores the flag and mirrors every copy; we read the active
  // copy and write all of them, which is right either way.
  bool mirrored() const { return type != FatType::fat32 || !(ext_flags & 0x80); }
  std::uint32_t active_fat() const { return mirrored() ? 0 : ext_flags & 0x0F; }

  // Device-window byte offsets.
  std::uint64_t sector_offset(std::uint64_t sector) const { return offset_bytes + sector * sector_size; }
  std::uint64_t fat_offset(std::uint32_t copy) const {
    return sector_offset(first_fat_sector()) + std::uint64_t(copy) * fat_bytes();
  }
  std::uint64_t root_dir_offset() const { return sector_offset(root_dir_sector()); }
  // First sector of cluster n (n must satisfy is_cluster).
  std::uint64_t cluster_sector(std::uint32_t n) const {
    return data_start_sector() + std::uint64_t(n - 2) * sectors_per_cluster;
  }
  std::uint64_t cluster_offset(std::uint32_t n) const { return sector_offset(cluster_sector(n)); }

  bool operator==(const Layout&) const = default;
};

// One named number of the layout, as tools print it ("cluster_bytes": 4096).
struct LayoutField {
  const char* name;
  std::variant<std::uint64_t, std::string> value;
};

// The summary every tool prints and puts under "geometry" in --json, in this
// order: fat_type, sector_size, cluster_bytes, sectors_per_cluster,
// cluster_count, total_sectors, filesystem_bytes, data_bytes,
// reserved_sectors, num_fats, fat_sectors, root_entries, data_start_sector,
// hidden_sectors, heads, sectors_per_track, media, fsinfo_sector,
// backup_boot_sector, offset_bytes. The names are mkfat's --json keys; do
// not rename them (scripts read them).
std::vector<LayoutField> layout_fields(const Layout& layout);

}  // namespace fat
