// The Atari variant (mkfs.fat -A, --variant=atari): GEMDOS's rules instead
// of the cluster-size search. Re-derived from mkfs.fat 4.2's observed output
// and checked against it by tests/fat/test_geometry_mkfs.cpp:
//
// - GEMDOS counts at most 65531 logical sectors (TOS before 1.04: 32765),
//   and wants 2-sector clusters; so the cluster size stays 2 (or -s) and,
//   unless the sector size was fixed (-S, or a block device's), the logical
//   sector doubles until the volume fits, up to 16 KiB.
// - FAT12 for the floppy sector counts (1440, 2400, 2880, 5760: 720 KiB to
//   2.88 MB at 512 bytes), FAT16 otherwise; -F still wins, and mkfs.fat's
//   own FAT32 choice from 512 MiB applies here too.
// - Nothing is aligned to clusters (only whole tracks, unless -a).
// - The FAT must hold the clusters plus two, within the width's range
//   ((1 << bits) - 16 entries, FAT32 268435446); if not, double the sector.
// - hidden sectors are a 16-bit field on FAT12/16.
#include "fat/geometry_rules.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kGemdosMaxSectors = 65531;
constexpr std::uint64_t kOldGemdosMaxSectors = 32765;
constexpr std::uint32_t kGemdosMaxSectorSize = 16384;

bool floppy_sectors(std::uint64_t n) { return n == 1440 || n == 2400 || n == 2880 || n == 5760; }

fsio::Error refuse(std::string why) { return make_error(Errc::invalid_argument, std::move(why)); }

struct AtariFit {
  std::int64_t clusters = 0;
  std::int64_t fat_sectors = 0;
  bool ok = false;
};

// One sector size: estimate the clusters that fit beside nfats FATs (two
// reserved entries each), size the FAT for them, recount.
AtariFit try_sector_size(std::int64_t num_sectors, std::uint32_t ss, unsigned bits, std::uint32_t spc,
                         std::uint32_t nfats, std::uint32_t reserved, std::uint32_t root_entries) {
  AtariFit f;
  const std::int64_t fatdata = num_sectors - cdiv(std::int64_t(root_entries) * 32, ss) - reserved;
  const std::int64_t entry_bytes_x8 = std::int64_t(nfats) * bits;  // nfats entries, in bits
  std::int64_t clusters =
      (2 * (fatdata * ss - 2 * entry_bytes_x8 / 8)) / (2 * (std::int64_t(spc) * ss + entry_bytes_x8 / 8));
  if (clusters < 0) clusters = 0;
  f.fat_sectors = cdiv((clusters + 2) * bits / 8, ss);
  f.clusters = (fatdata - std::int64_t(nfats) * f.fat_sectors) / spc;
  const std::int64_t max_entries = f.fat_sectors * ss * 8 / bits;
  const std::int64_t width_limit = bits == 32 ? 268435446 : (std::int64_t(1) << bits) - 0x10;
  f.ok = f.clusters > 0 && max_entries <= width_limit && f.clusters <= max_entries - 2;
  return f;
}

// The volume in logical sectors: each doubling of the size halves the count.
struct LogicalSectors {
  std::uint64_t count = 0;
  std::uint32_t size = 0;
  void double_size() {
    count >>= 1;
    size <<= 1;
  }
};

// Without a fixed sector size: the sector doubles until GEMDOS can count them.
fsio::Status fit_gemdos_count(std::uint64_t device_bytes, LogicalSectors& s) {
  while (s.count > kGemdosMaxSectors) s.double_size();
  if (s.size > kGemdosMaxSectorSize)
    return refuse(std::to_string(device_bytes) + " bytes: the Atari variant would need sectors of " +
                  std::to_string(s.size) + " bytes, more than the 16 KiB GEMDOS can use");
  return {};
}

// The FAT for `bits`; the sector doubles (unless fixed) until the width can number the clusters.
fsio::Result<AtariFit> fit_clusters(LogicalSectors& s, bool ss_fixed, unsigned bits, std::uint32_t spc,
                                    std::uint32_t nfats, std::uint32_t reserved, std::uint32_t root_entries) {
  for (;;) {
    const AtariFit fit = try_sector_size(std::int64_t(s.count), s.size, bits, spc, nfats, reserved, root_entries);
    if (fit.ok) return fit;
    if (ss_fixed)
      return refuse("with " + std::to_string(s.size) + "-byte sectors the Atari variant's FAT" + std::to_string(bits) +
                    " cannot number the clusters of " + std::to_string(s.count) + " sectors");
    s.double_size();
    if (s.size > kGemdosMaxSectorSize)
      return refuse("the Atari variant would need sectors larger than 16 KiB, which GEMDOS cannot use");
  }
}

}  // namespace

fsio::Status choose_atari_layout(std::uint64_t device_bytes, const FormatOptions& o, const InitialParams& p,
                                 bool ss_fixed, Geometry& g) {
  g.atari = true;
  g.num_fats = o.num_fats;
  set_drive_fields(o, p, g);

  std::uint64_t blocks = 0;
  LogicalSectors s{count_sectors(device_bytes, o, g.sector_size, blocks, g), g.sector_size};
  if (!o.no_align) s.count = s.count / p.sectors_per_track * p.sectors_per_track;
  const unsigned bits = p.fat_type ? p.fat_type : floppy_sectors(s.count) ? 12 : 16;
  if (bits != 32 && p.hidden > 0xFFFF)
    return refuse(std::to_string(p.hidden) + " hidden sectors do not fit the Atari variant's 16-bit field");
  const std::uint32_t root_entries = root_entries_for(o, p, bits == 32, g);
  const std::uint32_t reserved = FSIO_TRY(reserved_sectors(o, bits == 32));
  const std::uint32_t spc = o.sectors_per_cluster ? o.sectors_per_cluster : 2;

  if (!ss_fixed) FSIO_TRY(fit_gemdos_count(device_bytes, s));
  const AtariFit fit = FSIO_TRY(fit_clusters(s, ss_fixed, bits, spc, o.num_fats, reserved, root_entries));
  if (s.count >= kGemdosMaxSectors)
    return refuse(std::to_string(s.count) + " sectors: GEMDOS handles fewer than " + std::to_string(kGemdosMaxSectors));
  if (s.count >= kOldGemdosMaxSectors) g.needs_tos_104 = true;

  g.type = bits == 12 ? FatType::fat12 : bits == 16 ? FatType::fat16 : FatType::fat32;
  g.sector_size = s.size;
  g.sectors_per_cluster = spc;
  g.cluster_count = std::uint32_t(fit.clusters);
  g.fat_sectors = std::uint32_t(fit.fat_sectors);
  g.total_sectors = std::uint32_t(s.count);
  g.aligned = false;
  g.reserved_sectors = reserved;
  g.root_entries = root_entries;
  return finish_layout(o, blocks, g);
}

}  // namespace fat
