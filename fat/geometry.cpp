// compute_geometry: mkfs.fat 4.2's layout choices, re-derived from observed
// behaviour and the reference notes (not from its code). The order of the
// steps follows the reference: options -> CHS and media -> FAT type and the
// initial cluster size -> sector count -> the cluster-size search -> final
// alignment of the reserved area and root directory.
#include "fat/geometry.hpp"

#include "fat/label.hpp"
#include "fat/geometry_rules.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

fsio::Status check_options(const FormatOptions& o) {
  auto bad = [](std::string what) { return make_error(Errc::invalid_argument, std::move(what)); };
  if (o.fat_type != 0 && o.fat_type != 12 && o.fat_type != 16 && o.fat_type != 32)
    return bad("FAT type " + std::to_string(o.fat_type) + " is not 12, 16 or 32");
  if (o.sectors_per_cluster && (!power_of_two(o.sectors_per_cluster) || o.sectors_per_cluster > 128))
    return bad("sectors per cluster " + std::to_string(o.sectors_per_cluster) + " is not a power of two from 1 to 128");
  if (o.sector_size && (!power_of_two(o.sector_size) || o.sector_size < 512 || o.sector_size > 32768))
    return bad("logical sector size " + std::to_string(o.sector_size) + " is not a power of two from 512 to 32768");
  if (o.num_fats < 1 || o.num_fats > 4) return bad("number of FATs " + std::to_string(o.num_fats) + " is not 1 to 4");
  if (o.root_entries && (o.root_entries < 16 || o.root_entries > 32768))
    return bad("root directory entries " + std::to_string(o.root_entries) + " is not 16 to 32768");
  if (o.reserved_sectors > 0xFFFF)
    return bad("reserved sectors " + std::to_string(o.reserved_sectors) + " is more than 65535");
  if (o.media && o.media != 0xF0 && (o.media < 0xF8 || o.media > 0xFF))
    return bad("media byte " + std::to_string(o.media) + " is not 0xF0 or 0xF8..0xFF");
  if (o.drive_number && *o.drive_number > 0xFF)
    return bad("drive number " + std::to_string(*o.drive_number) + " is more than 255");
  if (o.backup_boot && *o.backup_boot > 0xFFFF)
    return bad("backup boot sector " + std::to_string(*o.backup_boot) + " is more than 65535");
  if ((o.heads == 0) != (o.sectors_per_track == 0) || o.heads > 0xFFFF || o.sectors_per_track > 0xFFFF)
    return bad("geometry " + std::to_string(o.heads) + "/" + std::to_string(o.sectors_per_track) +
               " needs both heads and sectors per track, each 1 to 65535");
  return {};
}

// -s and the byte-sized alternative must agree on one sectors-per-cluster.
fsio::Result<std::uint32_t> user_spc(const FormatOptions& o, std::uint32_t ss) {
  if (!o.cluster_size) return std::uint32_t(o.sectors_per_cluster);
  const std::uint64_t spc = o.cluster_size / ss;
  if (o.cluster_size % ss || !power_of_two(spc) || spc > 128)
    return make_error(Errc::invalid_argument, "cluster size " + std::to_string(o.cluster_size) +
                                                  " is not 1 to 128 sectors of " + std::to_string(ss) + " bytes");
  if (o.sectors_per_cluster && o.sectors_per_cluster != spc)
    return make_error(Errc::invalid_argument, "cluster size " + std::to_string(o.cluster_size) + " bytes contradicts " +
                                                  std::to_string(o.sectors_per_cluster) + " sectors per cluster");
  return std::uint32_t(spc);
}

}  // namespace

std::uint32_t logical_sector_size(const FormatOptions& o, const DeviceFacts& facts) {
  if (facts.logical_sector_size && o.sector_size < facts.logical_sector_size) return facts.logical_sector_size;
  return o.sector_size ? o.sector_size : 512;
}

fsio::Result<Geometry> compute_geometry(std::uint64_t device_bytes, const FormatOptions& o, const DeviceFacts& facts) {
  FSIO_TRY(check_options(o));
  Geometry g;
  auto label = FSIO_TRY(parse_label(o.label, o.uppercase_label, o.label_in_codepage));
  g.warnings = label.warnings;

  const std::uint32_t ss = logical_sector_size(o, facts);
  if (o.sector_size && ss != o.sector_size)
    g.warnings.push_back("sector size raised to " + std::to_string(ss) + ", the device's logical sector size");
  if (ss > 4096)
    g.warnings.push_back("sector size " + std::to_string(ss) +
                         " > 4096 is non-standard; the filesystem may not be usable");
  g.sector_size = ss;
  const std::uint32_t spc_asked = FSIO_TRY(user_spc(o, ss));

  // Range checks come before the multiplications they guard.
  if (device_bytes == 0 || o.offset_sectors >= device_bytes / ss)
    return make_error(Errc::invalid_argument,
                      "offset of " + std::to_string(o.offset_sectors) + " sectors is at or beyond the end of the " +
                          std::to_string(device_bytes) + "-byte target (" + std::to_string(device_bytes / ss) +
                          " sectors of " + std::to_string(ss) + " bytes)");
  const std::uint64_t offset_bytes = o.offset_sectors * ss;
  g.offset_bytes = offset_bytes;
  if (o.blocks > (device_bytes - offset_bytes) / 1024)
    return make_error(Errc::invalid_argument,
                      "a size of " + std::to_string(o.blocks) + " KiB is more than the " +
                          std::to_string((device_bytes - offset_bytes) / 1024) +
                          " KiB the target holds after the offset; a filesystem larger than its device is broken");

  auto params = FSIO_TRY(initial_params(device_bytes, o, facts, ss));
  g.auto_fat32 = o.fat_type == 0 && params.fat_type == 32;
  if (o.atari) FSIO_TRY(choose_atari_layout(device_bytes, o, params, o.sector_size || facts.logical_sector_size, g));
  else FSIO_TRY(choose_layout(device_bytes, o, params, spc_asked, g));
  // mkfs.fat --mbr=auto: Windows only recognises a whole fixed disk that
  // carries a partition table, so put a one-partition table in sector 0.
  g.write_mbr = o.mbr == FormatOptions::Mbr::yes ||
                (o.mbr == FormatOptions::Mbr::automatic && facts.block_device && facts.fixed_disk && facts.whole_disk);
  return g;
}

}  // namespace fat
