// The arithmetic of compute_geometry (see geometry_rules.hpp and the
// reference notes, section 2). Every quantity is 64-bit and signed where
// mkfs.fat's unsigned arithmetic could wrap: a negative area simply does not
// fit, which is what the wrapped value leads mkfs.fat to conclude too.
#include "fat/geometry_rules.hpp"

#include <algorithm>
#include <cstdio>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

struct Floppy {
  std::uint64_t kib;
  std::uint32_t spt, heads;
  std::uint8_t media;
  std::uint32_t spc, root_entries;
};
// The standard PC floppy formats, matched by size for anything that is not a
// fixed disk (image files included).
constexpr Floppy kFloppies[] = {
    {360, 9, 2, 0xFD, 2, 112},   {720, 9, 2, 0xF9, 2, 112},   {1200, 15, 2, 0xF9, 1, 224},
    {1440, 18, 2, 0xF0, 1, 224}, {2880, 36, 2, 0xF0, 2, 224},
};

// Default CHS when the kernel does not report one. Up to 524288 sectors the
// SD Card Association's File System Specification table; above it BIOS
// LBA-assist translation (63 sectors per track, heads by capacity).
void default_chs(std::uint64_t sectors, std::uint32_t& heads, std::uint32_t& spt) {
  if (sectors <= 524288) {
    heads = sectors <= 32768 ? 2 : sectors <= 65536 ? 4 : sectors <= 262144 ? 8 : 16;
    spt = sectors <= 4096 ? 16 : 32;
    return;
  }
  constexpr std::uint64_t k = 63 * 1024;
  heads = sectors <= 16 * k ? 16 : sectors <= 32 * k ? 32 : sectors <= 64 * k ? 64 : sectors <= 128 * k ? 128 : 255;
  spt = 63;
}

// FAT32 cluster size by logical sectors, after fatgen103 p.20: up to 260 MiB
// 1 sector, to 8 GiB 8, to 16 GiB 16, to 32 GiB 32, above 64 (for 512-byte
// sectors; 4Kn devices get eight times larger clusters, as with mkfs.fat).
std::uint32_t fat32_spc(std::uint64_t sectors) {
  return sectors > 32ull * 1024 * 1024 * 2   ? 64
         : sectors > 16ull * 1024 * 1024 * 2 ? 32
         : sectors > 8ull * 1024 * 1024 * 2  ? 16
         : sectors > 260ull * 1024 * 2       ? 8
                                             : 1;
}

enum class Fit { ok, too_many, too_few, no_room };

struct Trial {
  unsigned bits = 0;
  std::uint32_t spc = 0;
  std::int64_t clusters = 0;
  std::int64_t fat_sectors = 0;
  std::int64_t limit = 0;  // the bound that failed (max or min clusters)
  Fit fit = Fit::no_room;
};

// One FAT width at one cluster size. First estimate how many clusters fit
// when the data area and nfats FATs (two reserved entries each) share
// `fatdata` sectors, size the FAT for that, round it up to a whole cluster
// when aligning, then count the clusters that really remain.
Trial try_width(unsigned bits, std::int64_t fatdata, std::uint32_t spc, std::uint32_t ss, std::uint32_t nfats,
                bool aligned, bool small_fat32_ok) {
  Trial t{bits, spc};
  if (fatdata <= 0) return t;
  const std::int64_t estimate = (2 * fatdata * ss + std::int64_t(nfats) * bits / 2) /
                                (2 * std::int64_t(spc) * ss + std::int64_t(nfats) * bits / 4);
  std::int64_t fat_sectors = cdiv((estimate + 2) * bits, 8 * std::int64_t(ss));
  if (aligned) fat_sectors = cdiv(fat_sectors, spc) * spc;
  t.fat_sectors = fat_sectors;
  const std::int64_t left = fatdata - std::int64_t(nfats) * fat_sectors;
  if (left <= 0) return t;
  t.clusters = left / spc;
  const std::int64_t max_for_type = bits == 12 ? kMaxClusters12 : bits == 16 ? kMaxClusters16 : kMaxClusters32;
  const std::int64_t max = std::min(fat_sectors * ss * 8 / bits, max_for_type);
  if (t.clusters == 0) {
    t.fit = Fit::no_room;
  } else if (t.clusters > max) {
    t.fit = Fit::too_many;
    t.limit = max;
  } else if (bits == 16 && t.clusters < kMinClusters16) {
    t.fit = Fit::too_few;
    t.limit = kMinClusters16;
  } else if (bits == 32 && t.clusters < kMinClusters32 && !small_fat32_ok) {
    t.fit = Fit::too_few;
    t.limit = kMinClusters32;
  } else {
    t.fit = Fit::ok;
  }
  return t;
}

std::string spc_text(std::uint32_t spc, std::uint32_t ss) {
  return std::to_string(spc) + (spc == 1 ? " sector" : " sectors") + " per cluster (" +
         human_bytes(std::uint64_t(spc) * ss) + ")";
}

// Why no cluster size worked, with the numbers of the closest attempt: the
// smallest cluster size when there were too few clusters, the largest when
// there were too many.
fsio::Error explain(const Trial& first, const Trial& last, std::uint32_t ss, std::uint64_t fs_sectors, bool spc_fixed) {
  const std::string type = "FAT" + std::to_string(first.bits);
  const std::string size = human_bytes(fs_sectors * ss) + " (" + std::to_string(fs_sectors) + " sectors)";
  std::string why;
  if (last.fit == Fit::too_many) {
    why = type + " allows at most " + std::to_string(last.limit) + " clusters; " + size + " with " +
          spc_text(last.spc, ss) + " gives " + std::to_string(last.clusters);
    why += spc_fixed ? "; use larger clusters" : "; use a larger FAT type";
  } else if (first.fit == Fit::too_few) {
    why = type + " needs at least " + std::to_string(first.limit) + " clusters; " + size + " with " +
          spc_text(first.spc, ss) + " gives " + std::to_string(first.clusters);
    why += spc_fixed ? "; use smaller clusters" : "; use a smaller FAT type";
  } else {
    why = size + " is too small for " + type + ": the reserved sectors, " + type +
          " tables and root directory leave no room for clusters";
  }
  return make_error(Errc::invalid_argument, why);
}

// The sectors before the FATs, and the volume's sectors the search divides.
struct Areas {
  std::uint64_t num_sectors = 0;
  bool aligned = false;  // reserved area, FATs and root directory rounded to whole clusters
  std::uint32_t reserved = 0;
  std::uint32_t root_entries = 0;
  std::int64_t root_sectors = 0;

  std::int64_t align(std::int64_t sectors, std::uint32_t spc) const {
    return aligned ? cdiv(sectors, spc) * spc : sectors;
  }
};

// The volume's sectors as mkfs.fat counts them, whole tracks when aligning.
void count_track_sectors(std::uint64_t device_bytes, const FormatOptions& o, const InitialParams& p,
                         std::uint64_t& blocks, Areas& a, Geometry& g) {
  std::uint64_t num_sectors = count_sectors(device_bytes, o, g.sector_size, blocks, g);
  bool aligned = !o.no_align;
  // DOS and mtools want whole tracks: drop the partial last track.
  if (aligned) num_sectors = num_sectors / p.sectors_per_track * p.sectors_per_track;
  if (num_sectors <= kNoAlignSectors) aligned = false;  // floppy-sized: never align
  a.num_sectors = num_sectors;
  a.aligned = aligned;
}

// Where the cluster-size search stopped: the size, and each width tried at it.
struct Search {
  std::uint32_t spc = 0;
  Trial t12, t16, t32;
};

// Doubles the cluster size until the wanted width (auto: FAT12 or FAT16) fits.
// BPB_SecPerClus is one byte, so 128 is the largest cluster size tried.
fsio::Result<Search> search_cluster_size(const Areas& a, const InitialParams& p, std::uint32_t spc_asked,
                                         std::uint32_t ss, std::uint32_t nfats) {
  const std::uint32_t max_spc = spc_asked ? spc_asked : 128;
  const bool small32_ok = p.type_by_user && p.fat_type == 32;
  const unsigned want = p.fat_type;
  Search s;
  Trial first{}, last{};
  for (s.spc = spc_asked ? spc_asked : p.spc; s.spc <= max_spc; s.spc <<= 1) {
    const std::int64_t fatdata32 = std::int64_t(a.num_sectors) - a.align(a.reserved, s.spc);
    const std::int64_t fatdata1216 = fatdata32 - a.align(a.root_sectors, s.spc);
    s.t12 = try_width(12, fatdata1216, s.spc, ss, nfats, a.aligned, false);
    s.t16 = try_width(16, fatdata1216, s.spc, ss, nfats, a.aligned, false);
    s.t32 = try_width(32, fatdata32, s.spc, ss, nfats, a.aligned, small32_ok);
    // For messages: the width that was wanted (auto: FAT16 once FAT12 overflows).
    const Trial& mine = want == 12                   ? s.t12
                        : want == 16                 ? s.t16
                        : want == 32                 ? s.t32
                        : s.t12.fit == Fit::too_many ? s.t16
                                                     : s.t12;
    if (first.bits == 0) first = mine;
    last = mine;
    if ((s.t12.fit == Fit::ok && (want == 0 || want == 12)) || (s.t16.fit == Fit::ok && (want == 0 || want == 16)) ||
        (s.t32.fit == Fit::ok && want == 32))
      return s;
  }
  return explain(first, last, ss, a.num_sectors, spc_asked != 0);
}

// The width asked for, or (auto) FAT16 when it fits with more clusters than FAT12.
Trial pick_width(const Search& s, unsigned want) {
  if (want == 0)
    return (s.t16.fit == Fit::ok && (s.t12.fit != Fit::ok || s.t16.clusters > s.t12.clusters)) ? s.t16 : s.t12;
  return want == 12 ? s.t12 : want == 16 ? s.t16 : s.t32;
}

// The chosen layout into g.
void store_layout(const Trial& chosen, std::uint32_t spc, const Areas& a, Geometry& g) {
  const std::uint32_t ss = g.sector_size;
  g.type = chosen.bits == 12 ? FatType::fat12 : chosen.bits == 16 ? FatType::fat16 : FatType::fat32;
  if (g.type == FatType::fat32 && chosen.clusters < kMinClusters32)
    g.warnings.push_back(std::to_string(chosen.clusters) +
                         " clusters is below the FAT32 minimum of 65525; "
                         "some systems will not mount this volume");
  g.sectors_per_cluster = spc;
  g.cluster_count = std::uint32_t(chosen.clusters);
  g.fat_sectors = std::uint32_t(chosen.fat_sectors);
  g.total_sectors = std::uint32_t(a.num_sectors);
  g.aligned = a.aligned;
  // Align the reserved area and the root directory to whole clusters so the
  // data area starts on a cluster boundary (relative to the filesystem).
  g.reserved_sectors = std::uint32_t(a.align(a.reserved, spc));
  g.root_entries = a.aligned ? std::uint32_t(a.align(a.root_sectors, spc) * (ss / 32)) : a.root_entries;
  if (g.type == FatType::fat32) g.root_entries = 0;
}

}  // namespace

void set_drive_fields(const FormatOptions& o, const InitialParams& p, Geometry& g) {
  g.heads = p.heads;
  g.sectors_per_track = p.sectors_per_track;
  g.hidden_sectors = p.hidden;
  g.media = std::uint8_t(o.media ? o.media : p.media);
  g.drive_number = std::uint8_t(o.drive_number ? *o.drive_number : g.media == 0xF8 ? 0x80 : 0x00);
}

std::uint32_t root_entries_for(const FormatOptions& o, const InitialParams& p, bool fat32, Geometry& g) {
  if (!fat32) return p.root_entries;
  // The FAT32 root directory is a cluster chain.
  if (o.root_entries) g.warnings.push_back("root directory entries (-r) have no effect on FAT32");
  return 0;
}

fsio::Result<std::uint32_t> reserved_sectors(const FormatOptions& o, bool fat32) {
  const std::uint32_t reserved = o.reserved_sectors ? o.reserved_sectors : fat32 ? 32 : 1;
  if (fat32 && reserved < 2)  // boot sector + FSInfo (fatgen103 p.12)
    return make_error(
        Errc::invalid_argument,
        "FAT32 needs at least 2 reserved sectors (boot sector and FSInfo); asked for " + std::to_string(reserved));
  return reserved;
}

// FAT32's extra reserved sectors and the final size check.
fsio::Status finish_layout(const FormatOptions& o, std::uint64_t blocks, Geometry& g) {
  if (g.type == FatType::fat32) {
    g.root_cluster = 2;
    g.fsinfo_sector = 1;  // fatgen103 p.12: "usually 1"
    const std::uint32_t res = g.reserved_sectors, info = g.fsinfo_sector;
    if (o.backup_boot) {
      g.backup_boot_sector = *o.backup_boot;
      if (g.backup_boot_sector && g.backup_boot_sector == info)
        return make_error(Errc::invalid_argument, "backup boot sector " + std::to_string(g.backup_boot_sector) +
                                                      " would overwrite the FSInfo sector");
      if (g.backup_boot_sector && g.backup_boot_sector >= res)
        return make_error(Errc::invalid_argument, "backup boot sector " + std::to_string(g.backup_boot_sector) +
                                                      " lies outside the " + std::to_string(res) + " reserved sectors");
    } else {
      // fatgen103 p.12 recommends 6; with fewer reserved sectors take the
      // highest free one that leaves room for the backup FSInfo after it.
      g.backup_boot_sector = (res >= 7 && info != 6)                                   ? 6
                             : (res >= 3 + info && info != res - 2 && info != res - 1) ? res - 2
                             : (res >= 3 && info != res - 1)                           ? res - 1
                                                                                       : 0;
    }
  }
  // mkfs.fat wants at least 32 KiB of data area, counted in whole KiB.
  const std::uint64_t data_start_512 = g.data_start_sector() * (g.sector_size / 512);
  const std::uint64_t data_start_kib = (data_start_512 + 1) / 2;
  if (blocks < data_start_kib + 32)
    return make_error(Errc::invalid_argument, human_bytes(blocks * 1024) + " is too small: the metadata alone takes " +
                                                  human_bytes(g.data_start_sector() * g.sector_size) +
                                                  " and at least 32 KiB must remain for data");
  return {};
}

std::string human_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  std::uint64_t whole = bytes;
  while (u < 5 && whole >= 1024 && whole % 1024 == 0) {
    whole /= 1024;
    ++u;
  }
  if (whole < 1024 * 10 || u == 5) return std::to_string(whole) + " " + units[u];
  double v = double(bytes);
  u = 0;
  while (u < 5 && v >= 1024) {
    v /= 1024;
    ++u;
  }
  char out[32];
  std::snprintf(out, sizeof out, "%.1f %s", v, units[u]);
  return out;
}

fsio::Result<InitialParams> initial_params(std::uint64_t device_bytes, const FormatOptions& o, const DeviceFacts& facts,
                                           std::uint32_t ss) {
  InitialParams p;
  if (facts.heads > 0 && facts.sectors_per_track > 0) {  // HDIO_GETGEO answered
    p.heads = facts.heads;
    p.sectors_per_track = facts.sectors_per_track;
  } else {
    const std::uint64_t sectors = facts.disk_sectors
                                      ? *facts.disk_sectors
                                      : device_bytes / (facts.logical_sector_size ? facts.logical_sector_size : ss);
    default_chs(sectors, p.heads, p.sectors_per_track);
  }
  if (!facts.fixed_disk) {
    for (const Floppy& f : kFloppies) {
      if (device_bytes / 1024 != f.kib) continue;
      p.heads = f.heads;
      p.sectors_per_track = f.spt;
      p.media = f.media;
      p.spc = f.spc;
      p.root_entries = f.root_entries;
    }
  }
  if (o.heads) {  // -g wins over both the kernel and the floppy table
    p.heads = o.heads;
    p.sectors_per_track = o.sectors_per_track;
  }
  p.fat_type = o.fat_type;
  p.type_by_user = o.fat_type != 0;
  if (p.fat_type == 0 && device_bytes >= kAutoFat32Bytes) p.fat_type = 32;
  if (p.fat_type == 32) p.spc = fat32_spc(device_bytes / ss);
  if (o.hidden_sectors) p.hidden = *o.hidden_sectors;
  else if (facts.partition_start && *facts.partition_start + o.offset_sectors <= 0xFFFFFFFFu)
    p.hidden = std::uint32_t(*facts.partition_start + o.offset_sectors);
  if (o.root_entries) p.root_entries = o.root_entries;
  return p;
}

std::uint64_t count_sectors(std::uint64_t device_bytes, const FormatOptions& o, std::uint32_t ss, std::uint64_t& blocks,
                            Geometry& g) {
  // Whole KiB blocks plus the sectors of a partial last KiB, capped at
  // BPB_TotSec32's 2^32 - 1.
  const std::uint64_t avail = device_bytes - g.offset_bytes;
  blocks = o.blocks ? o.blocks : avail / 1024;
  const std::uint64_t orphaned = (avail % 1024) / ss;
  std::uint64_t num_sectors = blocks * 1024 / ss + orphaned;
  if (num_sectors > 0xFFFFFFFFull) {
    g.warnings.push_back("target too large: only the first 2^32-1 sectors (" + human_bytes(0xFFFFFFFFull * ss) +
                         ") are used");
    num_sectors = 0xFFFFFFFFull;
    blocks = 0xFFFFFFFFull * ss / 1024;
  }
  return num_sectors;
}

fsio::Status choose_layout(std::uint64_t device_bytes, const FormatOptions& o, const InitialParams& p,
                           std::uint32_t spc_asked, Geometry& g) {
  g.num_fats = o.num_fats;
  set_drive_fields(o, p, g);
  Areas a;
  a.root_entries = root_entries_for(o, p, p.fat_type == 32, g);
  a.reserved = FSIO_TRY(reserved_sectors(o, p.fat_type == 32));
  std::uint64_t blocks = 0;
  count_track_sectors(device_bytes, o, p, blocks, a, g);
  a.root_sectors = cdiv(std::int64_t(a.root_entries) * 32, g.sector_size);
  const Search s = FSIO_TRY(search_cluster_size(a, p, spc_asked, g.sector_size, o.num_fats));
  store_layout(pick_width(s, p.fat_type), s.spc, a, g);
  return finish_layout(o, blocks, g);
}

}  // namespace fat
