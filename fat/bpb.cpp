// parse_boot_sector: the BPB into a Layout, checked field by field. Each
// refusal cites whom it follows; FORMAT.md ("Reading") has the full list.
#include <bit>
#include <cstring>
#include <string>

#include "fat/boot_sector.hpp"
#include "fat/volume.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

// fatgen103 p.14: the FAT type is decided by the count of clusters alone.
constexpr std::uint32_t kFat12Below = 4085;
constexpr std::uint32_t kFat16Below = 65525;
// Linux MAX_FAT32 (and mkfs.fat's MAX_CLUST_32): 2^28 - 10 clusters.
constexpr std::uint32_t kMaxClusters32 = 0x0FFFFFF6;

std::string hex(std::uint32_t v, int digits = 2) {
  static const char* d = "0123456789ABCDEF";
  std::string s = "0x";
  for (int i = digits - 1; i >= 0; --i) s += d[(v >> (4 * i)) & 0xF];
  return s;
}

fsio::Error bad(std::string what) { return make_error(Errc::corrupt, "boot sector: " + std::move(what)); }

// The fields every FAT BPB has, each checked on its own.
fsio::Status check_common(const Bpb& b) {
  const std::uint32_t ss = b.bytes_per_sector;
  // The kernel takes 512..4096 (fat_read_bpb: "bogus logical sector size");
  // mkfs.fat and fsck.fat go to 32768, and so does mkfat.
  if (ss < 512 || ss > 32768 || !std::has_single_bit(ss))
    return bad("BPB_BytsPerSec " + std::to_string(ss) + " is not a power of two in 512..32768");
  if (!std::has_single_bit(unsigned(b.sectors_per_cluster)))  // kernel: "bogus sectors per cluster"
    return bad("BPB_SecPerClus " + std::to_string(b.sectors_per_cluster) + " is not a power of two in 1..128");
  if (b.reserved_sectors == 0)  // kernel: "bogus number of reserved sectors"
    return bad("BPB_RsvdSecCnt 0: the boot sector itself is a reserved sector");
  if (b.num_fats == 0)  // kernel: "bogus number of FAT structure"
    return bad("BPB_NumFATs 0: a volume needs at least one FAT");
  if (b.media != 0xF0 && b.media < 0xF8)  // kernel fat_valid_media
    return bad("BPB_Media " + hex(b.media) + " is not 0xF0 or 0xF8..0xFF");
  if (b.total_sectors_16 == 0 && b.total_sectors_32 == 0) return bad("BPB_TotSec16 and BPB_TotSec32 are both 0");
  return {};
}

// Reserved area, FATs and root region inside the volume, at least one
// cluster after them, and the cluster count (fsck.fat read_boot: "no space
// for any data clusters").
fsio::Status count_clusters(Layout& l, bool fat32_bpb) {
  const std::uint64_t meta = l.data_start_sector();
  if (meta >= l.total_sectors)
    return bad("BPB_TotSec " + std::to_string(l.total_sectors) +
               " sectors end before the data area, which starts at sector " + std::to_string(meta) + " (" +
               std::to_string(l.reserved_sectors) + " reserved, " + std::to_string(l.num_fats) + " FATs of " +
               std::to_string(l.fat_sectors) + ", " + std::to_string(l.root_dir_sectors()) +
               " root directory sectors)");
  const std::uint64_t count = (l.total_sectors - meta) / l.sectors_per_cluster;
  if (count == 0)
    return bad("no room for a cluster: " + std::to_string(l.total_sectors - meta) + " data sectors, " +
               std::to_string(l.sectors_per_cluster) + " per cluster");
  l.cluster_count = std::uint32_t(count);
  if (fat32_bpb) {
    l.type = FatType::fat32;     // BPB_FATSz16 == 0 marks the FAT32 BPB (fatgen103 p.14)
    if (count > kMaxClusters32)  // kernel: "count of clusters too big"
      return bad(std::to_string(count) + " clusters: FAT32 addresses at most " + std::to_string(kMaxClusters32));
  } else if (count < kFat12Below) {
    l.type = FatType::fat12;
  } else if (count < kFat16Below) {
    l.type = FatType::fat16;
  } else {  // fsck.fat: "Too many clusters for FAT16 filesystem"
    return bad(std::to_string(count) + " clusters with a FAT12/16 BPB (BPB_FATSz16 " + std::to_string(l.fat_sectors) +
               "): FAT16 addresses at most 65524");
  }
  // fsck.fat: "Filesystem has N clusters but only space for M FAT entries"
  // (the kernel silently uses fewer clusters; a writer must not).
  const std::uint64_t need = entries_bytes(l.type, std::uint64_t(l.cluster_count) + 2);
  if (need > l.fat_bytes())
    return bad(std::string(l.type == FatType::fat32 ? "BPB_FATSz32 " : "BPB_FATSz16 ") + std::to_string(l.fat_sectors) +
               " sectors (" + std::to_string(l.fat_bytes()) + " bytes) cannot hold the " +
               std::to_string(l.cluster_count + 2ull) + " entries of " + std::to_string(l.cluster_count) +
               " clusters (" + std::to_string(need) + " bytes)");
  return {};
}

fsio::Status check_fat32(const Fat32Bpb& f, Layout& l, BootSectorInfo& out) {
  if (f.fs_version != 0)  // fatgen103 p.12: newer versions must not be mounted
    return make_error(Errc::unsupported,
                      "boot sector: BPB_FSVer " + hex(f.fs_version, 4) + ": only FAT32 version 0.0 is defined");
  if (l.root_entries != 0)  // fatgen103 p.9: must be 0 on FAT32
    return bad("BPB_RootEntCnt " + std::to_string(l.root_entries) + " on a FAT32 volume (must be 0)");
  if (!l.is_cluster(f.root_cluster))
    return bad("BPB_RootClus " + std::to_string(f.root_cluster) + " is not a cluster (2.." +
               std::to_string(l.cluster_count + 1ull) + ")");
  l.root_cluster = f.root_cluster;
  l.ext_flags = f.ext_flags;
  if (!l.mirrored()) {
    if (l.active_fat() >= l.num_fats)
      return bad("BPB_ExtFlags " + hex(l.ext_flags, 4) + " makes copy " + std::to_string(l.active_fat()) +
                 " active, but BPB_NumFATs is " + std::to_string(l.num_fats));
    out.findings.push_back(
        {Finding::Kind::mirroring_disabled, "BPB_ExtFlags " + hex(l.ext_flags, 4) + ": FAT mirroring is off, copy " +
                                                std::to_string(l.active_fat()) + " is the active one"});
  }
  auto in_reserved = [&](std::uint32_t s) { return s != 0 && s != 0xFFFF && s < l.reserved_sectors; };
  l.fsinfo_sector = f.fs_info_sector;
  if (!in_reserved(f.fs_info_sector) || f.fs_info_sector == f.backup_boot_sector)
    out.findings.push_back(
        {Finding::Kind::fsinfo_missing, "no usable FSInfo sector (BPB_FSInfo " + std::to_string(f.fs_info_sector) +
                                            ", " + std::to_string(l.reserved_sectors) + " reserved sectors)"});
  l.backup_boot_sector = f.backup_boot_sector;
  if (!in_reserved(f.backup_boot_sector))
    out.findings.push_back({Finding::Kind::backup_boot_missing,
                            "no backup boot sector (BPB_BkBootSec " + std::to_string(f.backup_boot_sector) + ", " +
                                std::to_string(l.reserved_sectors) + " reserved sectors)"});
  if (l.cluster_count < kFat16Below)  // fsck.fat warns; mkfs.fat -F 32 makes these
    out.findings.push_back({Finding::Kind::fat32_few_clusters,
                            "FAT32 with " + std::to_string(l.cluster_count) +
                                " clusters, below the 65525 that fatgen103 requires; some systems misread it"});
  return {};
}

void read_extended(const ExtendedBpb& e, BootRecord& r) {
  r.boot_signature = e.boot_signature;
  r.state = e.reserved1;
  std::memset(r.label.data(), ' ', r.label.size());
  std::memset(r.fs_type.data(), ' ', r.fs_type.size());
  if (e.boot_signature == 0x28 || e.boot_signature == kExtendedBootSignature) r.volume_id = e.volume_id;
  if (e.boot_signature == kExtendedBootSignature) {
    std::memcpy(r.label.data(), e.volume_label, 11);
    std::memcpy(r.fs_type.data(), e.fs_type, 8);
  }
}

// Checks that need the whole layout: the device size, and the informational
// findings (Linux's stricter limits, BS_FilSysType).
fsio::Status check_fit(const Layout& l, const BootRecord& r, std::uint64_t available, BootSectorInfo& out) {
  if (l.filesystem_bytes() > available)
    return bad("the volume is " + std::to_string(l.total_sectors) + " sectors (" +
               std::to_string(l.filesystem_bytes()) + " bytes) but the device holds " + std::to_string(available) +
               " bytes from its start: truncated image or wrong partition size");
  if (l.sector_size > 4096)
    out.findings.push_back({Finding::Kind::linux_unmountable, "BPB_BytsPerSec " + std::to_string(l.sector_size) +
                                                                  ": the Linux kernel mounts at most 4096"});
  if (l.root_entries % (l.sector_size / 32))
    out.findings.push_back(
        {Finding::Kind::linux_unmountable, "BPB_RootEntCnt " + std::to_string(l.root_entries) +
                                               " ends mid-sector; the Linux kernel wants a multiple of " +
                                               std::to_string(l.sector_size / 32)});
  const std::string name = fat_type_name(l.type);
  const std::string stored(r.fs_type.begin(), r.fs_type.end());
  if (r.boot_signature == kExtendedBootSignature && stored.rfind("FAT", 0) == 0 && stored.rfind(name, 0) != 0)
    out.findings.push_back({Finding::Kind::fs_type_label, "BS_FilSysType says '" + stored + "' but " +
                                                              std::to_string(l.cluster_count) + " clusters make it " +
                                                              name + " (the count decides)"});
  return {};
}

}  // namespace

fsio::Result<BootSectorInfo> parse_boot_sector(std::span<const std::byte> sector, std::uint64_t available,
                                               std::uint64_t offset_bytes) {
  if (sector.size() < 512)
    return bad("only " + std::to_string(sector.size()) + " bytes; a boot sector has at least 512");
  const std::uint32_t sig = std::to_integer<std::uint32_t>(sector[510]) | std::to_integer<std::uint32_t>(sector[511])
                                                                              << 8;
  if (sig != kBootSignature)  // fatgen103 p.11: 0x55 0xAA at bytes 510-511
    return bad("signature " + hex(sig, 4) + " at byte 510 (expected 0xAA55): not a FAT volume");
  const auto b = fsio::load<Bpb>(sector);
  FSIO_TRY(check_common(b));
  BootSectorInfo out;
  Layout& l = out.layout;
  l.sector_size = b.bytes_per_sector;
  l.sectors_per_cluster = b.sectors_per_cluster;
  l.reserved_sectors = b.reserved_sectors;
  l.num_fats = b.num_fats;
  l.root_entries = b.root_entries;
  // The kernel takes BPB_TotSec16 when it is not 0, else BPB_TotSec32.
  l.total_sectors = b.total_sectors_16 ? std::uint32_t(b.total_sectors_16) : std::uint32_t(b.total_sectors_32);
  l.media = b.media;
  l.heads = b.num_heads;
  l.sectors_per_track = b.sectors_per_track;
  l.hidden_sectors = b.hidden_sectors;
  l.offset_bytes = offset_bytes;
  std::memcpy(out.record.oem_name.data(), b.oem_name, 8);
  const bool fat32_bpb = b.fat_size_16 == 0;
  const auto f32 = fsio::load<Fat32Bpb>(sector, offsetof(BootSector32, fat32));
  if (fat32_bpb && f32.fat_size_32 == 0)  // kernel: "bogus number of FAT sectors"
    return bad("BPB_FATSz16 and BPB_FATSz32 are both 0");
  l.fat_sectors = fat32_bpb ? std::uint32_t(f32.fat_size_32) : std::uint32_t(b.fat_size_16);
  if (!fat32_bpb) {
    // fsck.fat read_boot: "Root directory has zero size", and "doesn't span
    // an integral number of sectors" (of 512 bytes: 16 entries).
    if (l.root_entries == 0) return bad("BPB_RootEntCnt 0 on a FAT12/16 volume: no root directory");
    if (l.root_entries % 16)
      return bad("BPB_RootEntCnt " + std::to_string(l.root_entries) + " is not a multiple of 16 (a 512-byte sector)");
  }
  FSIO_TRY(count_clusters(l, fat32_bpb));
  if (fat32_bpb) FSIO_TRY(check_fat32(f32, l, out));
  const auto ext =
      fsio::load<ExtendedBpb>(sector, fat32_bpb ? offsetof(BootSector32, ext) : offsetof(BootSector16, ext));
  read_extended(ext, out.record);
  l.drive_number = ext.drive_number;
  out.record.fs_version = fat32_bpb ? std::uint16_t(f32.fs_version) : 0;
  FSIO_TRY(check_fit(l, out.record, available, out));
  return out;
}

}  // namespace fat
