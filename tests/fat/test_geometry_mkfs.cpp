// compute_geometry against the real mkfs.fat 4.2: for many sizes and option
// sets, format a sparse image with `mkfs.fat --invariant`, decode its boot
// sector and compare every BPB field, the cluster count (via FSInfo on
// FAT32) and the BPB bytes we would write; when mkfs.fat refuses, we must
// refuse too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>

#include "fat/boot.hpp"
#include "fat/boot_sector.hpp"
#include "fat/fsinfo.hpp"
#include "fat/geometry.hpp"
#include "fat/label.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace test = fsio::test;
using test::TempDir;

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

struct Variant {
  std::string args;
  FormatOptions opts;
};

std::vector<Variant> variants() {
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
  add("-F 32 -s 1", [](FormatOptions& o) { o.fat_type = 32; o.sectors_per_cluster = 1; });
  add("-a", [](FormatOptions& o) { o.no_align = true; });
  add("-f 1", [](FormatOptions& o) { o.num_fats = 1; });
  add("-r 112", [](FormatOptions& o) { o.root_entries = 112; });
  add("-R 8", [](FormatOptions& o) { o.reserved_sectors = 8; });
  add("-s 64", [](FormatOptions& o) { o.sectors_per_cluster = 64; });
  return v;
}

// A few more that exercise the remaining options on fewer sizes.
std::vector<Variant> extra_variants() {
  std::vector<Variant> v;
  auto add = [&](std::string args, auto set) {
    FormatOptions o;
    set(o);
    v.push_back({std::move(args), o});
  };
  add("-F 16 -s 1", [](FormatOptions& o) { o.fat_type = 16; o.sectors_per_cluster = 1; });
  add("-F 32 -R 4", [](FormatOptions& o) { o.fat_type = 32; o.reserved_sectors = 4; });
  add("-F 32 -R 5 -b 3", [](FormatOptions& o) { o.fat_type = 32; o.reserved_sectors = 5; o.backup_boot = 3; });
  add("-F 32 -b 0", [](FormatOptions& o) { o.fat_type = 32; o.backup_boot = 0; });
  add("-F 32 -b 40", [](FormatOptions& o) { o.fat_type = 32; o.backup_boot = 40; });
  add("-g 255/63 -h 2048 -M 0xF0 -D 0x07", [](FormatOptions& o) {
    o.heads = 255; o.sectors_per_track = 63; o.hidden_sectors = 2048; o.media = 0xF0; o.drive_number = 7;
  });
  add("-S 1024 -f 3 -r 1000", [](FormatOptions& o) { o.sector_size = 1024; o.num_fats = 3; o.root_entries = 1000; });
  add("-S 2048 -F 16", [](FormatOptions& o) { o.sector_size = 2048; o.fat_type = 16; });
  add("-s 128 -F 16", [](FormatOptions& o) { o.sectors_per_cluster = 128; o.fat_type = 16; });
  add("-a -F 32 -s 2", [](FormatOptions& o) { o.no_align = true; o.fat_type = 32; o.sectors_per_cluster = 2; });
  add("-n MYDISK", [](FormatOptions& o) { o.label = "MYDISK"; });
  add("-n BAD.NAME", [](FormatOptions& o) { o.label = "BAD.NAME"; });
  add("-F 32 -R 1", [](FormatOptions& o) { o.fat_type = 32; o.reserved_sectors = 1; });
  return v;
}

// The fields we compare, printed so that a difference reads clearly.
std::string fields(const Geometry& g) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s ss=%u spc=%u res=%u fats=%u root=%u total=%u fatlen=%u media=%02x chs=%u/%u hidden=%u "
                "drive=%02x fsinfo=%u backup=%u clusters=%u",
                fat_type_name(g.type), g.sector_size, g.sectors_per_cluster, g.reserved_sectors, g.num_fats,
                g.root_entries, g.total_sectors, g.fat_sectors, g.media, g.heads, g.sectors_per_track,
                g.hidden_sectors, g.drive_number, g.fsinfo_sector, g.backup_boot_sector, g.cluster_count);
  return buf;
}

// Decodes mkfs.fat's boot sector (and FSInfo) into a Geometry.
Geometry decode(const std::string& path) {
  const auto raw = test::read_bytes(path, 0, 512);
  const auto b16 = fsio::load<BootSector16>(raw);
  const auto b32 = fsio::load<BootSector32>(raw);
  Geometry g;
  const Bpb& b = b16.bpb;
  g.sector_size = b.bytes_per_sector;
  g.sectors_per_cluster = b.sectors_per_cluster;
  g.reserved_sectors = b.reserved_sectors;
  g.num_fats = b.num_fats;
  g.root_entries = b.root_entries;
  g.total_sectors = b.total_sectors_16 ? std::uint32_t(b.total_sectors_16) : std::uint32_t(b.total_sectors_32);
  g.media = b.media;
  g.heads = b.num_heads;
  g.sectors_per_track = b.sectors_per_track;
  g.hidden_sectors = b.hidden_sectors;
  const bool fat32 = b.fat_size_16 == 0;
  g.fat_sectors = fat32 ? std::uint32_t(b32.fat32.fat_size_32) : std::uint32_t(b.fat_size_16);
  const ExtendedBpb& ext = fat32 ? b32.ext : b16.ext;
  g.drive_number = ext.drive_number;
  const std::string fs_type(reinterpret_cast<const char*>(ext.fs_type), 5);
  g.type = fs_type == "FAT12" ? FatType::fat12 : fs_type == "FAT16" ? FatType::fat16 : FatType::fat32;
  // fatgen103 p.14: clusters = data sectors / spc.
  const std::uint64_t data = g.total_sectors - g.data_start_sector();
  g.cluster_count = g.sectors_per_cluster ? std::uint32_t(data / g.sectors_per_cluster) : 0;
  if (fat32) {
    g.fsinfo_sector = b32.fat32.fs_info_sector;
    g.backup_boot_sector = b32.fat32.backup_boot_sector;
    const auto info = fsio::load<FsInfo>(test::read_bytes(path, std::uint64_t(g.fsinfo_sector) * g.sector_size, 512));
    if (info.free_count + 1 != g.cluster_count) g.cluster_count = info.free_count + 1;  // mkfs.fat's own count
  }
  return g;
}

struct Tally {
  int agree = 0, disagree = 0, refused_both = 0;
};

// Runs one case; returns "" when we agree with mkfs.fat, else what differs.
std::string compare_one(const TempDir& dir, std::uint64_t size, const Variant& v, Tally& tally) {
  const std::string img = dir / "img";
  test::make_file(img, size);
  const auto r = test::run("mkfs.fat --invariant " + v.args + " " + img);
  const auto ours = compute_geometry(size, v.opts);
  std::string diff;
  if (r.exit_code != 0) {
    if (ours) diff = "mkfs.fat refused (" + r.output + ") but we chose " + fields(*ours);
    else if (ours.error().code != fsio::Errc::invalid_argument) diff = "refused with the wrong code: " + ours.error().context;
    else ++tally.refused_both;
  } else if (!ours) {
    diff = "mkfs.fat made " + fields(decode(img)) + " but we refused: " + ours.error().context;
  } else {
    const Geometry theirs = decode(img);
    if (fields(theirs) != fields(*ours)) {
      diff = "\n  mkfs.fat: " + fields(theirs) + "\n  ours:     " + fields(*ours);
    } else {
      // The BPB bytes themselves (everything before the boot code, and the signature).
      auto label = kNoName;
      if (!v.opts.label.empty()) {
        label.fill(' ');
        std::copy(v.opts.label.begin(), v.opts.label.end(), label.begin());
      }
      const auto mine = build_boot_sector(*ours, 0x1234ABCD, label);
      const auto raw = test::read_bytes(img, 0, 512);
      const std::size_t code = ours->type == FatType::fat32 ? 0x5A : 0x3E;
      for (std::size_t i = 0; i < 512 && diff.empty(); ++i)
        if ((i < code || i >= 510) && raw[i] != mine[i]) diff = "boot sector byte " + std::to_string(i) + " differs";
    }
  }
  ::unlink(img.c_str());
  (diff.empty() ? tally.agree : tally.disagree)++;
  return diff;
}

void run_cases(const std::vector<std::uint64_t>& sizes, const std::vector<Variant>& vs, const char* what) {
  if (!test::have_tool("mkfs.fat")) GTEST_SKIP() << "mkfs.fat (dosfstools) is not installed; geometry not checked";
  TempDir dir;
  Tally tally;
  for (std::uint64_t size : sizes)
    for (const Variant& v : vs) {
      const std::string diff = compare_one(dir, size, v, tally);
      EXPECT_TRUE(diff.empty()) << "size " << size << " mkfs.fat " << v.args << ": " << diff;
    }
  std::cout << "[ geometry ] " << what << ": agree=" << tally.agree << " (of which both refused "
            << tally.refused_both << ") disagree=" << tally.disagree << "\n";
}

TEST(GeometryVsMkfsFat, FloppyAndSmallSizes) {
  run_cases({160 * KiB, 360 * KiB, 720 * KiB, 1200 * KiB, 1440 * KiB, 1440 * KiB + 512, 2880 * KiB, 64 * KiB,
             100 * KiB, 1 * MiB, 4 * MiB, 4 * MiB + 512, 4 * MiB + 1024, 8 * MiB, 16 * MiB, 32 * MiB + 777,
             100 * MiB, 256 * MiB, 260 * MiB, 260 * MiB + KiB},
            variants(), "floppy and small sizes");
}

TEST(GeometryVsMkfsFat, AroundFat32Threshold) {
  run_cases({511 * MiB, 512 * MiB - KiB, 512 * MiB - 512, 512 * MiB, 512 * MiB + 512, 513 * MiB, 600 * MiB,
             1 * GiB + 3584, 2 * GiB - 1},
            variants(), "around 512 MiB");
}

// Where our own model changes FAT type or cluster size, or starts refusing,
// mkfs.fat must change at exactly the same byte count.
TEST(GeometryVsMkfsFat, AtEveryBoundaryOurModelHas) {
  std::vector<std::uint64_t> sizes;
  auto key = [](std::uint64_t size, const FormatOptions& o) {
    auto g = compute_geometry(size, o);
    return g ? int(g->type) * 1000 + int(g->sectors_per_cluster) : -1;
  };
  for (const Variant& v : variants()) {
    std::set<std::uint64_t> found;
    std::uint64_t prev = 64 * KiB;
    for (std::uint64_t s = prev + 32 * KiB; s <= 1 * GiB && found.size() < 10;
         s += s < 64 * MiB ? 32 * KiB : 2 * MiB) {
      if (key(s, v.opts) != key(prev, v.opts)) {
        std::uint64_t lo = prev, hi = s;  // key(lo) != key(hi): find the first KiB that differs
        while (hi - lo > KiB) {
          const std::uint64_t mid = (lo + hi) / 2 / KiB * KiB;
          (key(mid, v.opts) == key(lo, v.opts) ? lo : hi) = mid;
        }
        found.insert(hi);
      }
      prev = s;
    }
    std::vector<std::uint64_t> around;
    for (std::uint64_t b : found) around.insert(around.end(), {b - KiB, b});
    run_cases(around, {v}, ("boundaries for '" + v.args + "'").c_str());
  }
}

TEST(GeometryVsMkfsFat, RandomSizesIncludingUnalignedByteCounts) {
  std::mt19937_64 rng(20240613);
  std::vector<std::uint64_t> sizes;
  for (int i = 0; i < 36; ++i) {
    const double e = std::uniform_real_distribution<double>(16, 31.5)(rng);  // 64 KiB .. ~3 GiB
    std::uint64_t s = std::uint64_t(std::exp2(e));
    if (i % 3 == 0) s = s / KiB * KiB;  // some whole KiB, the rest with odd byte tails
    sizes.push_back(s);
  }
  run_cases(sizes, variants(), "random sizes");
}

TEST(GeometryVsMkfsFat, ExtraOptionCombinations) {
  run_cases({1440 * KiB, 5 * MiB + 512, 20 * MiB, 70 * MiB, 300 * MiB, 700 * MiB, 3 * GiB}, extra_variants(),
            "extra option combinations");
}

TEST(GeometryVsMkfsFat, TensOfGibibytes) {
  auto vs = variants();
  vs.erase(vs.begin() + 5);  // -F 32 -s 1 would write FATs of hundreds of MiB: see the refusal case below
  run_cases({8 * GiB, 8 * GiB + KiB, 16 * GiB + KiB, 32 * GiB, 32 * GiB + KiB, 40 * GiB + 3584, 70 * GiB},
            vs, "tens of GiB");
  run_cases({200 * GiB}, {variants()[5]}, "-F 32 -s 1 beyond 2^28 clusters");
}

TEST(GeometryVsMkfsFat, TebibytesAndTheSectorCap) {
  auto vs = variants();
  run_cases({2 * TiB + 512}, {vs[0]}, "2 TiB default");
  run_cases({4 * TiB, 15 * TiB + 512}, {vs[4]}, "TiB with -S 4096");
  run_cases({3 * TiB}, {vs[1], vs[2], vs[5], vs[10]}, "3 TiB refusals");
}

}  // namespace
}  // namespace fat
