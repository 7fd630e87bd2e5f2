// In-use detection through whole storage stacks (find_use, stack.hpp):
// a second loop device over a mounted image, loop devices stacked several
// deep, `losetup -o` windows, a loop device over a partition of a mounted
// disk, bind mounts, devices held open exclusively by another opener; and
// the dm-sibling rule on hand-made stacks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "libfsio/device.hpp"
#include "libfsio/mount.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::LoopDevice;
using test::LoopOptions;
using test::TempDir;

// The use find_use reports for the whole of path, or nullopt; throws on error.
std::optional<InUse> use_of(const std::string& path, std::uint64_t begin = 0, std::uint64_t end = kToEnd) {
  auto r = find_use(path, begin, end);
  if (!r) throw std::runtime_error("find_use failed: " + r.error().message());
  return *r;
}

// Device::open for writing must refuse with Errc::busy naming the mount point.
void expect_write_refused(const std::string& target, const std::string& mount_point) {
  OpenOptions o;
  o.write = true;
  o.direct = false;
  auto r = Device::open(target, o);
  ASSERT_FALSE(r.has_value()) << target << " was opened for writing";
  EXPECT_EQ(r.error().code, Errc::busy) << r.error().message();
  EXPECT_NE(r.error().message().find(mount_point), std::string::npos) << r.error().message();
  // A dry run meets the same refusal.
  o.write = false;
  o.check_write = true;
  auto dry = Device::open(target, o);
  ASSERT_FALSE(dry.has_value()) << target << " passed check_write";
  EXPECT_EQ(dry.error().message(), r.error().message());
}

// An ext4 image, mounted through a loop device (with `options`) on dir/mnt.
class MountedExt4 : public ::testing::Test {
 protected:
  void mount_image(const LoopOptions& options = {}, std::uint64_t image_size = 64 << 20) {
    if (!test::is_root()) GTEST_SKIP() << "loop devices and mounts need root";
    if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
    image = dir / "ext4.img";
    mnt_dir = dir / "mnt";
    std::filesystem::create_directory(mnt_dir);
    test::make_file(image, image_size);
    loop = std::make_unique<LoopDevice>(image, options);
    if (!loop->ok()) GTEST_SKIP() << loop->why();
    const auto mk = test::run("mkfs.ext4 -q -F " + loop->path());
    ASSERT_EQ(mk.exit_code, 0) << mk.output;
    mnt = std::make_unique<test::MountPoint>(loop->path(), mnt_dir);
    if (!mnt->ok()) GTEST_SKIP() << "mount " << loop->path() << " failed";
  }
  void TearDown() override {
    mnt.reset();
    while (!extra.empty()) extra.pop_back();  // the top of a stack first
    loop.reset();
  }
  // A loop device bound for the test; skips the test when it cannot be.
  LoopDevice& bind(const std::string& file, const LoopOptions& options = {}) {
    extra.push_back(std::make_unique<LoopDevice>(file, options));
    if (!extra.back()->ok()) throw std::runtime_error(extra.back()->why());
    return *extra.back();
  }
  TempDir dir;
  std::string image, mnt_dir;
  std::unique_ptr<LoopDevice> loop;
  std::unique_ptr<test::MountPoint> mnt;
  std::vector<std::unique_ptr<LoopDevice>> extra;  // detached in TearDown, last bound first
};

TEST_F(MountedExt4, SecondLoopDeviceOverTheMountedImageIsInUse) {
  mount_image();
  if (HasFatalFailure() || IsSkipped()) return;
  LoopDevice& second = bind(image);
  const auto use = use_of(second.path());
  ASSERT_TRUE(use.has_value()) << second.path() << " is not seen as in use";
  EXPECT_EQ(use->where, mnt_dir);
  EXPECT_EQ(use->device, loop->path());
  EXPECT_FALSE(use->direct);
  EXPECT_EQ(describe_use(*use), "mounted on " + mnt_dir + " through " + loop->path() + " (both use " + image + ")");
  expect_write_refused(second.path(), mnt_dir);
}

TEST_F(MountedExt4, LoopDevicesStackedThreeDeepOverTheMountedImageAreInUse) {
  mount_image();
  if (HasFatalFailure() || IsSkipped()) return;
  LoopDevice& a = bind(image);
  LoopDevice& b = bind(a.path());
  LoopDevice& c = bind(b.path());
  for (const LoopDevice* l : {&a, &b, &c}) expect_write_refused(l->path(), mnt_dir);
}

TEST_F(MountedExt4, MountingTheTopOfAStackMakesEveryLevelAndTheImageBusy) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices and mounts need root";
  if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
  image = dir / "stack.img";
  test::make_file(image, 32 << 20);
  LoopDevice& a = bind(image);
  LoopDevice& b = bind(a.path());
  LoopDevice& c = bind(b.path());
  ASSERT_EQ(test::run("mkfs.ext4 -q -F " + c.path()).exit_code, 0);
  std::filesystem::create_directory(dir / "top");
  test::MountPoint top(c.path(), dir / "top");
  if (!top.ok()) GTEST_SKIP() << "mount " << c.path() << " failed";
  for (const std::string& t : {a.path(), b.path(), image}) expect_write_refused(t, dir / "top");
  LoopDevice& other = bind(image);  // a fourth way in, beside the stack
  expect_write_refused(other.path(), dir / "top");
}

// Windows of one image: the mounted ext4 lives in [16 MiB, 48 MiB).
TEST_F(MountedExt4, OverlappingOffsetWindowsConflictAndDisjointOnesDoNot) {
  mount_image({.offset = 16 << 20, .sizelimit = 32 << 20});
  if (HasFatalFailure() || IsSkipped()) return;
  LoopDevice& overlapping = bind(image, {.offset = 40 << 20});
  expect_write_refused(overlapping.path(), mnt_dir);
  LoopDevice& before = bind(image, {.sizelimit = 16 << 20});
  LoopDevice& after = bind(image, {.offset = 48 << 20});
  EXPECT_EQ(use_of(before.path()), std::nullopt);
  EXPECT_EQ(use_of(after.path()), std::nullopt);
  // The image itself: busy as a whole, free outside the window.
  EXPECT_TRUE(use_of(image).has_value());
  EXPECT_EQ(use_of(image, 0, 16 << 20), std::nullopt);
  EXPECT_TRUE(use_of(image, (16 << 20) - 512, 16 << 20 | 512).has_value());
  OpenOptions o;
  o.write = true;
  o.direct = false;
  o.offset = 48 << 20;
  EXPECT_TRUE(Device::open(image, o).has_value()) << "a window after the mounted one must be writable";
  o.offset = 32 << 20;
  EXPECT_FALSE(Device::open(image, o).has_value());
}

TEST_F(MountedExt4, ImageReachedThroughABindMountIsInUse) {
  mount_image();
  if (HasFatalFailure() || IsSkipped()) return;
  const std::string other = dir / "elsewhere";
  std::filesystem::create_directory(other);
  test::MountPoint bound(dir.path(), other, "--bind");
  if (!bound.ok()) GTEST_SKIP() << "mount --bind failed";
  expect_write_refused(other + "/ext4.img", mnt_dir);
  // The device node, bind-mounted onto a plain file.
  test::make_file(dir / "node", 0);
  test::MountPoint node(loop->path(), dir / "node", "--bind");
  if (!node.ok()) GTEST_SKIP() << "mount --bind of a device node failed";
  expect_write_refused(dir / "node", mnt_dir);
}

// A disk image with two partitions on a partition-scanned loop device.
class PartitionedDisk : public MountedExt4 {
 protected:
  // p1: sectors 2048..34815 (16 MiB), p2: 34816..67583 (16 MiB).
  static constexpr std::uint64_t p1_start = 2048, p2_start = 34816, part_sectors = 32768;

  void SetUp() override {
    if (!test::is_root()) GTEST_SKIP() << "loop devices and mounts need root";
    if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
    image = dir / "disk.img";
    test::make_file(image, 40 << 20);
    write_mbr();
    disk = std::make_unique<LoopDevice>(image, LoopOptions{.partscan = true});
    if (!disk->ok()) GTEST_SKIP() << disk->why();
    p1 = node(1);
    p2 = node(2);
    if (p1.empty() || p2.empty()) GTEST_SKIP() << "the partitions did not appear (no partition scanning here)";
    ASSERT_EQ(test::run("mkfs.ext4 -q -F " + p1).exit_code, 0);
    std::filesystem::create_directory(dir / "p1mnt");
    mnt = std::make_unique<test::MountPoint>(p1, dir / "p1mnt");
    if (!mnt->ok()) GTEST_SKIP() << "mount " << p1 << " failed";
  }
  void TearDown() override {
    mnt.reset();
    while (!extra.empty()) extra.pop_back();
    disk.reset();
  }

  void write_mbr() {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    auto entry = [&](int slot, std::uint32_t start) {
      unsigned char e[16] = {0x00, 0, 0, 0, 0x83, 0, 0, 0};
      for (int i = 0; i < 4; ++i) e[8 + i] = std::uint8_t(start >> (8 * i));
      for (int i = 0; i < 4; ++i) e[12 + i] = std::uint8_t(part_sectors >> (8 * i));
      f.seekp(446 + 16 * slot);
      f.write(reinterpret_cast<const char*>(e), 16);
    };
    entry(0, p1_start);
    entry(1, p2_start);
    f.seekp(510);
    f.write("\x55\xAA", 2);
  }

  // /dev/loopNpK, made from sysfs when udev is absent (containers); "" if it never appears.
  std::string node(int k) {
    const std::string name = std::filesystem::path(disk->path()).filename().string() + "p" + std::to_string(k);
    const std::string sys_dev = "/sys/class/block/" + name + "/dev";
    for (int i = 0; i < 20 && !std::filesystem::exists(sys_dev); ++i) {
      if (i == 10) test::run("partx -a " + disk->path());
      ::usleep(100000);
    }
    if (!std::filesystem::exists(sys_dev)) return "";
    std::string path = "/dev/" + name;
    if (std::filesystem::exists(path)) return path;
    unsigned maj = 0, min = 0;
    char colon = 0;
    std::ifstream(sys_dev) >> maj >> colon >> min;
    path = dir / name;
    if (::mknod(path.c_str(), S_IFBLK | 0600, makedev(maj, min)) != 0) return "";
    return path;
  }

  std::unique_ptr<LoopDevice> disk;
  std::string p1, p2;
};

TEST_F(PartitionedDisk, LoopDeviceOverTheMountedPartitionIsInUse) {
  LoopDevice& over = bind(p1);
  expect_write_refused(over.path(), dir / "p1mnt");
}

TEST_F(PartitionedDisk, LoopWindowOfTheDiskIsInUseOnlyWhereItOverlapsTheMountedPartition) {
  LoopDevice& inside_p1 = bind(disk->path(), {.offset = (p1_start + 8) * 512, .sizelimit = 1 << 20});
  expect_write_refused(inside_p1.path(), dir / "p1mnt");
  LoopDevice& inside_p2 = bind(disk->path(), {.offset = p2_start * 512});
  EXPECT_EQ(use_of(inside_p2.path()), std::nullopt);
  EXPECT_EQ(use_of(p2), std::nullopt) << "the other partition is free";
  expect_write_refused(disk->path(), dir / "p1mnt");
  expect_write_refused(image, dir / "p1mnt");
  // A second loop over the same image with the partitions' layout: its p1 is p1.
  LoopDevice& again = bind(image, {.offset = p1_start * 512, .sizelimit = part_sectors * 512});
  expect_write_refused(again.path(), dir / "p1mnt");
}

// A block device held open exclusively (O_EXCL), as another program holds
// it: opened here, by this test, the way such a program would.
class Held {
 public:
  explicit Held(const std::string& dev) : fd_(::open(dev.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC)) {}
  ~Held() { release(); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  bool ok() const { return fd_ >= 0; }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// A write open of path is refused as in use, naming `held`; so is the dry run.
void expect_held_refusal(const std::string& path, const std::string& held) {
  OpenOptions o;
  o.write = true;
  o.direct = false;
  auto r = Device::open(path, o);
  ASSERT_FALSE(r.has_value()) << path << " was opened for writing while " << held << " is held";
  EXPECT_EQ(r.error().code, Errc::busy) << r.error().message();
  EXPECT_NE(r.error().message().find(held + " is held open exclusively"), std::string::npos) << r.error().message();
  o.write = false;
  o.check_write = true;
  auto dry = Device::open(path, o);
  ASSERT_FALSE(dry.has_value());
  EXPECT_EQ(dry.error().message(), r.error().message());
}

TEST(HeldDevice, TheImageBehindAHeldLoopDeviceIsInUseAndFreeOnceLetGo) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  const std::string image = dir / "held.img";
  test::make_file(image, 8 << 20);
  LoopDevice loop(image);
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  LoopDevice beside(image);
  if (!beside.ok()) GTEST_SKIP() << beside.why();
  EXPECT_EQ(use_of(image), std::nullopt) << "an attached loop device nobody holds leaves its file free";
  Held hold(loop.path());
  ASSERT_TRUE(hold.ok());
  const auto use = use_of(image);
  ASSERT_TRUE(use.has_value()) << image << " is not in use while " << loop.path() << " is held";
  EXPECT_EQ(use->where, kHeld);
  EXPECT_EQ(use->device, loop.path());
  EXPECT_EQ(describe_use(*use), "in use by a mount, md/dm or another program: " + loop.path() +
                                    " is held open exclusively and is stacked on it");
  expect_held_refusal(image, loop.path());
  // A second loop device over the same file: the held one shares its storage.
  const auto other = use_of(beside.path());
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(describe_use(*other), "in use by a mount, md/dm or another program: " + loop.path() +
                                      " is held open exclusively (both use " + image + ")");
  // The held device itself is left to the caller's own O_EXCL open.
  EXPECT_EQ(use_of(loop.path()), std::nullopt);
  hold.release();
  EXPECT_EQ(use_of(image), std::nullopt);
  OpenOptions o;
  o.write = true;
  o.direct = false;
  EXPECT_TRUE(Device::open(image, o).has_value());
}

TEST(HeldDevice, AWindowOfAHeldLoopDeviceConflictsOnlyWhereItOverlaps) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  const std::string image = dir / "win.img";
  test::make_file(image, 8 << 20);
  LoopDevice loop(image, {.offset = 4 << 20});
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  Held hold(loop.path());
  ASSERT_TRUE(hold.ok());
  EXPECT_EQ(use_of(image, 0, 4 << 20), std::nullopt);
  EXPECT_TRUE(use_of(image, (4 << 20) - 512, (4 << 20) + 512).has_value());
}

TEST_F(PartitionedDisk, AHeldPartitionIsInUseWhereItLiesAndTheOtherIsFree) {
  if (IsSkipped()) return;
  if (p2.rfind("/dev/", 0) != 0) GTEST_SKIP() << "no /dev node for the partition (no udev): find_use cannot ask it";
  Held hold(p2);
  ASSERT_TRUE(hold.ok());
  // The disk is busy now for both partitions' sake; neither makes it held itself.
  LoopDevice& inside_p2 = bind(disk->path(), {.offset = (p2_start + 8) * 512, .sizelimit = 1 << 20});
  expect_held_refusal(inside_p2.path(), p2);
  LoopDevice& gap = bind(disk->path(), {.sizelimit = p1_start * 512});
  EXPECT_EQ(use_of(gap.path()), std::nullopt) << "before the partitions: neither is there";
}

// The dm-sibling rule, on stacks made by hand (no device-mapper is needed).
StorageExtent extent_on(dev_t bottom, std::vector<StackLink> links) {
  return {false, bottom, 0, 0, kToEnd, "/dev/sda", std::move(links)};
}

TEST(SharesStorage, TwoLogicalVolumesOnOnePhysicalVolumeAreApart) {
  const dev_t sda = makedev(8, 0), sda2 = makedev(8, 2), lv1 = makedev(253, 0), lv2 = makedev(253, 1);
  const auto a = extent_on(sda, {{lv1, true}, {sda2, false}});
  const auto b = extent_on(sda, {{lv2, true}, {sda2, false}});
  EXPECT_FALSE(shares_storage(a, b));
  // The physical volume itself, and a loop device over one LV, do share.
  EXPECT_TRUE(shares_storage(a, extent_on(sda, {{sda2, false}})));
  EXPECT_TRUE(shares_storage(a, extent_on(sda, {{makedev(7, 3), false}, {lv1, true}, {sda2, false}})));
  EXPECT_TRUE(shares_storage(a, a));
}

TEST(SharesStorage, RangesMustOverlapAndFilesCompareByInode) {
  StorageExtent f{true, makedev(254, 0), 12, 0, 1 << 20, "/img", {}};
  StorageExtent g = f;
  g.begin = 1 << 20;
  g.end = 2 << 20;
  EXPECT_FALSE(shares_storage(f, g));  // adjacent, not overlapping
  g.begin = (1 << 20) - 1;
  EXPECT_TRUE(shares_storage(f, g));
  g.ino = 13;
  EXPECT_FALSE(shares_storage(f, g));
}

}  // namespace
}  // namespace fsio
