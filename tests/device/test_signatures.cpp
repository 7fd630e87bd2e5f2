// probe_signatures against images made by the real peer tools.
#include <gtest/gtest.h>

#include <fstream>

#include "libfsio/device.hpp"
#include "libfsio/signatures.hpp"
#include "tests/device/helpers.hpp"

namespace fsio {
namespace {

using test::open_ok;
using test::TempDir;

std::vector<Signature> probe(const std::string& path, OpenOptions o = {}) {
  Device d = open_ok(path, o);
  auto r = probe_signatures(d);
  if (!r) throw std::runtime_error("probe_signatures failed: " + r.error().message());
  return *r;
}

const Signature* find_type(const std::vector<Signature>& sigs, const std::string& type) {
  for (const auto& s : sigs)
    if (s.type == type) return &s;
  return nullptr;
}

class Signatures : public ::testing::Test {
 protected:
  TempDir dir;
};

TEST_F(Signatures, ZeroImageHasNone) {
  test::make_file(dir / "zero.img", 8 << 20);
  EXPECT_TRUE(probe(dir / "zero.img").empty());
}

// ext4's magic 0xEF53 is s_magic at superblock offset 0x38; the superblock
// starts at byte 1024, so the magic sits at 0x438.
TEST_F(Signatures, Ext4MagicIsFoundAt0x438WithItsLabel) {
  if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
  test::make_file(dir / "ext4.img", 8 << 20);
  const auto mk = test::run("mkfs.ext4 -q -F -L data " + dir / "ext4.img");
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  for (bool direct : {true, false}) {  // an O_DIRECT descriptor must work too
    OpenOptions o;
    o.direct = direct;
    auto sigs = probe(dir / "ext4.img", o);
    const Signature* ext4 = find_type(sigs, "ext4");
    ASSERT_NE(ext4, nullptr) << "direct=" << direct;
    EXPECT_EQ(ext4->offset, 0x438u);
    EXPECT_EQ(ext4->length, 2u);
    EXPECT_EQ(ext4->usage, "filesystem");
    EXPECT_EQ(ext4->label, "data");
    EXPECT_EQ(describe(*ext4), "ext4 filesystem (label 'data')");
  }
}

// mkfs.fat on 8 MiB makes FAT12; libblkid keys on BS_FilSysType "FAT12   "
// at 0x36 (FAT12/16 boot sector layout).
TEST_F(Signatures, VfatMagicIsFoundAtFilSysType) {
  if (!test::have_tool("mkfs.fat")) GTEST_SKIP() << "mkfs.fat is missing (install dosfstools)";
  test::make_file(dir / "fat.img", 8 << 20);
  const auto mk = test::run("mkfs.fat -n CARD " + dir / "fat.img");
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  auto sigs = probe(dir / "fat.img");
  const Signature* fat = find_type(sigs, "vfat");
  ASSERT_NE(fat, nullptr);
  EXPECT_EQ(fat->offset, 0x36u);
  EXPECT_EQ(fat->length, 8u);
  EXPECT_EQ(fat->label, "CARD");
  EXPECT_EQ(test::read_string(dir / "fat.img", fat->offset, fat->length), "FAT12   ");
}

TEST_F(Signatures, SignatureInsideAWindowIsReportedWindowRelative) {
  if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
  test::make_file(dir / "part.img", 8 << 20);
  const auto mk = test::run("mkfs.ext4 -q -F " + dir / "part.img");
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  test::make_file(dir / "disk.img", 16 << 20);
  const auto dd =
      test::run("dd if=" + dir / "part.img" + " of=" + dir / "disk.img" + " bs=1M seek=4 conv=notrunc status=none");
  ASSERT_EQ(dd.exit_code, 0) << dd.output;
  OpenOptions o;
  o.offset = 4 << 20;
  o.length = 8 << 20;
  auto sigs = probe(dir / "disk.img", o);
  const Signature* ext4 = find_type(sigs, "ext4");
  ASSERT_NE(ext4, nullptr);
  EXPECT_EQ(ext4->offset, 0x438u);
  EXPECT_EQ(find_type(probe(dir / "disk.img"), "ext4"), nullptr);  // not at the disk's start
}

// Every signature is listed, not just the winner: an MBR written over an
// ext4 image leaves both, and a formatter must see (and wipe) both.
TEST_F(Signatures, AllSignaturesAreListedIncludingAPartitionTable) {
  if (!test::have_tool("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 is missing (install e2fsprogs)";
  test::make_file(dir / "both.img", 8 << 20);
  const auto mk = test::run("mkfs.ext4 -q -F " + dir / "both.img");
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  {
    std::fstream f(dir / "both.img", std::ios::in | std::ios::out | std::ios::binary);
    unsigned char entry[16] = {0x00, 0, 0, 0, 0x83, 0, 0, 0, 0x00, 0x08, 0, 0, 0x00, 0x38, 0, 0};
    f.seekp(446);
    f.write(reinterpret_cast<const char*>(entry), 16);
    f.seekp(510);
    f.write("\x55\xAA", 2);
  }
  auto sigs = probe(dir / "both.img");
  const Signature* dos = find_type(sigs, "dos");
  ASSERT_NE(dos, nullptr);
  EXPECT_EQ(dos->usage, "partition_table");
  EXPECT_EQ(dos->offset, 0x1FEu);
  EXPECT_EQ(dos->length, 2u);
  EXPECT_EQ(describe(*dos), "dos partition table");
  ASSERT_NE(find_type(sigs, "ext4"), nullptr);
}

}  // namespace
}  // namespace fsio
