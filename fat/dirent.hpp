// FAT directory entries: the 32-byte 8.3 entry and the VFAT long-name entry.
// fatgen103 section 6 (8.3) and section 7 (long names).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <span>

#include "libfsio/endian.hpp"

namespace fat {

using fsio::le16;
using fsio::le32;

// DIR_Attr bits (fatgen103 p.23).
namespace attr {
inline constexpr std::uint8_t read_only = 0x01;
inline constexpr std::uint8_t hidden = 0x02;
inline constexpr std::uint8_t system = 0x04;
inline constexpr std::uint8_t volume_id = 0x08;
inline constexpr std::uint8_t directory = 0x10;
inline constexpr std::uint8_t archive = 0x20;
// A long-name slot claims all four low bits, which no 8.3 entry combines.
inline constexpr std::uint8_t long_name = read_only | hidden | system | volume_id;
inline constexpr std::uint8_t long_name_mask = long_name | directory | archive;
}  // namespace attr

inline constexpr std::uint8_t kDirEntryFree = 0xE5;   // DIR_Name[0]: deleted
inline constexpr std::uint8_t kDirEntryEnd = 0x00;    // DIR_Name[0]: no more entries
inline constexpr std::uint8_t kDirEntryKanji = 0x05;  // stands for a real leading 0xE5

struct DirEntry {
  std::uint8_t name[11];           // DIR_Name         0x00: 8 + 3, space padded
  std::uint8_t attributes;         // DIR_Attr         0x0B
  std::uint8_t nt_reserved;        // DIR_NTRes        0x0C: case bits (Windows NT)
  std::uint8_t create_time_tenth;  // DIR_CrtTimeTenth 0x0D: 0..199 hundredths
  le16 create_time;                // DIR_CrtTime      0x0E
  le16 create_date;                // DIR_CrtDate      0x10
  le16 access_date;                // DIR_LstAccDate   0x12
  le16 first_cluster_hi;           // DIR_FstClusHI    0x14: 0 on FAT12/16
  le16 write_time;                 // DIR_WrtTime      0x16
  le16 write_date;                 // DIR_WrtDate      0x18
  le16 first_cluster_lo;           // DIR_FstClusLO    0x1A
  le32 file_size;                  // DIR_FileSize     0x1C
};
static_assert(sizeof(DirEntry) == 32 && alignof(DirEntry) == 1);
static_assert(offsetof(DirEntry, attributes) == 0x0B);
static_assert(offsetof(DirEntry, create_time) == 0x0E);
static_assert(offsetof(DirEntry, first_cluster_hi) == 0x14);
static_assert(offsetof(DirEntry, write_time) == 0x16);
static_assert(offsetof(DirEntry, first_cluster_lo) == 0x1A);
static_assert(offsetof(DirEntry, file_size) == 0x1C);

// One slot of a long name: 13 UCS-2 characters, stored last slot first.
struct LfnEntry {
  std::uint8_t order;       // LDIR_Ord       0x00: 1..20, | 0x40 on the last slot
  le16 name1[5];            // LDIR_Name1     0x01: characters 1-5
  std::uint8_t attributes;  // LDIR_Attr      0x0B: attr::long_name
  std::uint8_t type;        // LDIR_Type      0x0C: 0
  std::uint8_t checksum;    // LDIR_Chksum    0x0D: lfn_checksum of the 8.3 name
  le16 name2[6];            // LDIR_Name2     0x0E: characters 6-11
  le16 first_cluster_lo;    // LDIR_FstClusLO 0x1A: must be 0
  le16 name3[2];            // LDIR_Name3     0x1C: characters 12-13
};
static_assert(sizeof(LfnEntry) == 32 && alignof(LfnEntry) == 1);
static_assert(offsetof(LfnEntry, attributes) == 0x0B);
static_assert(offsetof(LfnEntry, checksum) == 0x0D);
static_assert(offsetof(LfnEntry, name2) == 0x0E);
static_assert(offsetof(LfnEntry, first_cluster_lo) == 0x1A);
static_assert(offsetof(LfnEntry, name3) == 0x1C);

inline constexpr std::uint8_t kLfnLastSlot = 0x40;
inline constexpr std::size_t kLfnCharsPerSlot = 13;

// ChkSum() of fatgen103 p.28: rotate right by one, add the next byte, over
// the 11 bytes of the 8.3 name exactly as stored (space padded).
constexpr std::uint8_t lfn_checksum(std::span<const std::uint8_t, 11> short_name) {
  std::uint8_t sum = 0;
  for (std::uint8_t c : short_name) sum = std::uint8_t(((sum & 1) << 7) + (sum >> 1) + c);
  return sum;
}

// DOS date and time (fatgen103 p.25), local or UTC as the caller decides:
//   date: bits 15-9 year-1980 (0..127), 8-5 month (1..12), 4-0 day (1..31)
//   time: bits 15-11 hours, 10-5 minutes, 4-0 seconds/2
struct DosDateTime {
  std::uint16_t date = 0;
  std::uint16_t time = 0;
  std::uint8_t tenths = 0;  // DIR_CrtTimeTenth: odd second and hundredths
};

// The 1980-01-01 00:00:00 fallback mkfs.fat uses for dates DOS cannot hold.
inline constexpr DosDateTime kDosEpoch{std::uint16_t((1 << 5) | 1), 0, 0};

// Encodes a broken-down time; years outside 1980..2107 give kDosEpoch.
DosDateTime encode_dos_datetime(const std::tm& tm);

// Stamps an entry made or rewritten at `when`, as Linux's vfat does for a
// new file: created and written at that time, last accessed that day
// (DIR_CrtTimeTenth, DIR_CrtTime, DIR_CrtDate, DIR_LstAccDate, DIR_WrtTime,
// DIR_WrtDate). The one place these six fields are set.
void set_times(DirEntry& entry, DosDateTime when);
// Decodes into tm fields (tm_year since 1900, tm_mon 0-based); no validation.
std::tm decode_dos_datetime(DosDateTime dt);

}  // namespace fat
