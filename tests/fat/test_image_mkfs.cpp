// mkfat's whole image against the real mkfs.fat 4.2's: for every case of
// the geometry matrix (geometry_matrix.hpp: FAT12, FAT16, FAT32, -S 4096
// and the other option sets, floppy to TiB sizes, the Atari variant), as
// is, with --mbr=y and with --offset=2048, both tools run with --invariant
// on a fresh sparse image; where mkfs.fat succeeds mkfat must too, and the
// two files must be equal byte for byte outside the boot-code region of the
// boot sector and its FAT32 backup (fat/FORMAT.md, "Boot code"), which
// holds each tool's own code and message. Where mkfs.fat refuses, mkfat
// must refuse too.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "fat/boot.hpp"
#include "tests/fat/geometry_matrix.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;
using namespace fat::matrix;

struct Region {
  std::uint64_t begin, end;
};

// mkfs.fat's boot code region in the image at `base` (and in the FAT32
// backup boot sector): 0x3E or 0x5A to 510, or to 440 under an MBR; none
// in the Atari variant.
std::vector<Region> code_regions(const std::string& path, std::uint64_t base) {
  const auto bs = support::read_bytes(path, base, 512);
  auto u8 = [&](std::size_t i) { return std::uint8_t(bs[i]); };
  auto u16 = [&](std::size_t i) { return unsigned(u8(i) | u8(i + 1) << 8); };
  if (u8(0) == 0x60) return {};
  const bool fat32 = u16(0x16) == 0;
  bool mbr = false;
  for (std::size_t i = 446; i < 510; ++i) mbr |= u8(i) != 0;
  const std::uint64_t begin = fat32 ? 0x5A : 0x3E, end = mbr ? 440 : 510;
  std::vector<Region> out{{base + begin, base + end}};
  if (fat32 && u16(0x32)) {
    const std::uint64_t backup = base + std::uint64_t(u16(0x32)) * u16(0x0B);
    out.push_back({backup + begin, backup + end});
  }
  return out;
}

// "" when equal outside the regions, else where they differ. Reads only the
// data extents of either file.
std::string compare(const std::string& a, const std::string& b, const std::vector<Region>& masked) {
  const int fa = ::open(a.c_str(), O_RDONLY), fb = ::open(b.c_str(), O_RDONLY);
  const off_t size = ::lseek(fa, 0, SEEK_END);
  std::string diff = size == ::lseek(fb, 0, SEEK_END) ? "" : "sizes differ";
  std::vector<char> ba(1 << 20), bb(1 << 20);
  for (int fd : {fa, fb}) {
    for (off_t pos = 0; diff.empty() && pos < size;) {
      const off_t start = ::lseek(fd, pos, SEEK_DATA);
      if (start < 0) break;
      const off_t end = ::lseek(fd, start, SEEK_HOLE);
      for (off_t p = start; diff.empty() && p < end;) {
        const std::size_t n = std::size_t(std::min<off_t>(end - p, off_t(ba.size())));
        if (::pread(fa, ba.data(), n, p) != ssize_t(n) || ::pread(fb, bb.data(), n, p) != ssize_t(n))
          diff = "short read";
        for (const Region& r : masked)
          for (std::uint64_t i = std::max<std::uint64_t>(r.begin, p); i < std::min<std::uint64_t>(r.end, p + n); ++i)
            ba[i - p] = bb[i - p] = 0;
        for (std::size_t i = 0; diff.empty() && i < n; ++i)
          if (ba[i] != bb[i]) diff = "byte " + std::to_string(p + off_t(i)) + " differs";
        p += off_t(n);
      }
      pos = end;
    }
  }
  ::close(fa);
  ::close(fb);
  return diff;
}

struct Tally {
  int equal = 0, refused_both = 0, differ = 0;
};

void run_one(const support::TempDir& dir, std::uint64_t size, const std::string& args, const std::string& mode,
             std::uint64_t offset_bytes, Tally& tally) {
  const std::string a = dir / "mkfs.img", b = dir / "mkfat.img";
  support::make_file(a, size + offset_bytes);
  support::make_file(b, size + offset_bytes);
  const std::string opts = " --invariant " + args + " " + mode + " ";
  const auto r = support::run("mkfs.fat" + opts + a);
  const auto m = support::run(std::string(FSIO_MKFAT) + opts + b);
  const std::string what = "size " + std::to_string(size) + " '" + args + " " + mode + "'";
  std::string diff;
  if ((r.exit_code == 0) != (m.exit_code == 0))
    diff = "mkfs.fat exit " + std::to_string(r.exit_code) + " (" + r.output + "), mkfat exit " +
           std::to_string(m.exit_code) + " (" + m.output + ")";
  else if (r.exit_code != 0) ++tally.refused_both;
  else diff = compare(a, b, code_regions(a, offset_bytes));
  if (diff.empty() && r.exit_code == 0) ++tally.equal;
  if (!diff.empty()) ++tally.differ;
  EXPECT_TRUE(diff.empty()) << what << ": " << diff;
  ::unlink(a.c_str());
  ::unlink(b.c_str());
}

// FSIO_IMAGE_MATRIX=full: every case as is, with --mbr=y and at
// --offset=2048 (the image grows by the offset, so the filesystem keeps its
// size): about 5 minutes here. By default (the suite's CI budget) every
// third case of each group runs, in one of the three modes in turn, so each
// group still covers every variant and mode: about a ninth of the runs.
bool full_matrix() {
  const char* m = std::getenv("FSIO_IMAGE_MATRIX");
  return m && std::string(m) == "full";
}

void run_group(const std::vector<std::uint64_t>& sizes, const std::vector<Variant>& vs, const char* name,
               bool with_offset = true) {
  if (!support::have_tool("mkfs.fat")) GTEST_SKIP() << "mkfs.fat (dosfstools) is not installed; images not compared";
  support::TempDir dir;
  Tally tally;
  const bool full = full_matrix();
  unsigned n = 0;
  for (std::uint64_t size : sizes)
    for (const Variant& v : vs) {
      const unsigned k = n++;
      if (!full && k % 3 != 0) continue;
      unsigned mode = full ? 7 : 1u << (k / 3 % 3);  // bit 0: as is, 1: --mbr=y, 2: --offset
      if (!with_offset && mode == 4) mode = 1;
      const std::uint64_t ss = v.opts.sector_size ? v.opts.sector_size : 512;
      if (mode & 1) run_one(dir, size, v.args, "", 0, tally);
      if (mode & 2) run_one(dir, size, v.args, "--mbr=y", 0, tally);
      if ((mode & 4) && with_offset) run_one(dir, size, v.args, "--offset=2048", 2048 * ss, tally);
    }
  std::cout << "[ images ] " << name << (full ? " (full)" : " (sampled)") << ": equal=" << tally.equal
            << " (both refused " << tally.refused_both << ") differ=" << tally.differ << "\n";
}

TEST(ImageVsMkfsFat, FloppyAndSmallSizes) { run_group(floppy_and_small_sizes(), variants(), "floppy and small"); }

TEST(ImageVsMkfsFat, AroundFat32Threshold) { run_group(fat32_threshold_sizes(), variants(), "around 512 MiB"); }

TEST(ImageVsMkfsFat, AtEveryBoundary) {
  for (const Variant& v : variants()) run_group(boundary_sizes(v.opts), {v}, ("boundaries '" + v.args + "'").c_str());
}

TEST(ImageVsMkfsFat, RandomSizes) { run_group(random_sizes(), variants(), "random sizes"); }

TEST(ImageVsMkfsFat, ExtraOptionCombinations) { run_group(extra_sizes(), extra_variants(), "extra options"); }

TEST(ImageVsMkfsFat, TensOfGibibytes) {
  auto vs = variants();
  vs.erase(vs.begin() + 5);  // -F 32 -s 1: FATs of hundreds of MiB, written by both
  run_group(tens_of_gib_sizes(), vs, "tens of GiB");
}

TEST(ImageVsMkfsFat, Tebibytes) {
  // FATs of hundreds of MiB, written by both tools: the sampled matrix runs
  // the 2 TiB case only (about 20 s), FSIO_IMAGE_MATRIX=full both.
  auto vs = variants();
  run_group({2 * TiB + 512}, {vs[0]}, "2 TiB", false);
  if (full_matrix()) run_group({4 * TiB}, {vs[4]}, "4 TiB -S 4096", false);
}

// No --offset here: mkfs.fat 4.2 multiplies --offset by the Atari variant's
// enlarged logical sector (2048 x 1024 bytes on 4 MiB), so its volume starts
// later than asked and runs past the end of the image; mkfat counts --offset
// in the sectors of the target (fat/FORMAT.md, "Atari variant").
TEST(ImageVsMkfsFat, Atari) {
  const auto vs = atari_variants();
  run_group(floppy_and_small_sizes(), vs, "atari: floppy and small", false);
  run_group(random_sizes(), vs, "atari: random sizes", false);
}

}  // namespace
}  // namespace fat
