// Internal to geometry.cpp: the two halves of mkfs.fat's parameter choice.
#pragma once

#include <cstdint>

#include "fat/geometry.hpp"

namespace fat {

// a / b rounded up, for a >= 0 and b > 0 (sector and cluster counts).
inline std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Cluster-count limits (mkfs.fat 4.2, reference section 2):
// fatgen103 p.14 calls a volume with < 4085 clusters FAT12 and < 65525 FAT16,
// but Windows' fastfat.sys treats < 4087 as FAT12 while Linux treats >= 4085
// as FAT16, so 4085 and 4086 are never made. FAT32 is recognised by
// BPB_FATSz16 == 0, not by count; its cluster numbers have 28 bits and the
// top values are reserved: mkfs.fat allows 2^28 - 10 = 268435446 clusters.
inline constexpr std::int64_t kMaxClusters12 = 4084;
inline constexpr std::int64_t kMinClusters16 = 4087;
inline constexpr std::int64_t kMaxClusters16 = 65524;
inline constexpr std::int64_t kMinClusters32 = 65525;
inline constexpr std::int64_t kMaxClusters32 = 268435446;

// mkfs.fat switches to FAT32 by itself from 512 MiB of device size.
inline constexpr std::uint64_t kAutoFat32Bytes = 512ull << 20;
// Filesystems of at most 8192 sectors (4 MiB at 512 B) are never aligned.
inline constexpr std::uint64_t kNoAlignSectors = 8192;

// What establish_params decides before any layout arithmetic.
struct InitialParams {
  unsigned fat_type = 0;  // 0 = choose 12 or 16 later
  bool type_by_user = false;
  std::uint32_t spc = 4;  // where the cluster-size search starts
  std::uint32_t root_entries = 512;
  std::uint8_t media = 0xF8;
  std::uint32_t heads = 0;
  std::uint32_t sectors_per_track = 0;
  std::uint32_t hidden = 0;
};

fsio::Result<InitialParams> initial_params(std::uint64_t device_bytes, const FormatOptions& o, const DeviceFacts& facts,
                                           std::uint32_t ss);

// The sector count, the cluster-size search and the final alignment; fills g.
fsio::Status choose_layout(std::uint64_t device_bytes, const FormatOptions& o, const InitialParams& p,
                           std::uint32_t spc_asked, Geometry& g);

// The Atari (GEMDOS) variant of choose_layout (geometry_atari.cpp):
// `ss_fixed` when the sector size was given (-S) or is a block device's.
fsio::Status choose_atari_layout(std::uint64_t device_bytes, const FormatOptions& o, const InitialParams& p,
                                 bool ss_fixed, Geometry& g);

// The drive's fields, the same in both variants: CHS, hidden sectors, media
// byte (-m, else the floppy table's or 0xF8) and drive number (0x80 for 0xF8).
void set_drive_fields(const FormatOptions& o, const InitialParams& p, Geometry& g);

// The root directory's entries: none on FAT32 (a warning when -r asked).
std::uint32_t root_entries_for(const FormatOptions& o, const InitialParams& p, bool fat32, Geometry& g);

// The reserved sectors: -R, else 32 on FAT32 and 1 otherwise; FAT32 needs
// at least 2 (boot sector and FSInfo, fatgen103 p.12).
fsio::Result<std::uint32_t> reserved_sectors(const FormatOptions& o, bool fat32);

// FAT32's extra reserved sectors and backup boot sector, and mkfs.fat's
// "at least 32 KiB of data" check over `blocks` KiB; shared by both variants.
fsio::Status finish_layout(const FormatOptions& o, std::uint64_t blocks, Geometry& g);

// Sectors of the volume as mkfs.fat counts them: whole KiB blocks plus the
// sectors of a partial last KiB, capped at 2^32 - 1 (with a warning);
// `blocks` is lowered with the cap.
std::uint64_t count_sectors(std::uint64_t device_bytes, const FormatOptions& o, std::uint32_t ss, std::uint64_t& blocks,
                            Geometry& g);

// "2 MiB", "1.5 GiB", "4000 bytes": for messages.
std::string human_bytes(std::uint64_t bytes);

}  // namespace fat
