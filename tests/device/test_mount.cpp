// find_mount and Device::open's refusal to write under a mounted filesystem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "libfsio/device.hpp"
#include "libfsio/mount.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::TempDir;

std::optional<std::string> mount_of(const std::string& path) {
  auto r = find_mount(path);
  if (!r) throw std::runtime_error("find_mount failed: " + r.error().message());
  return *r;
}

TEST(FindMount, PlainImageIsNotMounted) {
  TempDir dir;
  test::make_file(dir / "img", 1 << 20);
  EXPECT_EQ(mount_of(dir / "img"), std::nullopt);
}

TEST(FindMount, MissingPathIsAnErrorNamingIt) {
  auto r = find_mount("/nonexistent/fsio-image");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message().find("/nonexistent/fsio-image"), std::string::npos);
}

// One ext4 image on a loop device mounted on a temporary directory; every
// piece is undone by its RAII owner even when an assertion fails.
class MountedImage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::is_root()) GTEST_SKIP() << "mounting needs root";
    if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
    image = dir / "ext4 image.img";  // a space: mountinfo escapes it as \040
    mnt_dir = dir / "mnt point";
    std::filesystem::create_directory(mnt_dir);
    test::make_file(image, 16 << 20);
    const auto mk = test::run("mkfs.ext4 -q -F '" + image + "'");
    ASSERT_EQ(mk.exit_code, 0) << mk.output;
    loop = std::make_unique<test::LoopDevice>(image);
    if (!loop->ok()) GTEST_SKIP() << "losetup failed: cannot bind a loop device";
    mnt = std::make_unique<test::MountPoint>(loop->path(), mnt_dir);
    if (!mnt->ok()) GTEST_SKIP() << "mount " << loop->path() << " failed";
  }
  void TearDown() override {
    mnt.reset();  // unmount before the loop device goes away
    loop.reset();
  }
  TempDir dir;
  std::string image, mnt_dir;
  std::unique_ptr<test::LoopDevice> loop;
  std::unique_ptr<test::MountPoint> mnt;
};

TEST_F(MountedImage, LoopDeviceAndBackingFileBothReportTheMountPoint) {
  EXPECT_EQ(mount_of(loop->path()), mnt_dir);
  EXPECT_EQ(mount_of(image), mnt_dir);
}

TEST_F(MountedImage, BackingFileIsMatchedByIdentityNotBySpelling) {
  std::filesystem::create_symlink(image, dir / "link.img");
  EXPECT_EQ(mount_of(dir / "link.img"), mnt_dir);
  // A relative spelling of the same file.
  std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto rel = find_mount("./ext4 image.img");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(rel.has_value());
  EXPECT_EQ(*rel, mnt_dir);
}

TEST_F(MountedImage, WritingIsRefusedWithBusyNamingTheMountPoint) {
  OpenOptions o;
  o.write = true;
  for (const std::string& target : {loop->path(), image}) {
    auto r = Device::open(target, o);
    ASSERT_FALSE(r.has_value()) << target;
    EXPECT_EQ(r.error().code, Errc::busy) << target;
    EXPECT_NE(r.error().message().find(mnt_dir), std::string::npos) << r.error().message();
  }
}

TEST_F(MountedImage, ReadingAMountedDeviceIsAllowed) {
  OpenOptions o;
  o.direct = false;
  auto r = Device::open(loop->path(), o);
  EXPECT_TRUE(r.has_value()) << r.error().message();
}

TEST_F(MountedImage, ExclusiveOpenStillRefusesWhenTheMountCheckIsSkipped) {
  OpenOptions o;
  o.write = true;
  o.allow_mounted = true;
  auto r = Device::open(loop->path(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::busy);
}

TEST_F(MountedImage, UnmountedImageIsFreeAgain) {
  mnt->unmount();
  EXPECT_EQ(mount_of(image), std::nullopt);
  EXPECT_EQ(mount_of(loop->path()), std::nullopt);
}

// A partitioned image: mounting the partition makes the whole disk busy.
TEST(FindMountPartitions, MountedPartitionMakesTheWholeDiskBusy) {
  if (!test::is_root()) GTEST_SKIP() << "mounting needs root";
  if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
  TempDir dir;
  std::string image = dir / "disk.img";
  test::make_file(image, 32 << 20);
  // A hand-written MBR: one Linux partition from sector 2048 to the end.
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    unsigned char entry[16] = {0x00, 0, 0, 0, 0x83, 0, 0, 0};
    std::uint32_t start = 2048, count = (32 << 20) / 512 - 2048;
    for (int i = 0; i < 4; ++i) entry[8 + i] = std::uint8_t(start >> (8 * i));
    for (int i = 0; i < 4; ++i) entry[12 + i] = std::uint8_t(count >> (8 * i));
    f.seekp(446);
    f.write(reinterpret_cast<const char*>(entry), 16);
    f.seekp(510);
    f.write("\x55\xAA", 2);
  }
  test::LoopDevice loop(image, 0, true);
  if (!loop.ok()) GTEST_SKIP() << "losetup -P failed";
  // The kernel lists the partition in sysfs; without udev (containers) no
  // /dev node appears, so make one from its device number.
  std::string name = std::filesystem::path(loop.path()).filename().string() + "p1";
  std::string sys_dev = "/sys/class/block/" + name + "/dev";
  for (int i = 0; i < 10 && !std::filesystem::exists(sys_dev); ++i) ::usleep(100000);
  // Some kernels/containers miss the scan at bind time; ask again.
  if (!std::filesystem::exists(sys_dev)) test::run("partx -a " + loop.path());
  for (int i = 0; i < 20 && !std::filesystem::exists(sys_dev); ++i) ::usleep(100000);
  if (!std::filesystem::exists(sys_dev)) GTEST_SKIP() << name << " did not appear (no partition scanning here)";
  std::string part = "/dev/" + name;
  if (!std::filesystem::exists(part)) {
    unsigned maj = 0, min = 0;
    char colon = 0;
    std::ifstream(sys_dev) >> maj >> colon >> min;
    part = dir / name;
    ASSERT_EQ(::mknod(part.c_str(), S_IFBLK | 0600, makedev(maj, min)), 0) << part;
  }
  const auto mk = test::run("mkfs.ext4 -q -F " + part);
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  std::filesystem::create_directory(dir / "mnt");
  test::MountPoint mnt(part, dir / "mnt");
  if (!mnt.ok()) GTEST_SKIP() << "mount " << part << " failed";
  EXPECT_EQ(mount_of(part), dir / "mnt");
  EXPECT_EQ(mount_of(loop.path()), dir / "mnt");
  EXPECT_EQ(mount_of(image), dir / "mnt");
}

// A block device can itself back a loop device: mounting the upper loop
// device makes the lower one busy, although nothing mounts it directly.
TEST_F(MountedImage, BlockDeviceUnderAMountedLoopDeviceIsBusy) {
  mnt.reset();
  TempDir inner_dir;
  // The lower loop device gets a filesystem through an upper loop device over it.
  test::LoopDevice upper(loop->path());
  if (!upper.ok()) GTEST_SKIP() << "losetup over " << loop->path() << " failed: " << upper.why();
  std::filesystem::create_directory(inner_dir / "mnt");
  test::MountPoint upper_mnt(upper.path(), inner_dir / "mnt");
  if (!upper_mnt.ok()) GTEST_SKIP() << "mount " << upper.path() << " failed";
  EXPECT_EQ(mount_of(loop->path()), inner_dir / "mnt");
  OpenOptions o;
  o.write = true;
  auto r = Device::open(loop->path(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::busy);
  EXPECT_NE(r.error().message().find(inner_dir / "mnt"), std::string::npos) << r.error().message();
}

// swapon on construction, swapoff on destruction; ok() says whether swap is on.
class ActiveSwap {
 public:
  explicit ActiveSwap(std::string what) : what_(std::move(what)) {
    const auto on = test::run("swapon '" + what_ + "'");
    on_ = on.exit_code == 0;
    output_ = on.output;
  }
  ~ActiveSwap() {
    if (on_) test::run("swapoff '" + what_ + "'");
  }
  ActiveSwap(const ActiveSwap&) = delete;
  ActiveSwap& operator=(const ActiveSwap&) = delete;
  bool ok() const { return on_; }
  const std::string& output() const { return output_; }

 private:
  std::string what_;
  std::string output_;
  bool on_ = false;
};

bool can_swap(std::string* why) {
  if (!test::is_root()) *why = "swapon needs root";
  else if (!test::have_tool("mkswap") || !test::have_tool("swapon")) *why = "mkswap/swapon missing (util-linux)";
  else return true;
  return false;
}

void expect_refused_as_swap(const std::string& target) {
  OpenOptions o;
  o.write = true;
  o.direct = false;
  auto r = Device::open(target, o);
  ASSERT_FALSE(r.has_value()) << target;
  EXPECT_EQ(r.error().code, Errc::busy);
  EXPECT_NE(r.error().message().find("in use as swap"), std::string::npos) << r.error().message();
}

// An active swap file is in use although nothing mounts it.
TEST(FindMountSwap, ActiveSwapFileIsBusy) {
  if (std::string why; !can_swap(&why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string file = dir / "swapfile";
  test::make_file(file, 8 << 20, 'x');  // swap files must have no holes
  ::chmod(file.c_str(), 0600);
  ASSERT_EQ(test::run("mkswap '" + file + "'").exit_code, 0);
  EXPECT_EQ(mount_of(file), std::nullopt);
  ActiveSwap swap(file);
  if (!swap.ok()) GTEST_SKIP() << "swapon failed here (no swap on this filesystem?): " << swap.output();
  EXPECT_EQ(mount_of(file), std::string(kSwap));
  expect_refused_as_swap(file);
}

// Swap on a loop device over an image: the loop device is in use, and so is
// the image under it, as with a mount.
TEST(FindMountSwap, SwapOnALoopDeviceMakesItAndItsImageBusy) {
  if (std::string why; !can_swap(&why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string image = dir / "swap.img";
  test::make_file(image, 8 << 20);
  test::LoopDevice loop(image);
  if (!loop.ok()) GTEST_SKIP() << "losetup failed: " << loop.why();
  ASSERT_EQ(test::run("mkswap " + loop.path()).exit_code, 0);
  ActiveSwap swap(loop.path());
  if (!swap.ok()) GTEST_SKIP() << "swapon " << loop.path() << " failed here: " << swap.output();
  EXPECT_EQ(mount_of(loop.path()), std::string(kSwap));
  EXPECT_EQ(mount_of(image), std::string(kSwap));
  expect_refused_as_swap(image);
}

}  // namespace
}  // namespace fsio
