// FAT boot sector (sector 0, and its FAT32 backup): the BIOS Parameter Block.
//
// Layout after Microsoft's "FAT: General Overview of On-Disk Format"
// (fatgen103), section 3. Offsets below are bytes from the start of the
// sector. The common BPB (0x00-0x23) is followed either by the FAT12/16
// extended BPB (0x24) or by the FAT32 BPB (0x24-0x3F) and then the same
// extended fields at 0x40. The 0x55 0xAA signature sits at bytes 510-511 even
// when the logical sector is larger than 512 bytes (fatgen103 p.11 note).
#pragma once

#include <cstddef>
#include <cstdint>

#include "libfsio/endian.hpp"

namespace fat {

using fsio::le16;
using fsio::le32;

// 0x00-0x23, shared by FAT12, FAT16 and FAT32.
struct Bpb {
  std::uint8_t jump[3];              // BS_jmpBoot     0x00: EB xx 90
  std::uint8_t oem_name[8];          // BS_OEMName     0x03
  le16 bytes_per_sector;             // BPB_BytsPerSec 0x0B: 512..32768
  std::uint8_t sectors_per_cluster;  // BPB_SecPerClus 0x0D: power of two <= 128
  le16 reserved_sectors;             // BPB_RsvdSecCnt 0x0E
  std::uint8_t num_fats;             // BPB_NumFATs    0x10
  le16 root_entries;                 // BPB_RootEntCnt 0x11: 0 on FAT32
  le16 total_sectors_16;             // BPB_TotSec16   0x13: 0 if >= 65536
  std::uint8_t media;                // BPB_Media      0x15
  le16 fat_size_16;                  // BPB_FATSz16    0x16: 0 on FAT32
  le16 sectors_per_track;            // BPB_SecPerTrk  0x18
  le16 num_heads;                    // BPB_NumHeads   0x1A
  le32 hidden_sectors;               // BPB_HiddSec    0x1C
  le32 total_sectors_32;             // BPB_TotSec32   0x20
};
static_assert(sizeof(Bpb) == 36 && alignof(Bpb) == 1);
static_assert(offsetof(Bpb, bytes_per_sector) == 0x0B);
static_assert(offsetof(Bpb, sectors_per_cluster) == 0x0D);
static_assert(offsetof(Bpb, root_entries) == 0x11);
static_assert(offsetof(Bpb, media) == 0x15);
static_assert(offsetof(Bpb, hidden_sectors) == 0x1C);
static_assert(offsetof(Bpb, total_sectors_32) == 0x20);

// Extended BPB: at 0x24 on FAT12/16, at 0x40 on FAT32 (fatgen103 p.10, p.12).
struct ExtendedBpb {
  std::uint8_t drive_number;      // BS_DrvNum      +0: 0x80 hard disk, 0x00 floppy
  std::uint8_t reserved1;         // BS_Reserved1   +1: Linux keeps the dirty bit here
  std::uint8_t boot_signature;    // BS_BootSig     +2: 0x29 = the next three fields exist
  le32 volume_id;                 // BS_VolID       +3
  std::uint8_t volume_label[11];  // BS_VolLab      +7: "NO NAME    " when unset
  std::uint8_t fs_type[8];        // BS_FilSysType +18: "FAT12   " ... informational only
};
static_assert(sizeof(ExtendedBpb) == 26 && alignof(ExtendedBpb) == 1);

inline constexpr std::uint8_t kExtendedBootSignature = 0x29;

// FAT32-only fields, 0x24-0x3F.
struct Fat32Bpb {
  le32 fat_size_32;           // BPB_FATSz32   0x24
  le16 ext_flags;             // BPB_ExtFlags  0x28: 0 = mirroring on, all FATs active
  le16 fs_version;            // BPB_FSVer     0x2A: 0.0
  le32 root_cluster;          // BPB_RootClus  0x2C: 2
  le16 fs_info_sector;        // BPB_FSInfo    0x30: 1
  le16 backup_boot_sector;    // BPB_BkBootSec 0x32: 6
  std::uint8_t reserved[12];  // BPB_Reserved  0x34
};
static_assert(sizeof(Fat32Bpb) == 28 && alignof(Fat32Bpb) == 1);

inline constexpr std::size_t kBootCodeSize16 = 448;      // 0x3E..0x1FD
inline constexpr std::size_t kBootCodeSize32 = 420;      // 0x5A..0x1FD
inline constexpr std::uint16_t kBootSignature = 0xAA55;  // bytes 0x55 0xAA at 510

struct BootSector16 {
  Bpb bpb;
  ExtendedBpb ext;                          // 0x24
  std::uint8_t boot_code[kBootCodeSize16];  // 0x3E
  le16 signature;                           // 0x1FE: 0xAA55
};
static_assert(sizeof(BootSector16) == 512 && alignof(BootSector16) == 1);
static_assert(offsetof(BootSector16, ext) == 0x24);
static_assert(offsetof(BootSector16, boot_code) == 0x3E);
static_assert(offsetof(BootSector16, signature) == 0x1FE);

struct BootSector32 {
  Bpb bpb;
  Fat32Bpb fat32;                           // 0x24
  ExtendedBpb ext;                          // 0x40
  std::uint8_t boot_code[kBootCodeSize32];  // 0x5A
  le16 signature;                           // 0x1FE: 0xAA55
};
static_assert(sizeof(BootSector32) == 512 && alignof(BootSector32) == 1);
static_assert(offsetof(BootSector32, fat32) + offsetof(Fat32Bpb, root_cluster) == 0x2C);
static_assert(offsetof(BootSector32, fat32) + offsetof(Fat32Bpb, backup_boot_sector) == 0x32);
static_assert(offsetof(BootSector32, ext) == 0x40);
static_assert(offsetof(BootSector32, boot_code) == 0x5A);
static_assert(offsetof(BootSector32, signature) == 0x1FE);

// Where a (fake) MBR partition table would sit inside the boot code area
// (mkfs.fat --mbr): disk signature at 440, four 16-byte entries at 446.
inline constexpr std::size_t kMbrDiskSignatureOffset = 440;
inline constexpr std::size_t kMbrPartitionTableOffset = 446;

}  // namespace fat
