// Corrupt boot sectors are input: every refusal names the field and value,
// every byte of the boot sector and of FSInfo flipped gives a clean error or
// a volume that can be read, truncated images say so. LevelDB's corruption
// tests are the model; the suite runs under ASan/UBSan too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fat/boot.hpp"
#include "fat/directory.hpp"
#include "fat/label.hpp"
#include "fat/geometry.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;
using fsio::Errc;

// A boot sector mkfat would write for `size` bytes, to be damaged.
Sector512 sector_for(std::uint64_t size, unsigned type) {
  FormatOptions o;
  o.fat_type = type;
  return build_boot_sector(compute_geometry(size, o).value(), 0x1234ABCD, kNoName);
}

struct FieldCase {
  const char* what;
  unsigned type;
  std::size_t offset;
  std::vector<std::uint8_t> bytes;
  Errc code;
  const char* message;
};

TEST(ParseBootSector, EachRefusalNamesTheFieldAndItsValue) {
  const std::uint64_t size = 64ull << 20;  // FAT16 by default, FAT32 when asked
  const FieldCase cases[] = {
      {"signature", 16, 510, {0x55, 0x00}, Errc::corrupt, "signature 0x0055 at byte 510 (expected 0xAA55)"},
      {"sector size", 16, 0x0B, {0xE8, 0x03}, Errc::corrupt, "BPB_BytsPerSec 1000 is not a power of two in 512..32768"},
      {"sector size 256", 16, 0x0B, {0x00, 0x01}, Errc::corrupt, "BPB_BytsPerSec 256 is not"},
      {"cluster size", 16, 0x0D, {3}, Errc::corrupt, "BPB_SecPerClus 3 is not a power of two in 1..128"},
      {"cluster size 0", 16, 0x0D, {0}, Errc::corrupt, "BPB_SecPerClus 0 is not"},
      {"reserved", 16, 0x0E, {0, 0}, Errc::corrupt, "BPB_RsvdSecCnt 0"},
      {"fats", 16, 0x10, {0}, Errc::corrupt, "BPB_NumFATs 0"},
      {"media", 16, 0x15, {0x12}, Errc::corrupt, "BPB_Media 0x12 is not 0xF0 or 0xF8..0xFF"},
      {"no size", 16, 0x20, {0, 0, 0, 0}, Errc::corrupt, "BPB_TotSec16 and BPB_TotSec32 are both 0"},
      {"no FAT", 32, 0x24, {0, 0, 0, 0}, Errc::corrupt, "BPB_FATSz16 and BPB_FATSz32 are both 0"},
      {"no root", 16, 0x11, {0, 0}, Errc::corrupt, "BPB_RootEntCnt 0 on a FAT12/16 volume"},
      {"odd root", 16, 0x11, {17, 0}, Errc::corrupt, "BPB_RootEntCnt 17 is not a multiple of 16"},
      {"FAT too small", 16, 0x16, {1, 0}, Errc::corrupt, "BPB_FATSz16 1 sectors (512 bytes) cannot hold"},
      {"FAT32 root", 32, 0x2C, {1, 0, 0, 0}, Errc::corrupt, "BPB_RootClus 1 is not a cluster (2.."},
      {"FAT32 root far", 32, 0x2C, {0, 0, 0, 1}, Errc::corrupt, "BPB_RootClus 16777216 is not a cluster"},
      {"FAT32 version", 32, 0x2A, {0, 1}, Errc::unsupported, "BPB_FSVer 0x0100: only FAT32 version 0.0"},
      {"FAT32 fixed root", 32, 0x11, {0, 2}, Errc::corrupt, "BPB_RootEntCnt 512 on a FAT32 volume (must be 0)"},
      {"FAT32 active copy", 32, 0x28, {0x85, 0}, Errc::corrupt, "BPB_ExtFlags 0x0085 makes copy 5 active"},
      {"metadata past the end", 16, 0x16, {0xFF, 0xFF}, Errc::corrupt, "sectors end before the data area"},
  };
  for (const FieldCase& c : cases) {
    Sector512 s = sector_for(size, c.type);
    for (std::size_t i = 0; i < c.bytes.size(); ++i) s[c.offset + i] = std::byte(c.bytes[i]);
    auto r = parse_boot_sector(s, size);
    ASSERT_FALSE(r.has_value()) << c.what;
    EXPECT_EQ(r.error().code, c.code) << c.what;
    EXPECT_NE(r.error().message().find(c.message), std::string::npos) << c.what << ": " << r.error().message();
    EXPECT_EQ(r.error().message().rfind("boot sector: ", 0), 0u) << r.error().message();
  }
}

TEST(ParseBootSector, TooManyClustersForAFat16BpbIsRefused) {
  // A FAT16 BPB over 2 GiB of 512-byte clusters: far more than 65524.
  Sector512 s = sector_for(64ull << 20, 16);
  const std::uint32_t total = 4u << 20;
  s[0x13] = s[0x14] = std::byte(0);
  for (int i = 0; i < 4; ++i) s[0x20 + i] = std::byte(total >> (8 * i));
  s[0x0D] = std::byte(1);
  s[0x16] = std::byte(0xFF);  // BPB_FATSz16 0xFFFF: large enough not to fail first
  s[0x17] = std::byte(0xFF);
  auto r = parse_boot_sector(s, std::uint64_t(total) * 512);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("clusters with a FAT12/16 BPB"), std::string::npos) << r.error().message();
}

// fatgen103: < 4085 clusters is FAT12, the next one FAT16, whatever mkfs.fat
// would have chosen. The cluster count moves with BPB_TotSec16 alone.
TEST(ParseBootSector, Fat12EndsAt4084ClustersAndFat16BeginsAt4085) {
  Sector512 s = sector_for(64ull << 20, 16);
  s[0x16] = std::byte(0);  // BPB_FATSz16 256: room for 65536 entries
  s[0x17] = std::byte(1);
  const auto base = parse_boot_sector(s, 64ull << 20).value().layout;
  const std::uint64_t meta = base.data_start_sector();
  for (std::uint32_t clusters : {4084u, 4085u, 65524u}) {
    const std::uint32_t total = std::uint32_t(meta + std::uint64_t(clusters) * base.sectors_per_cluster);
    Sector512 t = s;
    t[0x13] = std::byte(total & 0xFF);
    t[0x14] = std::byte(total >> 8);
    if (total > 0xFFFF) {
      t[0x13] = t[0x14] = std::byte(0);
      for (int i = 0; i < 4; ++i) t[0x20 + i] = std::byte(total >> (8 * i));
    }
    auto r = parse_boot_sector(t, std::uint64_t(total) * 512);
    ASSERT_TRUE(r.has_value()) << clusters << ": " << r.error().message();
    EXPECT_EQ(r->layout.cluster_count, clusters);
    EXPECT_EQ(r->layout.type, clusters < 4085 ? FatType::fat12 : FatType::fat16) << clusters;
  }
}

// A sector of 512 bytes that says nothing: zeros, or a DOS MBR.
TEST(ParseBootSector, ZerosAreNotAFatVolume) {
  Sector512 zeros{};
  auto r = parse_boot_sector(zeros, 1 << 20);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("not a FAT volume"), std::string::npos);
  EXPECT_FALSE(parse_boot_sector(std::span(zeros).first(100), 1 << 20).has_value());
}

struct FlipImage {
  const char* name;
  std::uint64_t kib;
  const char* args;
};
const FlipImage kImages[] = {
    {"fat12", 1440, ""},
    {"fat16", 32 * 1024, "-F 16"},
    {"fat32", 40 * 1024, "-F 32 -s 1"},
    {"fat32_4k", 300 * 1024, "-F 32 -S 4096"},
};

// Opens the image and, when that works, reads what a tool reads next: the
// whole FAT and the copies. Returns whether it opened. Those reads depend on
// the boot sector only through the Layout, and the flips leave the FAT as it
// is, so they run once for each Layout a flip produces (`used`): the flips
// of boot code, labels and FSInfo hints repeat only the open.
bool open_and_use(const std::string& img, bool boot_damaged, const std::string& what, std::vector<Layout>& used) {
  auto v = test::open_volume(img, false, {}, fsio::EngineKind::psync);
  if (!v.has_value()) {
    const auto& e = v.error();
    EXPECT_TRUE(boot_damaged) << what << ": only a damaged boot sector may refuse: " << e.message();
    EXPECT_TRUE(e.code == Errc::corrupt || e.code == Errc::unsupported) << what << ": " << e.message();
    EXPECT_NE(e.message().find(": boot sector: "), std::string::npos) << what << ": " << e.message();
    return false;
  }
  Volume& vol = *(*v)->volume;
  const Layout& l = vol.layout();
  EXPECT_GT(l.cluster_count, 0u) << what;
  EXPECT_LE(l.filesystem_bytes(), (*v)->device.size()) << what;
  if (std::find(used.begin(), used.end(), l) != used.end()) return true;
  used.push_back(l);
  EXPECT_TRUE(vol.fat().count_free().has_value()) << what;
  EXPECT_TRUE(vol.fat().compare_copies().has_value()) << what;
  EXPECT_TRUE(vol.fat().get(l.entry_count() - 1).has_value()) << what;
  // And the root directory with every chain it points to.
  auto root = Directory::open_root(vol);
  EXPECT_TRUE(root.has_value()) << what << ": " << root.error().message();
  if (root.has_value()) {
    for (const Entry& e : root->entries()) EXPECT_TRUE(walk_chain(vol.fat(), e.first_cluster).has_value()) << what;
  }
  return true;
}

class ByteFlips : public ::testing::TestWithParam<FlipImage> {};

TEST_P(ByteFlips, EveryBootSectorAndFsInfoByteFlippedOpensOrFailsCleanly) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  const FlipImage c = GetParam();
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, c.kib, c.args);
  const auto g = test::fsck_geometry(img);
  test::populate(img, dir / "src", g.at("cluster_bytes"), 0);  // something to list and walk
  const auto ss = g.at("sector_size");
  std::vector<std::uint64_t> sectors{0};
  if (std::string(c.name).rfind("fat32", 0) == 0) sectors.push_back(ss);  // FSInfo is sector 1
  unsigned opened = 0, refused = 0;
  std::vector<Layout> used;
  for (std::uint64_t base : sectors) {
    const auto orig = support::read_bytes(img, base, 512);
    for (std::size_t i = 0; i < 512; ++i) {
      const std::uint8_t o = std::to_integer<std::uint8_t>(orig[i]);
      for (std::uint8_t v : {std::uint8_t(o ^ 0x01), std::uint8_t(o ^ 0x80), std::uint8_t(0x00), std::uint8_t(0xFF)}) {
        if (v == o) continue;
        test::patch(img, base + i, {v});
        const std::string what = std::string(c.name) + " byte " + std::to_string(base + i) + " = " + std::to_string(v);
        (open_and_use(img, base == 0, what, used) ? opened : refused)++;
        if (::testing::Test::HasFailure()) return;
      }
      test::patch(img, base + i, {o});
    }
  }
  // Both outcomes happen: the test is not vacuous.
  EXPECT_GT(opened, 100u);
  EXPECT_GT(refused, 20u);
  EXPECT_GT(used.size(), 20u) << "flips that change the layout were read through";
}

INSTANTIATE_TEST_SUITE_P(Reader, ByteFlips, ::testing::ValuesIn(kImages),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(TruncatedImages, SayHowMuchIsMissing) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 40 * 1024, "-F 32 -s 1");
  const std::uint64_t full = 40ull << 20;
  struct Cut {
    std::uint64_t size;
    const char* message;
  };
  const Cut cuts[] = {
      // shorter and shorter: truncate cannot bring bytes back
      {full - 512, "(41943040 bytes) but the device holds 41942528 bytes"},
      {full / 2, "truncated image"},
      {512, "but the device holds 512 bytes from its start: truncated image"},
      {300, "no room for a 512-byte boot sector"},
      {0, "no room for a 512-byte boot sector"},
  };
  for (const Cut& c : cuts) {
    ASSERT_EQ(::truncate(img.c_str(), off_t(c.size)), 0);
    auto v = test::open_volume(img);
    ASSERT_FALSE(v.has_value()) << c.size;
    EXPECT_EQ(v.error().code, Errc::corrupt);
    EXPECT_NE(v.error().message().find(c.message), std::string::npos) << c.size << ": " << v.error().message();
    EXPECT_EQ(v.error().message().rfind(img + ": ", 0), 0u) << "names the device: " << v.error().message();
  }
}

}  // namespace
}  // namespace fat
