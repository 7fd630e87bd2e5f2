// Volume::open on images made by mkfs.fat and by mkfat, judged by fsck.fat
// -v (the layout) and minfo's facts; what the open finds when FSInfo, the
// backup boot sector and the dirty bits are damaged, each checked against
// what fsck.fat -n says about the same image.
#include <gtest/gtest.h>

#include "fat/format.hpp"
#include "fat/geometry.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;
using test::fsck_geometry;
using test::mkfs;
using test::open_volume;
using test::patch;

struct MkfsCase {
  const char* name;
  std::uint64_t kib;
  const char* args;
};
const MkfsCase kMkfsCases[] = {
    {"floppy_fat12", 1440, ""},
    {"fat12_4k_sectors", 8000, "-S 4096"},
    {"fat12_one_fat", 4000, "-f 1 -s 2"},
    {"fat16", 64 * 1024, ""},
    {"fat16_1k_clusters", 40 * 1024, "-F 16 -s 2"},
    {"fat16_4k_sectors_short_root", 200 * 1024, "-F 16 -S 4096 -r 64"},
    {"fat32_512b_clusters", 100 * 1024, "-F 32 -s 1"},
    {"fat32_default", 600 * 1024, "-F 32"},
    {"fat32_4k_sectors_one_fat", 1200 * 1024, "-F 32 -S 4096 -f 1"},
    {"fat32_32k_clusters_few", 256 * 1024, "-F 32 -s 64"},
};

class MkfsVolumes : public ::testing::TestWithParam<MkfsCase> {};

TEST_P(MkfsVolumes, LayoutIsWhatFsckFatReports) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  const MkfsCase c = GetParam();
  support::TempDir dir;
  const std::string img = dir / "img";
  mkfs(img, c.kib, c.args);
  auto want = fsck_geometry(img);
  ASSERT_EQ(want["exit"], 0u);
  auto v = open_volume(img);
  ASSERT_TRUE(v.has_value()) << v.error().message();
  const Layout& l = (*v)->volume->layout();
  EXPECT_EQ(l.sector_size, want["sector_size"]);
  EXPECT_EQ(l.cluster_bytes(), want["cluster_bytes"]);
  EXPECT_EQ(l.reserved_sectors, want["reserved_sectors"]);
  EXPECT_EQ(l.fat_offset(0), want["fat_start_byte"]);
  EXPECT_EQ(l.num_fats, want["num_fats"]);
  EXPECT_EQ(unsigned(l.type), want["fat_bits"]);
  EXPECT_EQ(l.fat_bytes(), want["fat_bytes"]);
  EXPECT_EQ(l.data_start_sector() * l.sector_size, want["data_start_byte"]);
  EXPECT_EQ(l.cluster_count, want["clusters"]);
  EXPECT_EQ(l.sectors_per_track, want["sectors_per_track"]);
  EXPECT_EQ(l.heads, want["heads"]);
  EXPECT_EQ(l.hidden_sectors, want["hidden_sectors"]);
  EXPECT_EQ(l.total_sectors, want["total_sectors"]);
  if (l.type == FatType::fat32) {
    EXPECT_EQ(l.root_cluster, want["root_cluster"]);
    // mkfs.fat: FSInfo free = clusters - 1 (the root holds one), next = 2.
    const auto& info = (*v)->volume->fsinfo();
    ASSERT_TRUE(info.has_value());
    EXPECT_TRUE(info->signatures_ok);
    EXPECT_EQ(info->free_count, l.cluster_count - 1);
    EXPECT_EQ((*v)->volume->allocation_hint(), 2u);
  } else {
    EXPECT_EQ(l.root_dir_offset(), want["root_start_byte"]);
    EXPECT_EQ(l.root_entries, want["root_entries"]);
  }
  EXPECT_FALSE((*v)->volume->dirty().dirty());
  for (const auto& f : (*v)->volume->findings()) {
    const bool expected = (f.kind == Finding::Kind::fat32_few_clusters && l.cluster_count < 65525) ||
                          (f.kind == Finding::Kind::linux_unmountable && l.root_entries == 64);
    EXPECT_TRUE(expected) << f.message;
  }
  // The FAT as the table reads it: everything free but the root's cluster.
  auto free = (*v)->volume->fat().count_free();
  ASSERT_TRUE(free.has_value());
  EXPECT_EQ(*free, l.cluster_count - (l.type == FatType::fat32 ? 1 : 0));
}

INSTANTIATE_TEST_SUITE_P(Reader, MkfsVolumes, ::testing::ValuesIn(kMkfsCases),
                         [](const auto& info) { return std::string(info.param.name); });

// mkfat's own images: the layout read back is the layout written, for
// layouts fsck.fat cannot judge (three and four FATs) as well.
TEST(MkfatVolumes, OpenReadsBackTheGeometryThatWasWritten) {
  struct Case {
    std::uint64_t size;
    FormatOptions o;
  };
  std::vector<Case> cases;
  auto add = [&](std::uint64_t mib, unsigned type, unsigned fats, std::uint32_t ss, unsigned spc) {
    FormatOptions o;
    o.fat_type = type;
    o.num_fats = fats;
    o.sector_size = ss;
    o.sectors_per_cluster = spc;
    o.invariant = true;
    cases.push_back({mib << 20, o});
  };
  add(2, 12, 2, 512, 0);
  add(8, 12, 4, 2048, 0);
  add(64, 16, 3, 512, 0);
  add(64, 16, 1, 4096, 1);
  add(300, 32, 2, 512, 1);
  add(300, 32, 3, 1024, 4);
  add(600, 32, 2, 8192, 0);  // a sector mkfs.fat and mkfat allow, the kernel does not
  for (const Case& c : cases) {
    support::TempDir dir;
    const std::string img = dir / "img";
    support::make_file(img, c.size);
    const Geometry g = compute_geometry(c.size, c.o).value();
    {
      fsio::OpenOptions oo;
      oo.write = true;
      oo.direct = false;
      oo.allow_mounted = true;
      auto dev = fsio::Device::open(img, oo).value();
      auto q = fsio::IoQueue::create(dev).value();
      ASSERT_TRUE(format_volume(q, g, c.o, nullptr).has_value());
    }
    auto v = open_volume(img);
    ASSERT_TRUE(v.has_value()) << v.error().message();
    const Layout& l = (*v)->volume->layout();
    const auto a = layout_fields(l), b = layout_fields(g);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].value, b[i].value) << a[i].name << " " << img;
    EXPECT_EQ(l.root_cluster, g.root_cluster);
    EXPECT_EQ((*v)->volume->record().volume_id, kInvariantVolumeId);
    EXPECT_FALSE((*v)->volume->dirty().dirty());
    EXPECT_FALSE((*v)->volume->has(Finding::Kind::fsinfo_signature));
    EXPECT_FALSE((*v)->volume->has(Finding::Kind::backup_boot_differs));
    EXPECT_EQ((*v)->volume->has(Finding::Kind::linux_unmountable), g.sector_size > 4096);
  }
}

// Damage that fsck.fat reports but that still leaves a usable volume: a
// Finding each, and fsck.fat -n agrees that something is there.
TEST(VolumeFindings, DamagedFsInfoBackupAndDirtyBitsAreFindingsThatFsckAgreesWith) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  struct Damage {
    const char* what;
    std::uint64_t offset;
    std::vector<std::uint8_t> bytes;
    Finding::Kind kind;
    const char* fsck_says;
  };
  // FAT32, 512-byte sectors: FSInfo is sector 1, the backup boot sector 6,
  // FAT[1] at byte 32*512 + 4.
  const Damage damages[] = {
      {"FSInfo lead signature", 512, {0, 0, 0, 0}, Finding::Kind::fsinfo_signature, "FSINFO sector has bad magic"},
      {"FSInfo trail signature", 512 + 0x1FE, {0, 0}, Finding::Kind::fsinfo_signature, "FSINFO sector has bad magic"},
      {"backup boot label",
       6 * 512 + 0x47,
       {'X'},
       Finding::Kind::backup_boot_differs,
       "differences between boot sector and its backup"},
      {"state byte", kStateOffset32, {kStateDirty}, Finding::Kind::dirty_state, "Dirty bit is set"},
      {"FAT[1] clean bit", 32 * 512 + 7, {0x07}, Finding::Kind::fat_not_clean, "Dirty bit is set"},
      {"free count beyond the clusters",
       512 + 0x1E8,
       {0xFE, 0xFF, 0xFF, 0x0F},
       Finding::Kind::fsinfo_free_count,
       "Free cluster summary wrong"},
  };
  for (const Damage& d : damages) {
    support::TempDir dir;
    const std::string img = dir / "img";
    mkfs(img, 100 * 1024, "-F 32 -s 1");
    patch(img, d.offset, d.bytes);
    auto v = open_volume(img);
    ASSERT_TRUE(v.has_value()) << d.what << ": " << v.error().message();
    EXPECT_TRUE((*v)->volume->has(d.kind)) << d.what;
    const auto fsck = support::run("fsck.fat -n " + img);
    EXPECT_NE(fsck.output.find(d.fsck_says), std::string::npos) << d.what << ": " << fsck.output;
  }
}

TEST(VolumeFindings, Fat16DirtyBitsAndTheFat12StateFlag) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string f16 = dir / "f16", f12 = dir / "f12";
  mkfs(f16, 64 * 1024, "");
  // FAT[1] = 0xFFFF at byte 512 + 2 (4 reserved sectors on this geometry? read it).
  auto v = open_volume(f16);
  ASSERT_TRUE(v.has_value());
  const std::uint64_t fat1 = (*v)->volume->layout().fat_offset(0) + 2;
  patch(f16, fat1 + 1, {0x3F});  // clears bits 15 (clean) and 14 (no I/O errors)
  v = open_volume(f16);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE((*v)->volume->dirty().fat_not_clean);
  EXPECT_TRUE((*v)->volume->dirty().fat_io_errors);
  EXPECT_NE(support::run("fsck.fat -n " + f16).output.find("Dirty bit is set"), std::string::npos);
  mkfs(f12, 1440, "");
  patch(f12, kStateOffset16, {kStateDirty});
  v = open_volume(f12);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE((*v)->volume->dirty().state_flag);
  EXPECT_FALSE((*v)->volume->dirty().fat_not_clean);  // FAT12 has no such bit
  EXPECT_NE(support::run("fsck.fat -n " + f12).output.find("Dirty bit is set"), std::string::npos);
}

TEST(VolumeFindings, TheTypeComesFromTheClusterCountNotBsFilSysType) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  mkfs(img, 64 * 1024, "");
  patch(img, 0x36, {'F', 'A', 'T', '1', '2', ' ', ' ', ' '});
  auto v = open_volume(img);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ((*v)->volume->layout().type, FatType::fat16);
  EXPECT_TRUE((*v)->volume->has(Finding::Kind::fs_type_label));
  EXPECT_EQ(fsck_geometry(img)["fat_bits"], 16u);
}

TEST(VolumeFsInfo, QueueFsInfoWritesCountersAndKeepsTheRestOfTheSector) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  mkfs(img, 100 * 1024, "-F 32 -s 1");
  patch(img, 512 + 0x100, {0xAB});  // a reserved byte fsck.fat does not care about
  auto v = open_volume(img, true);
  ASSERT_TRUE(v.has_value());
  const std::uint32_t clusters = (*v)->volume->layout().cluster_count;
  auto plug = (*v)->queue->plug();
  ASSERT_TRUE((*v)->volume->queue_fsinfo(plug, clusters - 5, 77));
  ASSERT_TRUE(plug.finish().has_value());
  const auto minfo = test::mtools("minfo", img, "::");
  EXPECT_NE(minfo.find("free clusters=" + std::to_string(clusters - 5)), std::string::npos) << minfo;
  EXPECT_NE(minfo.find("last allocated cluster=77"), std::string::npos) << minfo;
  EXPECT_EQ(support::read_bytes(img, 512 + 0x100, 1)[0], std::byte(0xAB));
  auto again = open_volume(img);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)->volume->allocation_hint(), 77u);
  EXPECT_EQ((*again)->volume->fsinfo()->free_count, clusters - 5);
}

}  // namespace
}  // namespace fat
