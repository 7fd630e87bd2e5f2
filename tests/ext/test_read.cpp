// Reading images made by mke2fs: every file and directory of the source tree
// read back through ext::Filesystem, cross-checked with debugfs dump; byte flips
// at spec offsets give a specific Errc::corrupt; the write gate refuses
// dirty, orphaned and unsupported images and leaves them byte-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "ext/fs.hpp"
#include "ext/inspect.hpp"
#include "tests/support/support.hpp"

namespace ext {
namespace {

namespace test = fsio::test;
namespace stdfs = std::filesystem;

void write_file(const std::string& path, const std::string& data) { std::ofstream(path, std::ios::binary) << data; }

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; i += 4) {       // four bytes a draw
    const std::uint32_t r = rng() | 0x01010101;  // never a zero byte, so no block turns into a hole
    std::memcpy(s.data() + i, &r, std::min<std::size_t>(4, n - i));
  }
  return s;
}

std::string slurp(const std::string& path) { return test::read_all(path); }

// The tree every image is populated with.
void make_tree(const std::string& root) {
  stdfs::create_directories(root + "/d1/d2/d3");
  stdfs::create_directories(root + "/many");
  write_file(root + "/small.txt", "hello, ext4\n");
  write_file(root + "/d1/d2/d3/deep.txt", random_bytes(5000, 1));
  write_file(root + "/big.bin", random_bytes(9 << 20, 2));  // more than one 1 KiB-block group (8 MiB)
  for (int i = 0; i < 300; ++i) write_file(root + "/many/file" + std::to_string(i), "n" + std::to_string(i));
  // Sparse: 16 islands of 4 KiB, 64 KiB apart -> 16 extents -> an extent tree of depth 1.
  {
    std::ofstream f(root + "/frag.bin", std::ios::binary);
    for (int i = 0; i < 16; ++i) {
      f.seekp(std::streamoff(i) * 65536);
      f << random_bytes(4096, 10 + i);
    }
  }
  stdfs::create_symlink("small.txt", root + "/link");
}

struct Image {
  const char* name;
  const char* mkfs;  // mke2fs arguments before -d
};

const Image kImages[] = {
    {"ext4_1k", "-t ext4 -b 1024"},
    {"ext4_2k", "-t ext4 -b 2048"},
    {"ext4_4k", "-t ext4 -b 4096"},
    {"ext4_no_csum", "-t ext4 -b 1024 -O ^metadata_csum"},
    {"ext4_no_64bit", "-t ext4 -b 4096 -O ^64bit"},
    {"ext4_csum_seed", "-t ext4 -b 1024 -O metadata_csum_seed"},
    {"ext4_uninit_bg", "-t ext4 -b 1024 -O ^metadata_csum,uninit_bg"},
    {"ext3", "-t ext3 -b 1024"},
    {"ext2", "-t ext2 -b 4096"},
};

class ReadImage : public ::testing::TestWithParam<Image> {
 protected:
  void SetUp() override {
    for (const char* t : {"mke2fs", "debugfs", "e2fsck"})
      if (!test::have_tool(t)) GTEST_SKIP() << t << " is not installed; reading not checked against peers";
    src_ = dir_ / "src";
    img_ = dir_ / "fs.img";
    make_tree(src_);
    const auto r = test::run("mke2fs -q -F " + std::string(GetParam().mkfs) + " -d " + src_ + " " + img_ + " 64M");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::unique_ptr<Filesystem> open() {
    auto fs = Filesystem::open(img_, OpenOptions{});
    EXPECT_TRUE(fs.has_value()) << fs.error().message();
    return fs ? std::move(*fs) : nullptr;
  }
  std::string read(Filesystem& fs, const std::string& path) {
    std::string out;
    auto ino = fs.lookup(path);
    EXPECT_TRUE(ino.has_value()) << path << ": " << ino.error().message();
    if (!ino) return out;
    auto inode = fs.read_inode(*ino);
    EXPECT_TRUE(inode.has_value()) << inode.error().message();
    auto st = fs.read_file(*inode, [&](std::span<const std::byte> d) -> fsio::Status {
      out.append(reinterpret_cast<const char*>(d.data()), d.size());
      return {};
    });
    EXPECT_TRUE(st.has_value()) << path << ": " << st.error().message();
    return out;
  }
  // Every file and directory of the source tree, as the library reads it.
  void compare_tree(Filesystem& fs) {
    int files = 0, dirs = 0;
    for (const auto& e : stdfs::recursive_directory_iterator(src_)) {
      const std::string rel = e.path().string().substr(src_.size());
      if (e.is_symlink()) continue;
      if (e.is_regular_file()) {
        ASSERT_TRUE(read(fs, rel) == slurp(e.path())) << rel << " differs from the source";
        ++files;
      } else if (e.is_directory()) {
        std::set<std::string> want, got;
        for (const auto& c : stdfs::directory_iterator(e.path())) want.insert(c.path().filename());
        auto list = list_dir(fs, rel, false);
        ASSERT_TRUE(list.has_value()) << list.error().message();
        for (const auto& x : *list) got.insert(x.name);
        EXPECT_EQ(got, want) << rel;
        ++dirs;
      }
    }
    EXPECT_EQ(files, 304);
    EXPECT_EQ(dirs, 4);
  }
  test::TempDir dir_;
  std::string src_, img_;
};

TEST_P(ReadImage, EveryFileAndDirectoryMatchesTheSourceTree) {
  auto fs = open();
  ASSERT_TRUE(fs);
  compare_tree(*fs);
  auto st = stat_path(*fs, "/link");
  ASSERT_TRUE(st.has_value()) << st.error().message();
  EXPECT_EQ(st->inode.symlink_target, "small.txt");
}

TEST_P(ReadImage, FilesReadTheSameAsDebugfsDump) {
  auto fs = open();
  ASSERT_TRUE(fs);
  for (const char* p : {"/big.bin", "/frag.bin", "/d1/d2/d3/deep.txt"}) {
    const auto r = test::run("rm -f " + dir_ / "peer" + "; debugfs -R 'dump " + std::string(p) + " " + dir_ / "peer" +
                             "' " + img_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string peer = slurp(dir_ / "peer");
    EXPECT_GT(peer.size(), 0u) << p;
    EXPECT_TRUE(read(*fs, p) == peer) << p << " differs from debugfs cat (" << peer.size() << " bytes)";
  }
}

TEST_P(ReadImage, HtreeIndexedDirectoriesReadLinearly) {
  // e2fsck -D rebuilds directories; with dir_index a multi-block one gets an htree.
  const auto r = test::run("e2fsck -fyD " + img_);
  ASSERT_LE(r.exit_code, 1) << r.output;
  auto fs = open();
  ASSERT_TRUE(fs);
  auto many = fs->read_inode(*fs->lookup("/many"));
  ASSERT_TRUE(many.has_value());
  if (fs->layout().has_compat(EXT2_FEATURE_COMPAT_DIR_INDEX)) {
    EXPECT_TRUE(many->flags() & EXT4_INDEX_FL) << "e2fsck -D did not index /many";
  }
  compare_tree(*fs);
}

INSTANTIATE_TEST_SUITE_P(Mke2fs, ReadImage, ::testing::ValuesIn(kImages),
                         [](const auto& info) { return std::string(info.param.name); });

// Byte flips at spec offsets in a 1 KiB-block image (superblock at 1024,
// descriptors in block 2).
class Corrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_tool("mke2fs")) GTEST_SKIP() << "mke2fs is not installed";
    src_ = dir_ / "src";
    img_ = dir_ / "fs.img";
    make_tree(src_);
  }
  void make(const std::string& opts) {
    const auto r = test::run("mke2fs -q -F -t ext4 -b 1024 " + opts + " -d " + src_ + " " + img_ + " 64M");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  void poke(std::uint64_t offset, std::uint8_t xor_mask) {
    std::fstream f(img_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(std::streamoff(offset));
    char c;
    f.get(c);
    f.seekp(std::streamoff(offset));
    f.put(char(c ^ xor_mask));
  }
  // Where the library finds an object (used only to aim the flip).
  std::uint64_t block_of(const std::string& path, bool tree_block) {
    auto fs = Filesystem::open(img_, OpenOptions{});
    EXPECT_TRUE(fs.has_value());
    auto inode = (*fs)->read_inode(*(*fs)->lookup(path));
    std::uint64_t found = 0;
    auto st = walk_mapping(
        *inode, (*fs)->layout(), (*fs)->reader(),
        [&](const Extent& e) -> fsio::Status {
          if (!tree_block && !found) found = e.physical;
          return {};
        },
        [&](std::uint64_t b) {
          if (tree_block && !found) found = b;
        });
    EXPECT_TRUE(st.has_value());
    return found;
  }
  // Opening and reading every file must fail with Errc::corrupt naming `what`.
  void expect_corrupt(const std::string& what) {
    auto fs = Filesystem::open(img_, OpenOptions{});
    fsio::Error err;
    if (!fs) {
      err = fs.error();
    } else {
      bool failed = false;
      for (const char* p : {"/many", "/frag.bin", "/big.bin", "/small.txt"}) {
        auto ino = (*fs)->lookup(p);
        if (!ino) {
          err = ino.error();
          failed = true;
          break;
        }
        auto inode = (*fs)->read_inode(*ino);
        if (!inode) {
          err = inode.error();
          failed = true;
          break;
        }
        auto r = inode->is_dir() ? list_dir(**fs, p, true).has_value() ? fsio::Status{}
                                                                       : fsio::Status(list_dir(**fs, p, true).error())
                                 : (*fs)->read_file(*inode, [](auto) { return fsio::Status{}; });
        if (!r) {
          err = r.error();
          failed = true;
          break;
        }
      }
      ASSERT_TRUE(failed) << "no error for a flip that should give: " << what;
    }
    EXPECT_EQ(err.code, fsio::Errc::corrupt) << err.message();
    EXPECT_NE(err.message().find(what), std::string::npos) << err.message();
  }
  test::TempDir dir_;
  std::string src_, img_;
};

TEST_F(Corrupt, SuperblockMagic) {
  make("");
  poke(1024 + 0x38, 0xFF);
  expect_corrupt("bad magic 0xEFAC (expected 0xEF53)");
}

TEST_F(Corrupt, SuperblockChecksum) {
  make("");
  poke(1024 + 0x18, 0x20);
  expect_corrupt("s_checksum");
}

TEST_F(Corrupt, SuperblockFieldWithoutChecksum) {
  make("-O ^metadata_csum");
  poke(1024 + 0x18, 0x20);
  expect_corrupt("s_log_block_size 32");
}

TEST_F(Corrupt, SuperblockInodesCount) {
  make("-O ^metadata_csum");
  poke(1024 + 0x00, 0x01);
  expect_corrupt("s_inodes_count");
}

TEST_F(Corrupt, DescriptorChecksum) {
  make("");
  poke(2048 + 0x0C, 0x01);
  expect_corrupt("ext group descriptor 0: bg_checksum");
}

TEST_F(Corrupt, DescriptorCrc16) {
  make("-O ^metadata_csum,uninit_bg");
  poke(2048 + 0x0E, 0x01);  // bg_free_inodes_count_lo of group 0
  expect_corrupt("ext group descriptor 0: bg_checksum");
}

TEST_F(Corrupt, DescriptorInodeTableOutsideWithoutChecksum) {
  make("-O ^metadata_csum,^uninit_bg,^64bit");
  poke(2048 + 0x0B, 0x40);
  expect_corrupt("bg_inode_table");
}

TEST_F(Corrupt, ExtentLeafMagic) {
  make("");
  poke(block_of("/frag.bin", true) * 1024 + 0, 0xFF);
  expect_corrupt("bad eh_magic");
}

TEST_F(Corrupt, ExtentLeafChecksum) {
  make("");
  poke(block_of("/frag.bin", true) * 1024 + 12 + 4, 0x01);  // first extent's ee_len
  expect_corrupt("checksum");
}

TEST_F(Corrupt, ExtentLeafEntriesWithoutChecksum) {
  make("-O ^metadata_csum");
  poke(block_of("/frag.bin", true) * 1024 + 2, 0xF0);  // eh_entries beyond eh_max
  expect_corrupt("eh_entries");
}

TEST_F(Corrupt, DirectoryBlockChecksum) {
  make("");
  poke(block_of("/many", false) * 1024 + 12 + 4, 0x01);  // ".." rec_len
  expect_corrupt("checksum");
}

TEST_F(Corrupt, DirectoryRecLenWithoutChecksum) {
  make("-O ^metadata_csum");
  poke(block_of("/many", false) * 1024 + 12 + 4, 0x02);
  expect_corrupt("rec_len");
}

// The refuse-to-write gate: each image opens for reading, is refused for
// writing with the reason named, and is left byte-identical.
class Gate : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* t : {"mke2fs", "debugfs"})
      if (!test::have_tool(t)) GTEST_SKIP() << t << " is not installed";
    img_ = dir_ / "fs.img";
  }
  void make(const std::string& opts, const std::string& debugfs_cmd = "") {
    auto r = test::run("mke2fs -q -F " + opts + " " + img_ + " 64M");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (!debugfs_cmd.empty()) {
      r = test::run("debugfs -w -R '" + debugfs_cmd + "' " + img_);
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
  }
  void expect_refused(fsio::Errc code, const std::string& what) {
    const auto before = test::run("sha256sum < " + img_).output;
    auto ro = Filesystem::open(img_, OpenOptions{});
    EXPECT_TRUE(ro.has_value()) << "reading should still work: " << ro.error().message();
    OpenOptions o;
    o.write = true;
    auto rw = Filesystem::open(img_, o);
    ASSERT_FALSE(rw.has_value()) << "opened for writing; expected a refusal naming " << what;
    EXPECT_EQ(rw.error().code, code) << rw.error().message();
    EXPECT_NE(rw.error().message().find(what), std::string::npos) << rw.error().message();
    EXPECT_EQ(test::run("sha256sum < " + img_).output, before) << "the refusal changed the image";
  }
  test::TempDir dir_;
  std::string img_;
};

TEST_F(Gate, CleanExt4OpensForWriting) {
  make("-t ext4");
  OpenOptions o;
  o.write = true;
  auto rw = Filesystem::open(img_, o);
  EXPECT_TRUE(rw.has_value()) << rw.error().message();
}

TEST_F(Gate, NeedsRecovery) {
  make("-t ext4", "feature needs_recovery");
  expect_refused(fsio::Errc::busy, "needs_recovery");
}

TEST_F(Gate, DirtyJournalWithTheFlagClear) {
  make("-t ext4");
  // s_start (big-endian, 0x1C of the journal superblock) set to 1 by hand.
  auto r = test::run("debugfs -R 'bmap <8> 0' " + img_ + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  const std::uint64_t jblock = std::stoull(r.output.substr(r.output.find_last_of('\n', r.output.size() - 2) + 1));
  r = test::run("printf '\\000\\000\\000\\001' | dd of=" + img_ + " bs=1 seek=" + std::to_string(jblock * 1024 + 0x1C) +
                " conv=notrunc status=none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_refused(fsio::Errc::busy, "journal holds transactions to replay (s_start 1)");
}

TEST_F(Gate, ErrorState) {
  make("-t ext4", "ssv state 3");
  expect_refused(fsio::Errc::busy, "ERROR_FS");
}

TEST_F(Gate, NotCleanlyUnmounted) {
  make("-t ext4", "ssv state 0");
  expect_refused(fsio::Errc::busy, "VALID_FS clear");
}

TEST_F(Gate, LegacyOrphanList) {
  make("-t ext4", "ssv last_orphan 12");
  expect_refused(fsio::Errc::busy, "orphan inodes are present (s_last_orphan 12");
}

TEST_F(Gate, QuotaIsNamed) {
  make("-t ext4 -O quota");
  expect_refused(fsio::Errc::unsupported, "quota");
}

TEST_F(Gate, InlineDataIsNamed) {
  make("-t ext4 -O inline_data");
  expect_refused(fsio::Errc::unsupported, "inline_data");
}

TEST_F(Gate, BigallocIsNamed) {
  make("-t ext4 -O bigalloc -C 16384");
  expect_refused(fsio::Errc::unsupported, "bigalloc");
}

TEST_F(Gate, MmpIsNamed) {
  make("-t ext4 -O mmp");
  expect_refused(fsio::Errc::unsupported, "mmp");
}

TEST_F(Gate, Ext3IsReadOnly) {
  make("-t ext3");
  expect_refused(fsio::Errc::unsupported, "ext2/ext3 block-mapped files are read-only");
}

}  // namespace
}  // namespace ext
