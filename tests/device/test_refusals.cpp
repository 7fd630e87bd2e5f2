// Device::open's refusals other than "in use": read-only targets, an
// existing path where a new image was asked for, a device another program
// holds exclusively; check_write (what --dry-run uses) meets the same ones;
// and a file the open created is gone again when the open fails.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "libfsio/device.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::TempDir;

OpenOptions for_writing() {
  OpenOptions o;
  o.write = true;
  o.direct = false;
  return o;
}

OpenOptions dry_run() {
  OpenOptions o;
  o.check_write = true;
  o.direct = false;
  return o;
}

// Both a write open and a check_write open must refuse, with one message.
std::string refusal(const std::string& path) {
  auto w = Device::open(path, for_writing());
  auto c = Device::open(path, dry_run());
  if (w || c) throw std::runtime_error(path + ": " + (w ? "write" : "check_write") + " open was not refused");
  EXPECT_EQ(w.error().message(), c.error().message());
  return w.error().message();
}

TEST(ReadOnly, LoopDeviceBoundReadOnlyIsRefusedSayingSo) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  test::make_file(dir / "img", 4 << 20);
  test::LoopDevice loop(dir / "img", {.read_only = true});
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  const std::string msg = refusal(loop.path());
  EXPECT_NE(msg.find("read-only"), std::string::npos) << msg;
  EXPECT_NE(msg.find("BLKROGET"), std::string::npos) << msg;
  // Reading it is fine.
  OpenOptions r;
  r.direct = false;
  EXPECT_TRUE(Device::open(loop.path(), r).has_value());
}

TEST(ReadOnly, FileWithNoWriteBitsIsRefusedEvenForRoot) {
  TempDir dir;
  const std::string img = dir / "img";
  test::make_file(img, 1 << 20);
  ASSERT_EQ(::chmod(img.c_str(), 0444), 0);
  const std::string msg = refusal(img);
  EXPECT_NE(msg.find("read-only file (mode 0444)"), std::string::npos) << msg;
  ASSERT_EQ(::chmod(img.c_str(), 0644), 0);
  EXPECT_TRUE(Device::open(img, for_writing()).has_value());
}

TEST(ReadOnly, FileOnAReadOnlyMountIsRefused) {
  if (!test::is_root()) GTEST_SKIP() << "mounting needs root";
  TempDir dir;
  const std::string mnt = dir / "ro";
  std::filesystem::create_directory(mnt);
  test::MountPoint tmpfs("tmpfs", mnt, "-t tmpfs -o size=4m");
  if (!tmpfs.ok()) GTEST_SKIP() << "mount -t tmpfs failed";
  test::make_file(mnt + "/img", 1 << 20);
  ASSERT_EQ(test::run("mount -o remount,ro '" + mnt + "'").exit_code, 0);
  const std::string msg = refusal(mnt + "/img");
  EXPECT_NE(msg.find("read-only"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Read-only file system"), std::string::npos) << msg;
}

TEST(CreateNew, AnExistingFileOrAnySymlinkIsRefusedAndNothingIsCreated) {
  TempDir dir;
  OpenOptions o = for_writing();
  o.create_size = 1 << 20;
  o.create_new = true;
  test::make_file(dir / "there", 4096, 'x');
  auto r = Device::open(dir / "there", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::busy);
  EXPECT_EQ(std::filesystem::file_size(dir / "there"), 4096u) << "an existing file must be left alone";
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  r = Device::open(dir / "dangling", o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("already exists"), std::string::npos) << r.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir / "nowhere")) << "a dangling symlink was followed";
}

TEST(CreateNew, AFailedOpenRemovesTheFileItCreated) {
  TempDir dir;
  OpenOptions o = for_writing();
  o.create_size = 1ull << 50;  // 1 PiB: more than ext4, xfs or tmpfs take (EFBIG)
  o.create_new = true;
  auto r = Device::open(dir / "huge", o);
  ASSERT_FALSE(r) << "a 1 PiB file was created here; the test needs a filesystem with a smaller limit";
  EXPECT_NE(r.error().message().find("huge"), std::string::npos) << r.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir / "huge")) << "the failed open left " << dir / "huge";
  o.create_size = std::uint64_t(1) << 63;  // more than off_t holds: refused before anything is made
  r = Device::open(dir / "huge", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "huge"));
}

TEST(CreateNew, RemoveCreatedUndoesOnlyWhatThisOpenMade) {
  TempDir dir;
  OpenOptions o = for_writing();
  o.create_size = 1 << 20;
  o.create_new = true;
  auto made = Device::open(dir / "new", o);
  ASSERT_TRUE(made) << made.error().message();
  EXPECT_TRUE(made->created());
  ASSERT_TRUE(made->remove_created());
  EXPECT_FALSE(std::filesystem::exists(dir / "new"));
  // Extending an existing file is not creating it.
  test::make_file(dir / "old", 4096);
  o.create_new = false;
  auto old = Device::open(dir / "old", o);
  ASSERT_TRUE(old) << old.error().message();
  EXPECT_FALSE(old->created());
  ASSERT_TRUE(old->remove_created());
  EXPECT_TRUE(std::filesystem::exists(dir / "old"));
}

TEST(CheckWrite, ADeviceHeldExclusivelyByAnotherProgramIsRefused) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  test::make_file(dir / "img", 4 << 20);
  test::LoopDevice loop(dir / "img");
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  const int held = ::open(loop.path().c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  ASSERT_GE(held, 0) << "cannot claim " << loop.path();
  auto r = Device::open(loop.path(), dry_run());
  ::close(held);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::busy);
  EXPECT_NE(r.error().message().find("exclusive"), std::string::npos) << r.error().message();
}

TEST(CheckWrite, AFreeTargetOpensReadOnly) {
  TempDir dir;
  test::make_file(dir / "img", 1 << 20);
  auto r = Device::open(dir / "img", dry_run());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(r->writable());
  EXPECT_EQ(::fcntl(r->fd(), F_GETFL) & O_ACCMODE, O_RDONLY);
}

}  // namespace
}  // namespace fsio
