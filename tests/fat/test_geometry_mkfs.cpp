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
#include "tests/fat/geometry_matrix.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;
using support::TempDir;

using namespace fat::matrix;

// The fields we compare, printed so that a difference reads clearly.
std::string fields(const Geometry& g) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s%s ss=%u spc=%u res=%u fats=%u root=%u total=%u fatlen=%u media=%02x chs=%u/%u hidden=%u "
                "drive=%02x fsinfo=%u backup=%u clusters=%u",
                g.atari ? "atari " : "", fat_type_name(g.type), g.sector_size, g.sectors_per_cluster,
                g.reserved_sectors, g.num_fats, g.root_entries, g.total_sectors, g.fat_sectors, g.media, g.heads,
                g.sectors_per_track, g.hidden_sectors, g.drive_number, g.fsinfo_sector, g.backup_boot_sector,
                g.cluster_count);
  return buf;
}

// Decodes mkfs.fat's boot sector (and FSInfo) into a Geometry.
Geometry decode(const std::string& path) {
  const auto raw = support::read_bytes(path, 0, 512);
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
  g.atari = raw[0] == std::byte{0x60};
  if (g.atari && !fat32) {
    // No BS_FilSysType: FAT[2]'s first byte is 0x00 in a fresh FAT12
    // (F8 FF FF 00) and 0xFF in FAT16's second FAT[1] byte (F8 FF FF FF).
    const auto fat = support::read_bytes(path, std::uint64_t(g.reserved_sectors) * g.sector_size, 4);
    g.type = fat[3] == std::byte{0} ? FatType::fat12 : FatType::fat16;
  }
  // fatgen103 p.14: clusters = data sectors / spc.
  const std::uint64_t data = g.total_sectors - g.data_start_sector();
  g.cluster_count = g.sectors_per_cluster ? std::uint32_t(data / g.sectors_per_cluster) : 0;
  if (fat32) {
    g.fsinfo_sector = b32.fat32.fs_info_sector;
    g.backup_boot_sector = b32.fat32.backup_boot_sector;
    const auto info =
        fsio::load<FsInfo>(support::read_bytes(path, std::uint64_t(g.fsinfo_sector) * g.sector_size, 512));
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
  support::make_file(img, size);
  const auto r = support::run("mkfs.fat --invariant " + v.args + " " + img);
  const auto ours = compute_geometry(size, v.opts);
  std::string diff;
  if (r.exit_code != 0) {
    if (ours) diff = "mkfs.fat refused (" + r.output + ") but we chose " + fields(*ours);
    else if (ours.error().code != fsio::Errc::invalid_argument)
      diff = "refused with the wrong code: " + ours.error().context;
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
      const auto raw = support::read_bytes(img, 0, 512);
      const ByteSpan code = boot_code_region(*ours);
      for (std::size_t i = 0; i < 512 && diff.empty(); ++i)
        if ((i < code.begin || i >= code.end) && raw[i] != mine[i])
          diff = "boot sector byte " + std::to_string(i) + " differs";
    }
  }
  ::unlink(img.c_str());
  (diff.empty() ? tally.agree : tally.disagree)++;
  return diff;
}

void run_cases(const std::vector<std::uint64_t>& sizes, const std::vector<Variant>& vs, const char* what) {
  if (!support::have_tool("mkfs.fat")) GTEST_SKIP() << "mkfs.fat (dosfstools) is not installed; geometry not checked";
  TempDir dir;
  Tally tally;
  for (std::uint64_t size : sizes)
    for (const Variant& v : vs) {
      const std::string diff = compare_one(dir, size, v, tally);
      EXPECT_TRUE(diff.empty()) << "size " << size << " mkfs.fat " << v.args << ": " << diff;
    }
  std::cout << "[ geometry ] " << what << ": agree=" << tally.agree << " (of which both refused " << tally.refused_both
            << ") disagree=" << tally.disagree << "\n";
}

TEST(GeometryVsMkfsFat, FloppyAndSmallSizes) {
  run_cases(floppy_and_small_sizes(), variants(), "floppy and small sizes");
}

TEST(GeometryVsMkfsFat, AroundFat32Threshold) { run_cases(fat32_threshold_sizes(), variants(), "around 512 MiB"); }

// Where our own model changes FAT type or cluster size, or starts refusing,
// mkfs.fat must change at exactly the same byte count.
TEST(GeometryVsMkfsFat, AtEveryBoundaryOurModelHas) {
  for (const Variant& v : variants())
    run_cases(boundary_sizes(v.opts), {v}, ("boundaries for '" + v.args + "'").c_str());
}

TEST(GeometryVsMkfsFat, RandomSizesIncludingUnalignedByteCounts) {
  run_cases(random_sizes(), variants(), "random sizes");
}

TEST(GeometryVsMkfsFat, ExtraOptionCombinations) {
  run_cases(extra_sizes(), extra_variants(), "extra option combinations");
}

TEST(GeometryVsMkfsFat, TensOfGibibytes) {
  auto vs = variants();
  vs.erase(vs.begin() + 5);  // -F 32 -s 1 would write FATs of hundreds of MiB: see the refusal case below
  run_cases(tens_of_gib_sizes(), vs, "tens of GiB");
  run_cases({200 * GiB}, {variants()[5]}, "-F 32 -s 1 beyond 2^28 clusters");
}

TEST(GeometryVsMkfsFat, TebibytesAndTheSectorCap) {
  auto vs = variants();
  run_cases({2 * TiB + 512}, {vs[0]}, "2 TiB default");
  run_cases({4 * TiB, 15 * TiB + 512}, {vs[4]}, "TiB with -S 4096");
  run_cases({3 * TiB}, {vs[1], vs[2], vs[5], vs[10]}, "3 TiB refusals");
}

// The Atari variant on the same sizes: GEMDOS's FAT type, 2-sector
// clusters, logical sectors doubled to stay under 65531, its refusals, and
// the whole boot sector (it has no boot code).
TEST(GeometryVsMkfsFat, AtariOnTheSameSizes) {
  const auto vs = atari_variants();
  run_cases(floppy_and_small_sizes(), vs, "atari: floppy and small sizes");
  run_cases(fat32_threshold_sizes(), vs, "atari: around 512 MiB");
  run_cases(random_sizes(), vs, "atari: random sizes");
  run_cases(extra_sizes(), vs, "atari: extra sizes");
  for (const Variant& v : vs) run_cases(boundary_sizes(v.opts), {v}, ("atari boundaries for '" + v.args + "'").c_str());
  run_cases(tens_of_gib_sizes(), {vs[0], vs[3]}, "atari: tens of GiB");
}

}  // namespace
}  // namespace fat
