// CreatedFile: the image a run created goes away when the run fails (or
// forgets to say), stays when it succeeds, and only that very file goes.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "libfsio/created_file.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::TempDir;

OpenOptions create_new() {
  OpenOptions o;
  o.write = true;
  o.direct = false;
  o.create_size = 1 << 20;
  o.create_new = true;
  return o;
}

bool exists(const std::string& path) { return std::filesystem::exists(std::filesystem::symlink_status(path)); }

TEST(CreatedFile, KeptWhenTheWorkSucceeds) {
  TempDir dir;
  {
    Device dev = test::open_ok(dir / "card.img", create_new());
    CreatedFile made(dev, "-C");
    EXPECT_TRUE(made.armed());
    made.keep();
    EXPECT_FALSE(made.armed());
  }
  EXPECT_TRUE(exists(dir / "card.img"));
}

TEST(CreatedFile, FailRemovesTheFileAndSaysSoAfterTheWholeMessage) {
  TempDir dir;
  const std::string path = dir / "card.img";
  Device dev = test::open_ok(path, create_new());
  CreatedFile made(dev, "-C");
  const Error e = made.fail(errno_error(ENOSPC, "write 4096 bytes at 0x100000").at(path));
  EXPECT_FALSE(exists(path));
  EXPECT_FALSE(made.armed());
  EXPECT_EQ(e.message(),
            path + ": write 4096 bytes at 0x100000: No space left on device; removed " + path + ", which -C had made");
  EXPECT_EQ(e.path, path) << "the error still names its device, so no caller names it again";
  EXPECT_EQ(e.code, Errc::io);
}

TEST(CreatedFile, ForgottenIsRemovedSilently) {
  TempDir dir;
  {
    Device dev = test::open_ok(dir / "card.img", create_new());
    CreatedFile made(dev, "--create");
  }
  EXPECT_FALSE(exists(dir / "card.img"));
}

TEST(CreatedFile, AnExistingFileIsNeverRemoved) {
  TempDir dir;
  test::make_file(dir / "old.img", 4096, 'x');
  OpenOptions o = create_new();
  o.create_new = false;  // extends, does not create
  {
    Device dev = test::open_ok(dir / "old.img", o);
    CreatedFile made(dev, "-C");
    EXPECT_FALSE(made.armed());
    const Error e = made.fail(make_error(Errc::io, "write failed").at(dev.path()));
    EXPECT_EQ(e.message(), dir / "old.img" + ": write failed");
  }
  EXPECT_TRUE(exists(dir / "old.img"));
}

TEST(CreatedFile, AFilePutInItsPlaceIsLeftAloneAndSaidSo) {
  TempDir dir;
  const std::string path = dir / "card.img";
  Device dev = test::open_ok(path, create_new());
  CreatedFile made(dev, "-C");
  test::make_file(dir / "other", 4096, 'o');
  std::filesystem::rename(dir / "other", path);  // someone else's file now
  const Error e = made.fail(make_error(Errc::io, "write failed").at(path));
  ASSERT_TRUE(exists(path));
  EXPECT_EQ(std::filesystem::file_size(path), 4096u);
  EXPECT_EQ(e.message(), path + ": write failed; left " + path + " alone: it is no longer the file -C had made");
}

TEST(CreatedFile, ASymlinkPutInItsPlaceIsNotFollowed) {
  TempDir dir;
  const std::string path = dir / "card.img";
  Device dev = test::open_ok(path, create_new());
  CreatedFile made(dev, "-C");
  std::filesystem::rename(path, dir / "moved.img");
  std::filesystem::create_symlink(dir / "moved.img", path);  // names the very file, through a link
  auto removed = made.remove();
  ASSERT_TRUE(removed);
  EXPECT_FALSE(*removed);
  EXPECT_TRUE(exists(path)) << "the link was removed in the file's place";
  EXPECT_TRUE(exists(dir / "moved.img"));
}

TEST(CreatedFile, MovedTheNewOwnerRemovesAndTheOldDoesNothing) {
  TempDir dir;
  Device dev = test::open_ok(dir / "card.img", create_new());
  CreatedFile first(dev, "-C");
  CreatedFile second(std::move(first));
  EXPECT_FALSE(first.armed());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_TRUE(second.armed());
  auto removed = second.remove();
  ASSERT_TRUE(removed);
  EXPECT_TRUE(*removed);
  EXPECT_FALSE(exists(dir / "card.img"));
  removed = second.remove();
  ASSERT_TRUE(removed);
  EXPECT_FALSE(*removed) << "removed once only";
}

}  // namespace
}  // namespace fsio
