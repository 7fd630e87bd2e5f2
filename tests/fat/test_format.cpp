// format_volume through the real libfsio, judged by the peer tools:
// fsck.fat -n, mtools (minfo, mdir, mcopy) and mkfs.fat's own output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "fat/boot_sector.hpp"
#include "fat/dirent.hpp"
#include "fat/format.hpp"
#include "fat/geometry.hpp"
#include "fat/table.hpp"
#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;
using support::TempDir;

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024;

struct FormatCase {
  const char* name;
  std::uint64_t size;
  FatType type;
};
const FormatCase kCases[] = {
    {"fat12", 1440 * kKiB, FatType::fat12},
    {"fat16", 64 * kMiB, FatType::fat16},
    {"fat32", 600 * kMiB, FatType::fat32},
};

fsio::Result<FormatReport> format_image(const std::string& img, std::uint64_t size, const FormatOptions& o,
                                        const FormatExtras& extras = {}, std::unique_ptr<fsio::Engine> engine = nullptr,
                                        fsio::IoStats* stats = nullptr) {
  auto g = FSIO_TRY(compute_geometry(size, o));
  fsio::OpenOptions oo;
  oo.write = true;
  oo.direct = false;
  oo.allow_mounted = true;
  auto dev = FSIO_TRY(fsio::Device::open(img, oo));
  auto queue = engine ? FSIO_TRY(fsio::IoQueue::create(dev, std::move(engine), fsio::QueueOptions{}))
                      : FSIO_TRY(fsio::IoQueue::create(dev, fsio::QueueOptions{}));
  auto report = format_volume(queue, g, o, nullptr, extras);
  if (stats) *stats = queue.stats();
  return report;
}

void require_tools() {
  for (const char* t : {"fsck.fat", "minfo", "mdir", "mkfs.fat"})
    if (!support::have_tool(t)) GTEST_SKIP() << t << " is not installed; format not checked by peers";
}

class FormatPeers : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatPeers, FsckMinfoAndMdirAcceptTheVolume) {
  require_tools();
  const FormatCase c = GetParam();
  TempDir dir;
  const std::string img = dir / "img";
  support::make_file(img, c.size);
  FormatOptions o;
  o.label = "FSIO TEST";
  o.invariant = true;
  fsio::IoStats stats;
  auto report = format_image(img, c.size, o, {}, nullptr, &stats);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_EQ(report->layout.type, c.type);
  EXPECT_EQ(report->volume_id, kInvariantVolumeId);
  EXPECT_EQ(report->label, "FSIO TEST");
  // Invalidate, metadata, boot sector; FAT32 adds its backup boot sector's
  // own plug and flush ahead of the primary.
  const unsigned phases = c.type == FatType::fat32 ? 4u : 3u;
  EXPECT_EQ(report->plugs, phases);
  EXPECT_EQ(report->flushes, phases);
  // Large merged requests: far fewer than one per sector.
  EXPECT_LT(stats.requests_submitted, 40u) << "queued " << stats.requests_queued;

  const auto fsck = support::run("fsck.fat -n " + img);
  EXPECT_EQ(fsck.exit_code, 0) << fsck.output;
  const auto info = support::run("MTOOLS_SKIP_CHECK=1 minfo -i " + img + " ::");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find(std::string("disk type=\"") + fat_type_name(c.type)), std::string::npos) << info.output;
  const auto ls = support::run("MTOOLS_SKIP_CHECK=1 mdir -i " + img + " ::");
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("Volume in drive : is FSIO TEST"), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("Volume Serial Number is 1234-ABCD"), std::string::npos) << ls.output;
}

// Outside the boot code, our metadata is byte-identical to mkfs.fat's.
TEST_P(FormatPeers, MetadataIsByteIdenticalToMkfsFatInvariant) {
  require_tools();
  const FormatCase c = GetParam();
  TempDir dir;
  const std::string ours = dir / "ours", theirs = dir / "theirs";
  support::make_file(ours, c.size);
  support::make_file(theirs, c.size);
  const auto mk = support::run("mkfs.fat --invariant -n PEERS " + theirs);
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  FormatOptions o;
  o.label = "PEERS";
  o.invariant = true;
  ASSERT_TRUE(format_image(ours, c.size, o).has_value());
  const auto g = compute_geometry(c.size, o).value();
  const std::uint64_t root_bytes = c.type == FatType::fat32 ? g.cluster_bytes() : g.root_dir_sectors() * 512ull;
  const std::uint64_t end = g.root_dir_sector() * 512 + root_bytes;
  const auto a = support::read_bytes(ours, 0, end), b = support::read_bytes(theirs, 0, end);
  const std::size_t code = c.type == FatType::fat32 ? 0x5A : 0x3E;
  std::vector<std::uint64_t> boots{0};
  if (g.backup_boot_sector) boots.push_back(g.backup_boot_sector * 512ull);
  for (std::uint64_t i = 0; i < end; ++i) {
    bool in_code = false;
    for (std::uint64_t s : boots) in_code |= i >= s + code && i < s + 510;
    if (!in_code) {
      ASSERT_EQ(a[i], b[i]) << "byte " << i << " of " << end;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, FormatPeers, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Format, WipesForeignSignaturesInTheDataAreaAndNothingElse) {
  require_tools();
  TempDir dir;
  const std::string img = dir / "img";
  const std::uint64_t size = 600 * kMiB;
  support::make_file(img, size);
  // A btrfs magic at 64 kKiB + 0x40 sits in FAT32's data area at this size?
  // No: the FATs cover it. Put fake signatures where we would not write.
  const auto g = compute_geometry(size, {}).value();
  const std::uint64_t data = g.data_start_sector() * 512 + g.cluster_bytes();  // after the root cluster
  const std::uint64_t sig1 = data + 64 * kKiB + 0x40, sig2 = size - 4096 + 100;
  {
    std::FILE* f = std::fopen(img.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    for (std::uint64_t at : {sig1 - 512, sig1, sig2}) {
      std::fseek(f, long(at), SEEK_SET);
      std::fwrite("_BHRfS_M", 1, 8, f);
    }
    std::fclose(f);
  }
  FormatExtras extras;
  extras.wipe = {{sig1, 8}, {sig2, 8}, {1080, 2} /* ext4 magic: inside the metadata, written anyway */};
  auto report = format_image(img, size, {}, extras);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_EQ(report->bytes_wiped, 2 * 512u);
  for (std::uint64_t at : {sig1, sig2}) {
    const auto b = support::read_bytes(img, at, 8);
    for (std::byte x : b) EXPECT_EQ(x, std::byte(0)) << "at " << at;
  }
  const auto kept = support::read_bytes(img, sig1 - 512, 8);
  EXPECT_EQ(std::memcmp(kept.data(), "_BHRfS_M", 8), 0) << "a neighbouring sector was touched";
  EXPECT_EQ(support::run("fsck.fat -n " + img).exit_code, 0);
}

// A crash in the middle leaves no valid-looking filesystem: the old boot
// sector is zeroed first and the new one written last.
TEST(Format, FailureBeforeTheLastPhaseLeavesNoBootSector) {
  require_tools();
  TempDir dir;
  const std::string img = dir / "img";
  const std::uint64_t size = 64 * kMiB;
  support::make_file(img, size);
  ASSERT_EQ(support::run("mkfs.fat " + img).exit_code, 0);  // an old, valid FAT
  fsio::OpenOptions oo;
  oo.write = true;
  oo.direct = false;
  oo.allow_mounted = true;
  auto dev = fsio::Device::open(img, oo);
  ASSERT_TRUE(dev.has_value()) << dev.error().message();
  fsio::FaultSpec spec;
  spec.nth_write = 3;  // phase 1's two writes (boot, backup boot) succeed, phase 2 dies
  auto engine = fsio::make_fault_engine(fsio::make_sync_engine(dev->fd(), 8), spec);
  auto queue = fsio::IoQueue::create(*dev, std::move(engine), fsio::QueueOptions{});
  ASSERT_TRUE(queue.has_value());
  FormatOptions o;
  o.fat_type = 32;
  const auto g = compute_geometry(size, o).value();
  auto report = format_volume(*queue, g, o, nullptr);
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().message().find("writing FAT metadata"), std::string::npos) << report.error().message();
  for (std::uint64_t sector : {0u, 6u}) {  // the boot sector and its backup
    const auto boot = support::read_bytes(img, sector * 512, 512);
    for (std::byte b : boot) ASSERT_EQ(b, std::byte(0)) << "sector " << sector;
  }
  EXPECT_NE(support::run("fsck.fat -n " + img).exit_code, 0);
}

// mtools writes a long name into our volume; its checksum is ours.
TEST(Format, MtoolsLongNameChecksumMatchesLfnChecksum) {
  require_tools();
  if (!support::have_tool("mcopy")) GTEST_SKIP() << "mcopy missing";
  TempDir dir;
  const std::string img = dir / "img";
  support::make_file(img, 64 * kMiB);
  ASSERT_TRUE(format_image(img, 64 * kMiB, {}).has_value());
  const std::string src = dir / "A rather long file name.txt";
  support::make_file(src, 10);
  const auto cp = support::run("MTOOLS_SKIP_CHECK=1 mcopy -i " + img + " '" + src + "' ::");
  ASSERT_EQ(cp.exit_code, 0) << cp.output;
  const auto g = compute_geometry(64 * kMiB, {}).value();
  const auto root = support::read_bytes(img, g.root_dir_sector() * 512, 32 * 8);
  int lfn = 0;
  for (int i = 0; i < 8; ++i) {
    const auto e = fsio::load<DirEntry>(root, i * 32);
    if (e.name[0] == 0) break;
    if (e.attributes == attr::long_name) {
      ++lfn;
      continue;
    }
    ASSERT_GT(lfn, 0);
    std::array<std::uint8_t, 11> n;
    std::memcpy(n.data(), e.name, 11);
    for (int k = 0; k < lfn; ++k) EXPECT_EQ(fsio::load<LfnEntry>(root, (i - 1 - k) * 32).checksum, lfn_checksum(n));
    return;
  }
  FAIL() << "no long-name entry found";
}

TEST(Identity, InvariantSourceDateEpochAndExplicitIdCombine) {
  FormatOptions o;
  o.invariant = true;
  auto id = resolve_identity(o, std::nullopt);
  EXPECT_EQ(id.volume_id, 0x1234ABCDu);
  EXPECT_EQ(id.time, kInvariantTime);
  FormatOptions plain;
  id = resolve_identity(plain, 1700000000);
  EXPECT_EQ(id.time, 1700000000);
  EXPECT_TRUE(id.utc);
  EXPECT_EQ(id.volume_id, std::uint32_t(1700000000ull << 20));
  plain.volume_id = 0xCAFE;
  EXPECT_EQ(resolve_identity(plain, 1).volume_id, 0xCAFEu);
}

}  // namespace
}  // namespace fat

namespace fat {
namespace {

// FatTable through the real IoQueue: a batch of updates reaches every FAT
// copy in one plug, and fsck.fat sees consistent copies.
TEST(FatTableOnDisk, DirtySectorsOfEveryCopyGoOutInOnePlug) {
  require_tools();
  TempDir dir;
  const std::string img = dir / "img";
  const std::uint64_t size = 64 * kMiB;
  support::make_file(img, size);
  FormatOptions o;
  o.fat_type = 32;
  ASSERT_TRUE(format_image(img, size, o).has_value());
  const auto g = compute_geometry(size, o).value();
  fsio::OpenOptions oo;
  oo.write = true;
  oo.direct = false;
  oo.allow_mounted = true;
  auto dev = fsio::Device::open(img, oo).value();
  auto queue = fsio::IoQueue::create(dev, fsio::QueueOptions{}).value();
  auto table = FatTable::open(queue, g);
  ASSERT_TRUE(table.has_value()) << table.error().message();
  EXPECT_EQ(table->get(2).value(), 0x0FFFFFF8u);
  // A lost chain far apart from the head: two dirty runs per copy.
  ASSERT_TRUE(table->set(1000, 1001).has_value());
  ASSERT_TRUE(table->set(1001, end_of_chain(FatType::fat32)).has_value());
  ASSERT_TRUE(table->set(20000, end_of_chain(FatType::fat32)).has_value());
  auto plug = queue.plug();
  EXPECT_EQ(table->queue_dirty(plug), 4u);
  ASSERT_TRUE(plug.finish().has_value());
  table->clear_dirty();
  const auto second = support::read_bytes(img, g.fat_offset(1) + 1000 * 4, 8);
  EXPECT_EQ(std::to_integer<int>(second[0]), 0xE9);  // 1001 = 0x3E9
  EXPECT_EQ(std::to_integer<int>(second[4]), 0xFF);
  // Both copies agree, so fsck only reclaims the unowned clusters (exit 1),
  // and says nothing about differing FATs.
  const auto fsck = support::run("fsck.fat -n " + img);
  EXPECT_EQ(fsck.output.find("FATs differ"), std::string::npos) << fsck.output;
  EXPECT_NE(fsck.output.find("Reclaimed"), std::string::npos) << fsck.output;
}

}  // namespace
}  // namespace fat
