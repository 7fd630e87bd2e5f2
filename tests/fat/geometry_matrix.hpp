// The geometry matrix: the sizes and option sets on which compute_geometry
// is compared with the real mkfs.fat (test_geometry_mkfs.cpp), and on which
// mkfat's whole images are compared with mkfs.fat's (test_image_mkfs.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fat/geometry.hpp"

namespace fat::matrix {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

struct Variant {
  std::string args;
  FormatOptions opts;
};

inline std::vector<Variant> variants() {
  std::vector<Variant> v;
  auto add = [&](std::string args, auto set) {
    FormatOptions o;
    set(o);
    v.push_back({std::move(args), o});
  };
  add("", [](FormatOptions&) {});
  add("-F 12", [](FormatOptions& o) { o.fat_type = 12; });
  add("-F 16", [](FormatOptions& o) { o.fat_type = 16; });
  add("-F 32", [](FormatOptions& o) { o.fat_type = 32; });
  add("-S 4096", [](FormatOptions& o) { o.sector_size = 4096; });
  add("-F 32 -s 1", [](FormatOptions& o) {
    o.fat_type = 32;
    o.sectors_per_cluster = 1;
  });
  add("-a", [](FormatOptions& o) { o.no_align = true; });
  add("-f 1", [](FormatOptions& o) { o.num_fats = 1; });
  add("-r 112", [](FormatOptions& o) { o.root_entries = 112; });
  add("-R 8", [](FormatOptions& o) { o.reserved_sectors = 8; });
  add("-s 64", [](FormatOptions& o) { o.sectors_per_cluster = 64; });
  return v;
}

// A few more that exercise the remaining options on fewer sizes.
inline std::vector<Variant> extra_variants() {
  std::vector<Variant> v;
  auto add = [&](std::string args, auto set) {
    FormatOptions o;
    set(o);
    v.push_back({std::move(args), o});
  };
  add("-F 16 -s 1", [](FormatOptions& o) {
    o.fat_type = 16;
    o.sectors_per_cluster = 1;
  });
  add("-F 32 -R 4", [](FormatOptions& o) {
    o.fat_type = 32;
    o.reserved_sectors = 4;
  });
  add("-F 32 -R 5 -b 3", [](FormatOptions& o) {
    o.fat_type = 32;
    o.reserved_sectors = 5;
    o.backup_boot = 3;
  });
  add("-F 32 -b 0", [](FormatOptions& o) {
    o.fat_type = 32;
    o.backup_boot = 0;
  });
  add("-F 32 -b 40", [](FormatOptions& o) {
    o.fat_type = 32;
    o.backup_boot = 40;
  });
  add("-g 255/63 -h 2048 -M 0xF0 -D 0x07", [](FormatOptions& o) {
    o.heads = 255;
    o.sectors_per_track = 63;
    o.hidden_sectors = 2048;
    o.media = 0xF0;
    o.drive_number = 7;
  });
  add("-S 1024 -f 3 -r 1000", [](FormatOptions& o) {
    o.sector_size = 1024;
    o.num_fats = 3;
    o.root_entries = 1000;
  });
  add("-S 2048 -F 16", [](FormatOptions& o) {
    o.sector_size = 2048;
    o.fat_type = 16;
  });
  add("-s 128 -F 16", [](FormatOptions& o) {
    o.sectors_per_cluster = 128;
    o.fat_type = 16;
  });
  add("-a -F 32 -s 2", [](FormatOptions& o) {
    o.no_align = true;
    o.fat_type = 32;
    o.sectors_per_cluster = 2;
  });
  add("-n MYDISK", [](FormatOptions& o) { o.label = "MYDISK"; });
  add("-n BAD.NAME", [](FormatOptions& o) { o.label = "BAD.NAME"; });
  add("-F 32 -R 1", [](FormatOptions& o) {
    o.fat_type = 32;
    o.reserved_sectors = 1;
  });
  return v;
}

// The Atari variant (-A) on the same sizes: GEMDOS's rules.
inline std::vector<Variant> atari_variants() {
  std::vector<Variant> v;
  auto add = [&](std::string args, auto set) {
    FormatOptions o;
    o.atari = true;
    set(o);
    v.push_back({"-A " + std::move(args), o});
  };
  add("", [](FormatOptions&) {});
  add("-F 12", [](FormatOptions& o) { o.fat_type = 12; });
  add("-F 16", [](FormatOptions& o) { o.fat_type = 16; });
  add("-F 32", [](FormatOptions& o) { o.fat_type = 32; });
  add("-S 2048", [](FormatOptions& o) { o.sector_size = 2048; });
  add("-s 4", [](FormatOptions& o) { o.sectors_per_cluster = 4; });
  add("-a -f 1", [](FormatOptions& o) {
    o.no_align = true;
    o.num_fats = 1;
  });
  add("-r 64 -n ST", [](FormatOptions& o) {
    o.root_entries = 64;
    o.label = "ST";
  });
  return v;
}

struct Group {
  const char* name;
  std::vector<std::uint64_t> sizes;
  std::vector<Variant> variants;
};

inline std::vector<std::uint64_t> floppy_and_small_sizes() {
  return {160 * KiB, 360 * KiB,      720 * KiB, 1200 * KiB, 1440 * KiB,    1440 * KiB + 512, 2880 * KiB,
          64 * KiB,  100 * KiB,      1 * MiB,   4 * MiB,    4 * MiB + 512, 4 * MiB + 1024,   8 * MiB,
          16 * MiB,  32 * MiB + 777, 100 * MiB, 256 * MiB,  260 * MiB,     260 * MiB + KiB};
}
inline std::vector<std::uint64_t> fat32_threshold_sizes() {
  return {511 * MiB, 512 * MiB - KiB, 512 * MiB - 512, 512 * MiB,  512 * MiB + 512,
          513 * MiB, 600 * MiB,       1 * GiB + 3584,  2 * GiB - 1};
}
inline std::vector<std::uint64_t> random_sizes() {
  std::mt19937_64 rng(20240613);
  std::vector<std::uint64_t> sizes;
  for (int i = 0; i < 36; ++i) {
    const double e = std::uniform_real_distribution<double>(16, 31.5)(rng);  // 64 KiB .. ~3 GiB
    std::uint64_t s = std::uint64_t(std::exp2(e));
    if (i % 3 == 0) s = s / KiB * KiB;  // some whole KiB, the rest with odd byte tails
    sizes.push_back(s);
  }
  return sizes;
}
inline std::vector<std::uint64_t> extra_sizes() {
  return {1440 * KiB, 5 * MiB + 512, 20 * MiB, 70 * MiB, 300 * MiB, 700 * MiB, 3 * GiB};
}
inline std::vector<std::uint64_t> tens_of_gib_sizes() {
  return {8 * GiB, 8 * GiB + KiB, 16 * GiB + KiB, 32 * GiB, 32 * GiB + KiB, 40 * GiB + 3584, 70 * GiB};
}

// Where our own model changes FAT type or cluster size, or starts refusing,
// for one option set: the first KiB that differs and the one before.
inline std::vector<std::uint64_t> boundary_sizes(const FormatOptions& o) {
  auto key = [&](std::uint64_t size) {
    auto g = compute_geometry(size, o);
    return g ? int(g->type) * 1000 + int(g->sectors_per_cluster) : -1;
  };
  std::set<std::uint64_t> found;
  std::uint64_t prev = 64 * KiB;
  for (std::uint64_t s = prev + 32 * KiB; s <= 1 * GiB && found.size() < 10; s += s < 64 * MiB ? 32 * KiB : 2 * MiB) {
    if (key(s) != key(prev)) {
      std::uint64_t lo = prev, hi = s;  // key(lo) != key(hi): find the first KiB that differs
      while (hi - lo > KiB) {
        const std::uint64_t mid = (lo + hi) / 2 / KiB * KiB;
        (key(mid) == key(lo) ? lo : hi) = mid;
      }
      found.insert(hi);
    }
    prev = s;
  }
  std::vector<std::uint64_t> around;
  for (std::uint64_t b : found) around.insert(around.end(), {b - KiB, b});
  return around;
}

}  // namespace fat::matrix
