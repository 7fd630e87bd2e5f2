// check_apart (apart.hpp): what a tool writes may not share storage with
// what it reads, through any path, hard link, loop device or stack of them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "libfsio/apart.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::LoopDevice;
using test::TempDir;

// The refusal's message; "" when check_apart allows it.
std::string refusal(const StorageRef& target, const std::vector<StorageRef>& reads) {
  auto st = check_apart(target, reads);
  if (st) return "";
  EXPECT_EQ(st.error().code, Errc::busy) << st.error().message();
  return st.error().message();
}

TEST(CheckApart, TheSameFileByAnotherPathOrAHardLinkIsRefused) {
  TempDir dir;
  const std::string a = dir / "a.img", b = dir / "b.img";
  test::make_file(a, 1 << 20);
  test::make_file(b, 1 << 20);
  EXPECT_EQ(refusal({"", a}, {{"the source", b}}), "");
  ASSERT_EQ(::link(a.c_str(), (dir / "hard.img").c_str()), 0);
  EXPECT_EQ(refusal({"", dir / "hard.img"}, {{"the source", a}}),
            dir / "hard.img" + ": shares storage with the source " + a + " (the same file); refusing to write to it");
  EXPECT_EQ(refusal({"", dir.path() + "/./a.img"}, {{"the input", a}}),
            dir.path() + "/./a.img: shares storage with the input " + a + " (the same file); refusing to write to it");
}

TEST(CheckApart, WhatDoesNotExistYetOrIsNoStorageSharesNothing) {
  TempDir dir;
  test::make_file(dir / "a.img", 4096);
  EXPECT_EQ(refusal({"", dir / "new.img"}, {{"the source", dir / "a.img"}}), "");
  EXPECT_EQ(refusal({"", dir / "a.img"}, {{"the source", dir / "missing"}}), "");
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_EQ(refusal({"", dir / "a.img"}, {{"the input", "standard input", pipe_fds[0]}}), "");
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(CheckApart, ADescriptorIsJudgedByWhatItIsNotByItsName) {
  TempDir dir;
  const std::string a = dir / "a.img";
  test::make_file(a, 4096);
  const int fd = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(refusal({"", a}, {{"the input", "standard input", fd}}),
            a + ": shares storage with the input standard input (the same file); refusing to write to it");
  ::close(fd);
}

TEST(CheckApart, ALoopDeviceOverTheFileIsRefusedBothWays) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  const std::string img = dir / "e.img";
  test::make_file(img, 4 << 20);
  LoopDevice loop(img);
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  const std::string l = loop.path();
  EXPECT_EQ(refusal({"", l}, {{"the input", img}}), l + ": shares storage with the input " + img + " (" + l +
                                                        " is a loop device over " + img + "); refusing to write to it");
  EXPECT_EQ(refusal({"", img}, {{"the source", l}}), img + ": shares storage with the source " + l + " (" + l +
                                                         " is a loop device over " + img +
                                                         "); refusing to write to it");
  LoopDevice second(img);
  if (!second.ok()) GTEST_SKIP() << second.why();
  EXPECT_EQ(refusal({"", second.path()}, {{"the source", l}}), second.path() + ": shares storage with the source " + l +
                                                                   " (both use " + img + "); refusing to write to it");
  LoopDevice top(second.path());
  if (!top.ok()) GTEST_SKIP() << top.why();
  EXPECT_EQ(refusal({"", top.path()}, {{"the input", img}}),
            top.path() + ": shares storage with the input " + img + " (" + top.path() + " is a loop device over " +
                second.path() + ", which is stacked on " + img + "); refusing to write to it");
  // The file as a descriptor (standard input) is named by the loop device's path for it.
  const int fd = ::open(img.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(refusal({"", l}, {{"the input", "standard input", fd}}),
            l + ": shares storage with the input standard input (" + l + " is a loop device over " + img +
                ", which is standard input); refusing to write to it");
  ::close(fd);
}

TEST(CheckApart, WindowsThatDoNotOverlapDoNotConflict) {
  if (!test::is_root()) GTEST_SKIP() << "loop devices need root";
  TempDir dir;
  const std::string img = dir / "w.img";
  test::make_file(img, 8 << 20);
  LoopDevice tail(img, {.offset = 4 << 20});
  if (!tail.ok()) GTEST_SKIP() << tail.why();
  EXPECT_EQ(refusal({"", img, -1, 0, 4 << 20}, {{"the source", tail.path()}}), "");
  EXPECT_NE(refusal({"", img, -1, 0, (4 << 20) + 512}, {{"the source", tail.path()}}), "");
  // The window of the read counts too: the first 4 MiB of the file are not the loop device's.
  EXPECT_EQ(refusal({"", tail.path()}, {{"the input", img, -1, 0, 4 << 20}}), "");
}

TEST(CheckApart, ATreeHoldingTheTargetOrWhatItStandsOnIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir / "src/sub");
  test::make_file(dir / "src/sub/f.bin", 4096);
  test::make_file(dir / "other.img", 1 << 20);
  const StorageRef tree{"the source tree", dir / "src", -1, 0, kToEnd, true};
  EXPECT_EQ(refusal({"", dir / "other.img"}, {tree}), "");
  test::make_file(dir / "src/sub/e.img", 1 << 20);
  EXPECT_EQ(refusal({"", dir / "src/sub/e.img"}, {tree}),
            dir / "src/sub/e.img" + ": shares storage with " + dir / "src/sub/e.img" + ", a file of the source tree " +
                dir / "src" + " (the same file); refusing to write to it");
  // A symbolic link in the tree is copied as a link, not read: not a conflict.
  std::filesystem::remove(dir / "src/sub/e.img");
  std::filesystem::create_symlink(dir / "other.img", dir / "src/link");
  EXPECT_EQ(refusal({"", dir / "other.img"}, {tree}), "");
  if (!test::is_root()) return;
  LoopDevice loop(dir / "src/sub/f.bin");
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  EXPECT_NE(refusal({"", loop.path()}, {tree})
                .find("(" + loop.path() + " is a loop device over " + dir / "src/sub/f.bin" + ")"),
            std::string::npos);
}

TEST(CheckApart, SameIsFineAllowsTheSameTargetButNotAnotherWayToIt) {
  TempDir dir;
  const std::string img = dir / "t.img";
  test::make_file(img, 1 << 20);
  StorageRef other{"the target of job b (0),", img};
  other.same_is_fine = true;
  EXPECT_EQ(refusal({"", img}, {other}), "");
  if (!test::is_root()) return;
  LoopDevice loop(img);
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  EXPECT_NE(refusal({"", loop.path()}, {other}), "");
}

}  // namespace
}  // namespace fsio
