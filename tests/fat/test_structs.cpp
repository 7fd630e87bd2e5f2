// On-disk structures: sizes and offsets at run time too, LFN checksums, DOS
// dates, and the boot sector / FSInfo / FAT head we build.
#include <gtest/gtest.h>

#include <cstring>

#include "fat/boot.hpp"
#include "fat/boot_sector.hpp"
#include "fat/dirent.hpp"
#include "fat/fsinfo.hpp"
#include "fat/label.hpp"
#include "fat/table.hpp"

namespace fat {
namespace {

std::array<std::uint8_t, 11> name(const char (&s)[12]) {
  std::array<std::uint8_t, 11> out{};
  std::memcpy(out.data(), s, 11);
  return out;
}

TEST(DirEntry, IsThirtyTwoBytesWithClusterHalvesAtSpecOffsets) {
  DirEntry e{};
  e.first_cluster_hi = 0x1234;
  e.first_cluster_lo = 0x5678;
  e.file_size = 0xAABBCCDD;
  std::array<std::byte, 32> raw{};
  fsio::store(std::span(raw), e);
  EXPECT_EQ(raw[0x14], std::byte(0x34));
  EXPECT_EQ(raw[0x15], std::byte(0x12));
  EXPECT_EQ(raw[0x1A], std::byte(0x78));
  EXPECT_EQ(raw[0x1C], std::byte(0xDD));
  EXPECT_EQ(raw[0x1F], std::byte(0xAA));
}

TEST(LfnChecksum, MatchesKnownValues) {
  // Values computed independently with fatgen103's ChkSum in Python.
  EXPECT_EQ(lfn_checksum(name("README  TXT")), 115);
  EXPECT_EQ(lfn_checksum(name("FOO     BAR")), 83);
  EXPECT_EQ(lfn_checksum(name("LONGFI~1TXT")), 212);
  EXPECT_EQ(lfn_checksum(name("           ")), 247);
  static_assert(lfn_checksum(std::array<std::uint8_t, 11>{}) == 0);
}

TEST(DosDateTime, EncodesAndDecodesFields) {
  std::tm tm{};
  tm.tm_year = 2015 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 9;
  tm.tm_min = 26;
  tm.tm_sec = 53;
  const DosDateTime dt = encode_dos_datetime(tm);
  EXPECT_EQ(dt.date, 0x466E);  // what mkfs.fat --invariant writes
  EXPECT_EQ(dt.time, 0x4B5A);
  EXPECT_EQ(dt.tenths, 100);
  const std::tm back = decode_dos_datetime(dt);
  EXPECT_EQ(back.tm_year, tm.tm_year);
  EXPECT_EQ(back.tm_mon, tm.tm_mon);
  EXPECT_EQ(back.tm_mday, 14);
  EXPECT_EQ(back.tm_sec, 53);
}

TEST(DosDateTime, YearsOutsideDosRangeFallBackTo1980) {
  std::tm tm{};
  tm.tm_year = 79;
  tm.tm_mday = 1;
  EXPECT_EQ(encode_dos_datetime(tm).date, kDosEpoch.date);
  tm.tm_year = 208;
  EXPECT_EQ(encode_dos_datetime(tm).date, 0x21);
}

TEST(DirEntryTimes, SetTimesFillsTheSixFieldsAtSpecOffsetsAndNothingElse) {
  DirEntry e{};
  std::memcpy(e.name, "README  TXT", 11);
  e.attributes = attr::archive;
  e.first_cluster_lo = 0x1234;
  e.file_size = 0xAABBCCDD;
  set_times(e, {0x466E, 0x4B5A, 100});  // 2015-03-14 09:26:53
  std::array<std::byte, 32> raw{};
  fsio::store(std::span(raw), e);
  // fatgen103 p.23: DIR_CrtTimeTenth 0x0D, DIR_CrtTime 0x0E, DIR_CrtDate
  // 0x10, DIR_LstAccDate 0x12, DIR_WrtTime 0x16, DIR_WrtDate 0x18.
  const unsigned char want[32] = {'R',  'E',  'A',  'D',  'M',  'E',  ' ',  ' ',  'T',  'X',  'T',
                                  0x20, 0x00, 100,  0x5A, 0x4B, 0x6E, 0x46, 0x6E, 0x46, 0x00, 0x00,
                                  0x5A, 0x4B, 0x6E, 0x46, 0x34, 0x12, 0xDD, 0xCC, 0xBB, 0xAA};
  EXPECT_EQ(std::memcmp(raw.data(), want, 32), 0);
}

Geometry fat32_geometry() {
  Geometry g;
  g.type = FatType::fat32;
  g.sector_size = 512;
  g.sectors_per_cluster = 8;
  g.reserved_sectors = 32;
  g.num_fats = 2;
  g.total_sectors = 2097152;
  g.fat_sectors = 2040;
  g.cluster_count = 261627;
  g.heads = 64;
  g.sectors_per_track = 32;
  g.fsinfo_sector = 1;
  g.backup_boot_sector = 6;
  g.root_cluster = 2;
  return g;
}

TEST(BootSector, Fat32FieldsLandAtSpecOffsets) {
  const auto g = fat32_geometry();
  const Sector512 s = build_boot_sector(g, 0xDEADBEEF, kNoName);
  auto u8 = [&](std::size_t i) { return std::to_integer<unsigned>(s[i]); };
  auto u16 = [&](std::size_t i) { return u8(i) | u8(i + 1) << 8; };
  auto u32 = [&](std::size_t i) { return u16(i) | u16(i + 2) << 16; };
  EXPECT_EQ(u8(0), 0xEBu);
  EXPECT_EQ(u8(1), 0x58u);  // jumps to 0x5A
  EXPECT_EQ(u16(0x0B), 512u);
  EXPECT_EQ(u8(0x0D), 8u);
  EXPECT_EQ(u16(0x0E), 32u);
  EXPECT_EQ(u16(0x11), 0u);
  EXPECT_EQ(u16(0x13), 0u);
  EXPECT_EQ(u16(0x16), 0u);
  EXPECT_EQ(u32(0x20), 2097152u);
  EXPECT_EQ(u32(0x24), 2040u);
  EXPECT_EQ(u32(0x2C), 2u);
  EXPECT_EQ(u16(0x30), 1u);
  EXPECT_EQ(u16(0x32), 6u);
  EXPECT_EQ(u8(0x42), 0x29u);
  EXPECT_EQ(u32(0x43), 0xDEADBEEFu);
  EXPECT_EQ(std::memcmp(&s[0x47], "NO NAME    FAT32   ", 19), 0);
  EXPECT_EQ(u16(0x1FE), 0xAA55u);
  // The stub's message pointer points at the message.
  const unsigned msg = u16(0x5A + 5) - 0x7C00;
  EXPECT_EQ(std::memcmp(&s[msg], "This is not a bootable disk.", 28), 0);
}

TEST(BootSector, Fat16SmallVolumeUses16BitSectorCount) {
  auto g = fat32_geometry();
  g.type = FatType::fat16;
  g.total_sectors = 40000;
  g.fat_sectors = 40;
  g.root_entries = 512;
  g.reserved_sectors = 4;
  const Sector512 s = build_boot_sector(g, 1, kNoName);
  EXPECT_EQ(std::to_integer<unsigned>(s[1]), 0x3Cu);
  EXPECT_EQ(std::to_integer<unsigned>(s[0x13]) | std::to_integer<unsigned>(s[0x14]) << 8, 40000u);
  EXPECT_EQ(std::to_integer<unsigned>(s[0x16]), 40u);
  EXPECT_EQ(std::memcmp(&s[0x36], "FAT16   ", 8), 0);
}

TEST(FsInfo, FreshVolumeHasSignaturesAndAllButRootFree) {
  const Sector512 s = build_fsinfo(fat32_geometry());
  const FsInfo info = fsio::load<FsInfo>(std::span<const std::byte>(s));
  EXPECT_EQ(info.lead_signature, kFsInfoLeadSignature);
  EXPECT_EQ(info.struct_signature, kFsInfoStructSignature);
  EXPECT_EQ(info.trail_signature, kFsInfoTrailSignature);
  EXPECT_EQ(info.free_count, 261626u);
  EXPECT_EQ(info.next_free, 2u);
  EXPECT_EQ(std::memcmp(s.data(), "RRaA", 4), 0);
  EXPECT_EQ(std::to_integer<unsigned>(s[510]), 0x55u);
  EXPECT_EQ(std::to_integer<unsigned>(s[511]), 0xAAu);
}

TEST(FatHead, MatchesMkfsFatForEachWidth) {
  auto g = fat32_geometry();
  std::array<std::byte, 512> sec{};
  fill_fat_head(g, sec);
  const unsigned char want32[] = {0xF8, 0xFF, 0xFF, 0x0F, 0xFF, 0xFF, 0xFF, 0x0F, 0xF8, 0xFF, 0xFF, 0x0F};
  EXPECT_EQ(std::memcmp(sec.data(), want32, sizeof want32), 0);
  g.type = FatType::fat12;
  g.media = 0xF0;
  sec = {};
  fill_fat_head(g, sec);
  const unsigned char want12[] = {0xF0, 0xFF, 0xFF, 0x00};
  EXPECT_EQ(std::memcmp(sec.data(), want12, sizeof want12), 0);
  g.type = FatType::fat16;
  g.media = 0xF8;
  sec = {};
  fill_fat_head(g, sec);
  const unsigned char want16[] = {0xF8, 0xFF, 0xFF, 0xFF, 0x00};
  EXPECT_EQ(std::memcmp(sec.data(), want16, sizeof want16), 0);
}

TEST(LabelEntry, MatchesMkfsFatInvariantLabelEntryByteForByte) {
  // mkfs.fat 4.2 --invariant -n LABEL: its root directory's first entry,
  // stamped 2015-03-14 09:26:53 with DIR_CrtTimeTenth left 0 for the odd second.
  std::tm tm{};
  tm.tm_year = 2015 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 9;
  tm.tm_min = 26;
  tm.tm_sec = 53;
  const DirEntry e = make_label_entry(name("LABEL      "), encode_dos_datetime(tm));
  std::array<std::byte, 32> raw{};
  fsio::store(std::span(raw), e);
  const unsigned char want[32] = {0x4c, 0x41, 0x42, 0x45, 0x4c, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
                                  0x08, 0x00, 0x00, 0x5a, 0x4b, 0x6e, 0x46, 0x6e, 0x46, 0x00, 0x00,
                                  0x5a, 0x4b, 0x6e, 0x46, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(raw.data(), want, 32), 0);
}

TEST(LabelEntry, LeadingE5IsStoredAs05) {
  auto label = name(
      "\xE5"
      "BC        ");
  const DirEntry e = make_label_entry(label, kDosEpoch);
  EXPECT_EQ(e.name[0], 0x05);
  EXPECT_EQ(e.attributes, attr::volume_id);
  EXPECT_EQ(e.write_date, kDosEpoch.date);
}

}  // namespace
}  // namespace fat
