// Device on image files: size, window, creation, the end-of-device guard,
// O_DIRECT and its fallback, sync flags, flush and discard.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <filesystem>

#include "libfsio/device.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::TempDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using test::clamp_ok;
using test::open_ok;

OpenOptions buffered() {
  OpenOptions o;
  o.direct = false;
  return o;
}

class DeviceFile : public ::testing::Test {
 protected:
  TempDir dir;
};

TEST_F(DeviceFile, ImageFileReportsItsSizeAnd512ByteSectors) {
  test::make_file(dir / "img", 1 << 20);
  Device d = open_ok(dir / "img", buffered());
  EXPECT_EQ(d.size(), 1u << 20);
  EXPECT_EQ(d.offset(), 0u);
  EXPECT_EQ(d.logical_sector_size(), 512u);
  EXPECT_FALSE(d.is_block_device());
  EXPECT_FALSE(d.writable());
  EXPECT_GE(d.topology().max_request, 1u << 20);
  EXPECT_GE(d.fd(), 0);
}

TEST_F(DeviceFile, MissingFileIsNotFoundNamingThePath) {
  auto r = Device::open(dir / "nope", buffered());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_TRUE(contains(r.error().message(), dir / "nope")) << r.error().message();
}

TEST_F(DeviceFile, DirectoryIsRefused) {
  auto r = Device::open(dir.path(), buffered());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::unsupported);
}

TEST_F(DeviceFile, CreateSizeCreatesAndExtendsButNeverShrinks) {
  OpenOptions o = buffered();
  o.write = true;
  o.create_size = 1 << 20;
  EXPECT_EQ(open_ok(dir / "new", o).size(), 1u << 20);
  EXPECT_EQ(std::filesystem::file_size(dir / "new"), 1u << 20);
  o.create_size = 4096;
  EXPECT_EQ(open_ok(dir / "new", o).size(), 1u << 20);
  o.create_size = 2 << 20;
  EXPECT_EQ(open_ok(dir / "new", o).size(), 2u << 20);
  EXPECT_EQ(std::filesystem::file_size(dir / "new"), 2u << 20);
}

TEST_F(DeviceFile, CreateSizeWithoutWriteIsRefused) {
  OpenOptions o = buffered();
  o.create_size = 4096;
  auto r = Device::open(dir / "new", o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "new"));
}

TEST_F(DeviceFile, WindowIsSizedFromItsOffset) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  o.offset = 64 << 10;
  o.length = 128 << 10;
  Device d = open_ok(dir / "img", o);
  EXPECT_EQ(d.offset(), 64u << 10);
  EXPECT_EQ(d.size(), 128u << 10);
  o.length.reset();
  EXPECT_EQ(open_ok(dir / "img", o).size(), (1u << 20) - (64u << 10));
  o.offset = 1 << 20;  // an empty window exactly at the end is valid
  EXPECT_EQ(open_ok(dir / "img", o).size(), 0u);
}

TEST_F(DeviceFile, WindowBeyondTheEndIsRefusedNamingOffsets) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  o.offset = 2 << 20;
  auto r = Device::open(dir / "img", o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_TRUE(contains(r.error().message(), "0x200000")) << r.error().message();

  o.offset = 512 << 10;
  o.length = (512 << 10) + 512;
  r = Device::open(dir / "img", o);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.error().message(), "0x80000+0x80200")) << r.error().message();
}

TEST_F(DeviceFile, WindowStartMustBeSectorAligned) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  o.offset = 100;
  EXPECT_FALSE(Device::open(dir / "img", o).has_value());
  o.offset = 512;
  o.sector_size = 4096;
  EXPECT_FALSE(Device::open(dir / "img", o).has_value());
  o.offset = 4096;
  EXPECT_EQ(open_ok(dir / "img", o).logical_sector_size(), 4096u);
}

TEST_F(DeviceFile, SectorSizeOverrideMustBeAPowerOfTwo) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  for (std::uint32_t bad : {256u, 1000u, 3072u, 131072u}) {
    o.sector_size = bad;
    auto r = Device::open(dir / "img", o);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
  }
}

TEST_F(DeviceFile, ClampReturnsARequestInsideWhole) {
  test::make_file(dir / "img", 10000);
  Device d = open_ok(dir / "img", buffered());
  EXPECT_EQ(clamp_ok(d, 0, 4096), 4096u);
  EXPECT_EQ(clamp_ok(d, 4096, 5904), 5904u);  // ends exactly at the end
  EXPECT_EQ(clamp_ok(d, 100, 7), 7u);
  EXPECT_EQ(clamp_ok(d, 0, 0), 0u);
  EXPECT_EQ(clamp_ok(d, 20000, 0), 0u);  // zero length: nothing to guard
}

TEST_F(DeviceFile, BufferedImageClampsToTheRealEndSoTheOddTailIsReadable) {
  test::make_file(dir / "img", 10000);
  Device d = open_ok(dir / "img", buffered());
  EXPECT_EQ(clamp_ok(d, 9728, 4096), 272u);
  EXPECT_EQ(clamp_ok(d, 8192, 4096), 1808u);
}

TEST_F(DeviceFile, ClampAtOrBeyondTheEndIsAnErrorNamingTheOffsetInHex) {
  test::make_file(dir / "img", 10000);
  Device d = open_ok(dir / "img", buffered());
  auto at_end = d.clamp(10000, 512);
  ASSERT_FALSE(at_end.has_value());
  EXPECT_EQ(at_end.error().code, Errc::invalid_argument);
  EXPECT_TRUE(contains(at_end.error().message(), "0x2710")) << at_end.error().message();
  auto beyond = d.clamp(0x100000, 1);
  ASSERT_FALSE(beyond.has_value());
  EXPECT_TRUE(contains(beyond.error().message(), "0x100000")) << beyond.error().message();
}

TEST_F(DeviceFile, ClampGuardsTheWindowEndNotTheFileEnd) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  o.offset = 4096;
  o.length = 8192;
  Device d = open_ok(dir / "img", o);
  EXPECT_EQ(clamp_ok(d, 8000, 1000), 192u);
  EXPECT_FALSE(d.clamp(8192, 1).has_value());
}

// O_DIRECT cannot move a partial sector, so there the guard keeps whole
// sectors only. /tmp must support O_DIRECT (ext4, xfs, btrfs do).
TEST_F(DeviceFile, DirectImageClampsToWholeLogicalSectors) {
  test::make_file(dir / "img", 10000);
  OpenOptions o;  // direct by default
  Device d = open_ok(dir / "img", o);
  if (!d.direct()) GTEST_SKIP() << dir.path() << ": " << d.direct_fallback();
  EXPECT_EQ(clamp_ok(d, 8192, 4096), 1536u);  // 1808 bytes inside -> 3 sectors
  auto tail = d.clamp(9728, 4096);            // only 272 bytes: less than a sector
  ASSERT_FALSE(tail.has_value());
  EXPECT_EQ(tail.error().code, Errc::invalid_argument);
  EXPECT_TRUE(contains(tail.error().message(), "0x2600")) << tail.error().message();
}

TEST_F(DeviceFile, DirectImageWith4096SectorOverrideClampsToWhole4K) {
  test::make_file(dir / "img", 3 * 4096 + 2048);
  OpenOptions o;
  o.sector_size = 4096;
  Device d = open_ok(dir / "img", o);
  if (!d.direct()) GTEST_SKIP() << dir.path() << ": " << d.direct_fallback();
  EXPECT_EQ(d.logical_sector_size(), 4096u);
  EXPECT_EQ(clamp_ok(d, 4096, 16384), 8192u);  // 10240 inside -> two 4K sectors
  EXPECT_EQ(clamp_ok(d, 0, 4096), 4096u);
  EXPECT_FALSE(d.clamp(12288, 4096).has_value());  // only the 2048-byte partial sector
}

TEST_F(DeviceFile, DirectFlagIsOnTheDescriptorWhenInEffect) {
  test::make_file(dir / "img", 1 << 20);
  Device d = open_ok(dir / "img", OpenOptions{});
  if (!d.direct()) GTEST_SKIP() << dir.path() << ": " << d.direct_fallback();
  EXPECT_TRUE(d.direct_fallback().empty());
  EXPECT_NE(::fcntl(d.fd(), F_GETFL) & O_DIRECT, 0);
  Device b = open_ok(dir / "img", buffered());
  EXPECT_FALSE(b.direct());
  EXPECT_EQ(::fcntl(b.fd(), F_GETFL) & O_DIRECT, 0);
}

TEST_F(DeviceFile, SyncModesSetDsyncAndSyncFlags) {
  test::make_file(dir / "img", 1 << 20);
  OpenOptions o = buffered();
  o.write = true;
  o.sync = SyncMode::dsync;
  Device d = open_ok(dir / "img", o);
  EXPECT_EQ(d.sync_mode(), SyncMode::dsync);
  EXPECT_EQ(::fcntl(d.fd(), F_GETFL) & O_SYNC, O_DSYNC);
  o.sync = SyncMode::sync;
  Device s = open_ok(dir / "img", o);
  EXPECT_EQ(::fcntl(s.fd(), F_GETFL) & O_SYNC, O_SYNC);
  EXPECT_TRUE(s.flush().has_value());
  EXPECT_TRUE(d.flush().has_value());
  o.sync = SyncMode::none;
  Device n = open_ok(dir / "img", o);
  EXPECT_EQ(::fcntl(n.fd(), F_GETFL) & O_SYNC, 0);
}

TEST_F(DeviceFile, MoveLeavesTheSourceWithoutADescriptor) {
  test::make_file(dir / "img", 4096);
  Device a = open_ok(dir / "img", buffered());
  int fd = a.fd();
  Device b(std::move(a));
  EXPECT_EQ(b.fd(), fd);
  EXPECT_EQ(a.fd(), -1);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_EQ(b.path(), dir / "img");
}

TEST_F(DeviceFile, DiscardPunchesAWindowRelativeHole) {
  test::make_file(dir / "img", 64 << 10, 'x');
  OpenOptions o = buffered();
  o.write = true;
  o.offset = 4096;
  Device d = open_ok(dir / "img", o);
  auto st = d.discard(4096, 8192);  // file bytes 8192..16383
  if (!st && st.error().code == Errc::unsupported) GTEST_SKIP() << st.error().message();
  ASSERT_TRUE(st.has_value()) << st.error().message();
  EXPECT_EQ(test::read_string(dir / "img", 4096, 4096), std::string(4096, 'x'));
  EXPECT_EQ(test::read_string(dir / "img", 8192, 8192), std::string(8192, '\0'));
  EXPECT_EQ(test::read_string(dir / "img", 16384, 4096), std::string(4096, 'x'));
  EXPECT_EQ(std::filesystem::file_size(dir / "img"), 64u << 10);  // KEEP_SIZE
}

TEST_F(DeviceFile, DiscardBeyondTheWindowOrReadOnlyIsRefused) {
  test::make_file(dir / "img", 64 << 10, 'x');
  OpenOptions o = buffered();
  o.write = true;
  o.length = 32 << 10;
  Device d = open_ok(dir / "img", o);
  auto st = d.discard(28 << 10, 8192);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_EQ(test::read_string(dir / "img", 32 << 10, 4096), std::string(4096, 'x'));
  Device r = open_ok(dir / "img", buffered());
  EXPECT_FALSE(r.discard(0, 4096).has_value());
}

// tmpfs gained trivial O_DIRECT support in Linux 6.6; before that it refused
// O_DIRECT with EINVAL. Either way the open must work and say which it was.
TEST(DeviceDirectFallback, TmpfsOpensDirectOrSaysWhyNot) {
  struct statfs sf {};
  if (::statfs("/dev/shm", &sf) != 0 || sf.f_type != TMPFS_MAGIC)
    GTEST_SKIP() << "/dev/shm is not tmpfs here; cannot test the tmpfs case";
  TempDir dir("/dev/shm");
  OpenOptions o;
  o.write = true;
  o.create_size = 1 << 20;
  Device d = open_ok(dir / "img", o);
  EXPECT_EQ(d.size(), 1u << 20);
  EXPECT_NE(d.direct(), !d.direct_fallback().empty());
  if (!d.direct()) {
    EXPECT_EQ(d.direct_fallback(), "tmpfs refuses O_DIRECT; using buffered I/O");
    EXPECT_EQ(::fcntl(d.fd(), F_GETFL) & O_DIRECT, 0);
  }
}

// ramfs has no direct I/O at all: the open must fall back and say why.
TEST(DeviceDirectFallback, RamfsFallsBackToBufferedAndSaysWhy) {
  if (!test::is_root()) GTEST_SKIP() << "mounting ramfs needs root";
  TempDir dir;
  test::MountPoint mnt("none", dir.path(), "-t ramfs");
  if (!mnt.ok()) GTEST_SKIP() << "cannot mount ramfs on " << dir.path();
  OpenOptions o;
  o.write = true;
  o.create_size = 64 << 10;
  Device d = open_ok(dir / "img", o);
  EXPECT_FALSE(d.direct());
  EXPECT_EQ(d.direct_fallback(), "ramfs refuses O_DIRECT; using buffered I/O");
  EXPECT_EQ(::fcntl(d.fd(), F_GETFL) & O_DIRECT, 0);
  EXPECT_EQ(d.size(), 64u << 10);
  // Buffered after all, so the odd tail rule for files applies.
  EXPECT_EQ(clamp_ok(d, (64 << 10) - 100, 512), 100u);
}

}  // namespace
}  // namespace fsio
