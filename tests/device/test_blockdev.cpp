// Device on real block devices: loop devices bound for the test (root only).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "libfsio/device.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::clamp_ok;
using test::LoopDevice;
using test::open_ok;
using test::TempDir;

class LoopDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
    test::make_file(dir / "backing", 16 << 20);
  }
  // Binds a loop device; skips the test when the system cannot.
  std::unique_ptr<LoopDevice> bind(unsigned sector_size = 0) {
    auto loop = std::make_unique<LoopDevice>(dir / "backing", sector_size);
    return loop;
  }
  TempDir dir;
};

#define BIND_OR_SKIP(var, ...)  \
  auto var = bind(__VA_ARGS__); \
  if (!var->ok()) GTEST_SKIP() << "losetup failed: cannot bind a loop device"

OpenOptions read_only() {
  OpenOptions o;
  o.direct = false;
  return o;
}

TEST_F(LoopDeviceTest, Default512ByteLoopReportsItsSizeAndSectors) {
  BIND_OR_SKIP(loop);
  Device d = open_ok(loop->path(), read_only());
  EXPECT_TRUE(d.is_block_device());
  EXPECT_EQ(d.size(), 16u << 20);
  EXPECT_EQ(d.logical_sector_size(), 512u);
  EXPECT_GE(d.topology().physical_sector, 512u);
  EXPECT_GE(d.topology().max_request, 1u << 20);
}

TEST_F(LoopDeviceTest, SectorSize4096LoopReportsLogicalSector4096) {
  BIND_OR_SKIP(loop, 4096);
  Device d = open_ok(loop->path(), OpenOptions{});
  EXPECT_EQ(d.logical_sector_size(), 4096u);
  EXPECT_GE(d.topology().physical_sector, 4096u);
  EXPECT_TRUE(d.direct());
  // Linux 6.11+ answers STATX_DIOALIGN for block devices; before that we
  // fall back to the logical sector, which is the same number here.
  EXPECT_EQ(d.topology().dio_offset_align, 4096u);
}

TEST_F(LoopDeviceTest, BlockDeviceClampsToWholeSectorsEvenBuffered) {
  BIND_OR_SKIP(loop, 4096);
  OpenOptions o = read_only();
  o.length = 10000;  // a window that ends inside a sector
  Device d = open_ok(loop->path(), o);
  EXPECT_EQ(clamp_ok(d, 0, 16384), 8192u);
  EXPECT_FALSE(d.clamp(8192, 4096).has_value());
  OpenOptions whole = read_only();
  Device w = open_ok(loop->path(), whole);
  EXPECT_EQ(clamp_ok(w, (16 << 20) - 4096, 65536), 4096u);
  EXPECT_FALSE(w.clamp(16 << 20, 4096).has_value());
}

TEST_F(LoopDeviceTest, SectorOverrideSmallerThanTheDeviceIsRefused) {
  BIND_OR_SKIP(loop, 4096);
  OpenOptions o = read_only();
  o.sector_size = 512;
  auto r = Device::open(loop->path(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  o.sector_size = 8192;
  EXPECT_EQ(open_ok(loop->path(), o).logical_sector_size(), 8192u);
}

TEST_F(LoopDeviceTest, CreateSizeOnABlockDeviceIsRefused) {
  BIND_OR_SKIP(loop);
  OpenOptions o;
  o.write = true;
  o.create_size = 1 << 20;
  auto r = Device::open(loop->path(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
}

TEST_F(LoopDeviceTest, ExclusiveWriterKeepsASecondWriterOut) {
  BIND_OR_SKIP(loop);
  OpenOptions o;
  o.write = true;
  Device first = open_ok(loop->path(), o);
  auto second = Device::open(loop->path(), o);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, Errc::busy);
  EXPECT_NE(second.error().message().find(loop->path()), std::string::npos) << second.error().message();
  o.exclusive = false;
  EXPECT_TRUE(Device::open(loop->path(), o).has_value());
}

TEST_F(LoopDeviceTest, DiscardIsWindowRelativeAndSectorChecked) {
  test::make_file(dir / "backing", 16 << 20, 'x');
  BIND_OR_SKIP(loop);
  OpenOptions o;
  o.write = true;
  o.offset = 1 << 20;
  Device d = open_ok(loop->path(), o);
  auto bad = d.discard(100, 4096);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_FALSE(d.discard(15 << 20, 4096).has_value());  // past the window end
  auto st = d.discard(0, 65536);
  if (!st && st.error().code == Errc::unsupported) GTEST_SKIP() << st.error().message();
  ASSERT_TRUE(st.has_value()) << st.error().message();
  ASSERT_TRUE(d.flush().has_value());
  // The loop driver punches the hole in the backing file.
  EXPECT_EQ(test::read_string(dir / "backing", 1 << 20, 65536), std::string(65536, '\0'));
  EXPECT_EQ(test::read_string(dir / "backing", (1 << 20) - 4096, 4096), std::string(4096, 'x'));
  EXPECT_EQ(test::read_string(dir / "backing", (1 << 20) + 65536, 4096), std::string(4096, 'x'));
}

TEST_F(LoopDeviceTest, QueryTopologyOfARegularFileUsesTheOverride) {
  // No loop needed; lives here beside the block-device topology checks.
  int fd = ::open((dir / "backing").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto t = query_topology(fd, dir / "backing", false, 4096);
  auto t0 = query_topology(fd, dir / "backing", false, 0);
  ::close(fd);
  ASSERT_TRUE(t.has_value());
  ASSERT_TRUE(t0.has_value());
  EXPECT_EQ(t->logical_sector, 4096u);
  EXPECT_EQ(t0->logical_sector, 512u);
}

// A buffered reopen would meet the first descriptor's claim; use_buffered
// keeps that descriptor, so the claim and the device stay ours.
TEST(UseBuffered, TurnsODirectOffAndKeepsTheExclusiveClaim) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  test::make_file(dir / "b.img", 4 << 20);
  LoopDevice loop(dir / "b.img", 4096);
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  OpenOptions o;
  o.write = true;
  auto dev = test::open_ok(loop.path(), o);
  ASSERT_TRUE(dev.direct());
  auto again = Device::open(loop.path(), o);
  ASSERT_FALSE(again.has_value()) << "a second exclusive open must meet the first one's claim";
  ASSERT_TRUE(dev.use_buffered("test").has_value());
  EXPECT_FALSE(dev.direct());
  EXPECT_EQ(::fcntl(dev.fd(), F_GETFL) & O_DIRECT, 0);
  EXPECT_EQ(dev.direct_fallback(), "test; using buffered I/O");
  const int other = ::open(loop.path().c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  EXPECT_LT(other, 0) << "the claim was let go";
  EXPECT_EQ(errno, EBUSY);
  if (other >= 0) ::close(other);
}

}  // namespace
}  // namespace fsio
