// Errors say where, what and why: the device first, then the steps from the
// outermost in, then strerror. Device's own errors name their path; a
// caller's step and a caller naming the device again never repeat it.
#include <gtest/gtest.h>

#include <cerrno>

#include "libfsio/device.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::TempDir;

OpenOptions buffered() {
  OpenOptions o;
  o.direct = false;
  return o;
}

TEST(Error, PathThenContextThenStrerror) {
  Error e = errno_error(EIO, "write 4096 bytes at 0x100000").at("/dev/sdb");
  EXPECT_EQ(e.message(), "/dev/sdb: write 4096 bytes at 0x100000: Input/output error");
  e = std::move(e).wrap("write FAT");
  EXPECT_EQ(e.message(), "/dev/sdb: write FAT: write 4096 bytes at 0x100000: Input/output error");
  EXPECT_EQ(make_error(Errc::corrupt, "boot sector: bad signature").message(), "boot sector: bad signature");
  EXPECT_EQ(Error(Errc::io, EIO, "", "card.img").message(), "card.img: Input/output error");
}

TEST(Error, AtNamesADeviceOnlyWhenNoneIsNamedYet) {
  const Error inner = errno_error(EIO, "read 512 bytes at 0x0").at("card.img");
  EXPECT_EQ(Error(inner).at("other.img").message(), "card.img: read 512 bytes at 0x0: Input/output error");
  const Error content = make_error(Errc::corrupt, "boot sector: BPB_BytsPerSec 1000");
  EXPECT_EQ(Error(content).at("card.img").at("other.img").message(), "card.img: boot sector: BPB_BytsPerSec 1000");
}

TEST(Error, WithNoteFollowsStrerrorAndKeepsThePath) {
  const Error e = errno_error(ENOSPC, "write 512 bytes at 0x0").at("card.img").with_note("; removed card.img");
  EXPECT_EQ(e.message(), "card.img: write 512 bytes at 0x0: No space left on device; removed card.img");
  EXPECT_EQ(e.sys_errno, 0) << "strerror is in the text now, said once";
  EXPECT_EQ(e.path, "card.img");
  EXPECT_EQ(e.code, Errc::io);
}

TEST(DeviceErrors, OpenFailuresNameThePathOnce) {
  TempDir dir;
  const std::string missing = dir / "missing.img";
  auto r = Device::open(missing, buffered());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().path, missing);
  EXPECT_EQ(r.error().message(), missing + ": stat: No such file or directory");
  r = Device::open(dir.path(), buffered());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), dir.path() + ": not a block device or a regular file");
}

TEST(DeviceErrors, AWindowBeyondTheEndNamesThePathOffsetAndSize) {
  TempDir dir;
  const std::string img = dir / "img";
  test::make_file(img, 1 << 20);
  OpenOptions o = buffered();
  o.offset = 2 << 20;
  auto r = Device::open(img, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), img + ": window offset 0x200000 is beyond the end (size 0x100000)");
  o.offset = 0x80000;
  o.length = 0x100000;
  r = Device::open(img, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), img + ": window 0x80000+0x100000 ends beyond the end (size 0x100000)");
}

TEST(DeviceErrors, TheTopologyRefusalNamesThePath) {
  TempDir dir;
  const std::string img = dir / "img";
  test::make_file(img, 1 << 20);
  OpenOptions o = buffered();
  o.sector_size = 1000;
  auto r = Device::open(img, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), img + ": sector size 1000 is not a power of two between 512 and 65536");
}

TEST(DeviceErrors, TheEndOfDeviceGuardNamesThePathSizeOffsetAndDeviceSize) {
  TempDir dir;
  const std::string img = dir / "img";
  test::make_file(img, 10000);
  Device d = test::open_ok(img, buffered());
  auto beyond = d.clamp(10000, 512);
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().message(),
            img + ": request of 512 bytes at 0x2710 is beyond the end of the device (size 0x2710)");
  OpenOptions direct;
  Device dd = test::open_ok(img, direct);
  if (!dd.direct()) GTEST_SKIP() << dir.path() << ": " << dd.direct_fallback();
  auto tail = dd.clamp(9728, 4096);
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().message(), img +
                                        ": request of 4096 bytes at 0x2600 lies in the partial last sector "
                                        "(size 0x2710, 512-byte sectors)");
}

TEST(DeviceErrors, DiscardRefusalsNameThePathSizeAndOffset) {
  TempDir dir;
  const std::string img = dir / "img";
  test::make_file(img, 1 << 20);
  Device ro = test::open_ok(img, buffered());
  auto st = ro.discard(0, 4096);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), img + ": discard 4096 bytes at 0x0: not opened for writing");
  OpenOptions w = buffered();
  w.write = true;
  w.allow_mounted = true;
  Device rw = test::open_ok(img, w);
  st = rw.discard(0xff000, 0x2000);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            img + ": discard 8192 bytes at 0xff000: beyond the end of the device (size 0x100000)");
}

}  // namespace
}  // namespace fsio
