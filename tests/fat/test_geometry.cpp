// compute_geometry facts from the reference that need no peer tool, and the
// wording of refusals.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "fat/geometry.hpp"

namespace fat {
namespace {

constexpr std::uint64_t MiB = 1 << 20, GiB = MiB * 1024;

TEST(Geometry, SixHundredMiBRoundsDownToWholeTracks) {
  const auto g = compute_geometry(600 * MiB, {});
  ASSERT_TRUE(g.has_value()) << g.error().context;
  EXPECT_EQ(g->type, FatType::fat32);
  EXPECT_EQ(g->total_sectors, 1228752u);  // 63 * 19504
  EXPECT_EQ(g->sectors_per_track, 63u);
  EXPECT_EQ(g->backup_boot_sector, 6u);
  EXPECT_EQ(g->fsinfo_sector, 1u);
}

TEST(Geometry, FourKnSectorsGiveEightTimesLargerClusters) {
  FormatOptions o;
  o.sector_size = 4096;
  const auto g = compute_geometry(300 * GiB, o);
  ASSERT_TRUE(g.has_value()) << g.error().context;
  EXPECT_EQ(g->cluster_bytes(), 256u * 1024);
}

TEST(Geometry, Fat32With64SectorClustersReserves64Sectors) {
  const auto g = compute_geometry(40 * GiB, {});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->sectors_per_cluster, 64u);
  EXPECT_EQ(g->reserved_sectors, 64u);
  EXPECT_EQ(g->data_start_sector() % 64, 0u);
}

TEST(Geometry, Fat16With64KiBClustersGets2048RootEntries) {
  FormatOptions o;
  o.fat_type = 16;
  o.sectors_per_cluster = 128;
  const auto g = compute_geometry(2 * GiB, o);
  ASSERT_TRUE(g.has_value()) << g.error().context;
  EXPECT_EQ(g->root_entries, 2048u);
}

TEST(Geometry, TooFewFat16ClustersIsRefusedWithTheNumbers) {
  FormatOptions o;
  o.fat_type = 16;
  const auto g = compute_geometry(2 * MiB, o);
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, fsio::Errc::invalid_argument);
  const std::string& m = g.error().context;
  EXPECT_NE(m.find("FAT16 needs at least 4087 clusters; 2 MiB (4096 sectors) with 4 sectors per cluster"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("gives 1013"), std::string::npos) << m;
}

TEST(Geometry, TooManyFat12ClustersIsRefusedWithTheLimit) {
  FormatOptions o;
  o.fat_type = 12;
  const auto g = compute_geometry(1 * GiB, o);
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().context.find("FAT12 allows at most 4084 clusters"), std::string::npos) << g.error().context;
}

TEST(Geometry, BadOptionsAreRefusedBeforeAnyArithmetic) {
  for (auto set : std::vector<void (*)(FormatOptions&)>{
           [](FormatOptions& o) { o.sectors_per_cluster = 3; },
           [](FormatOptions& o) { o.sectors_per_cluster = 256; },
           [](FormatOptions& o) { o.sector_size = 256; },
           [](FormatOptions& o) { o.num_fats = 5; },
           [](FormatOptions& o) { o.root_entries = 8; },
           [](FormatOptions& o) { o.media = 0xF1; },
           [](FormatOptions& o) { o.fat_type = 24; },
           [](FormatOptions& o) { o.heads = 4; },
           [](FormatOptions& o) { o.cluster_size = 3000; },
           [](FormatOptions& o) { o.label = "A*B"; },
       }) {
    FormatOptions o;
    set(o);
    EXPECT_FALSE(compute_geometry(64 * MiB, o).has_value());
  }
}

TEST(Geometry, ClusterSizeInBytesIsTheSameAsSectorsPerCluster) {
  FormatOptions a, b;
  a.sectors_per_cluster = 16;
  b.cluster_size = 8192;
  const auto ga = compute_geometry(1 * GiB, a), gb = compute_geometry(1 * GiB, b);
  ASSERT_TRUE(ga && gb);
  EXPECT_EQ(ga->sectors_per_cluster, gb->sectors_per_cluster);
  EXPECT_EQ(ga->cluster_count, gb->cluster_count);
}

TEST(Geometry, BlockDeviceFactsSetSectorSizeHiddenSectorsAndMbr) {
  DeviceFacts f;
  f.block_device = true;
  f.fixed_disk = true;
  f.whole_disk = true;
  f.logical_sector_size = 4096;
  f.partition_start = 0;
  FormatOptions o;
  o.offset_sectors = 256;
  const auto g = compute_geometry(1440 * 1024 * 4, o, f);  // the floppy table ignores fixed disks
  ASSERT_TRUE(g.has_value()) << g.error().context;
  EXPECT_EQ(g->sector_size, 4096u);
  EXPECT_EQ(g->hidden_sectors, 256u);
  EXPECT_EQ(g->offset_bytes, 256u * 4096);
  EXPECT_EQ(g->media, 0xF8);
  EXPECT_TRUE(g->write_mbr);
}

TEST(Geometry, SectorCountIsCappedAt32Bits) {
  const auto g = compute_geometry(3 * 1024 * GiB, {});
  ASSERT_TRUE(g.has_value());
  EXPECT_LE(g->total_sectors, 0xFFFFFFFFu);
  EXPECT_FALSE(g->warnings.empty());
}

TEST(Geometry, LayoutFieldsAreMkfatsJsonKeysInOrder) {
  const auto g = compute_geometry(1 * GiB, {});
  ASSERT_TRUE(g.has_value());
  const auto fields = layout_fields(*g);
  std::vector<std::string> names;
  for (const auto& f : fields) names.emplace_back(f.name);
  const std::vector<std::string> want = {"fat_type",
                                         "sector_size",
                                         "cluster_bytes",
                                         "sectors_per_cluster",
                                         "cluster_count",
                                         "total_sectors",
                                         "filesystem_bytes",
                                         "data_bytes",
                                         "reserved_sectors",
                                         "num_fats",
                                         "fat_sectors",
                                         "root_entries",
                                         "data_start_sector",
                                         "hidden_sectors",
                                         "heads",
                                         "sectors_per_track",
                                         "media",
                                         "fsinfo_sector",
                                         "backup_boot_sector",
                                         "offset_bytes"};
  EXPECT_EQ(names, want);
  auto number = [&](const char* name) {
    for (const auto& f : fields)
      if (std::string(f.name) == name) return std::get<std::uint64_t>(f.value);
    return ~std::uint64_t(0);
  };
  EXPECT_EQ(std::get<std::string>(fields[0].value), "FAT32");
  EXPECT_EQ(number("cluster_bytes"), 4096u);
  EXPECT_EQ(number("data_bytes"), number("cluster_count") * 4096);
  EXPECT_EQ(number("filesystem_bytes"), std::uint64_t(g->total_sectors) * 512);
  EXPECT_EQ(number("data_start_sector"), g->reserved_sectors + 2ull * g->fat_sectors);
}

}  // namespace
}  // namespace fat
