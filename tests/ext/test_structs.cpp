// Pure encodings: rec_len, timestamps, group layout arithmetic, modes, paths.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "ext/dirent.hpp"
#include "ext/fs.hpp"
#include "ext/inode.hpp"
#include "ext/inspect.hpp"
#include "ext/layout.hpp"

namespace ext {
namespace {

TEST(RecLen, SixtyFourKiBBlocksStoreTheWholeBlockAs65535) {
  EXPECT_EQ(rec_len_to_disk(65536, 65536), 65535);
  EXPECT_EQ(rec_len_from_disk(65535, 65536), 65536u);
  EXPECT_EQ(rec_len_from_disk(0, 65536), 65536u);
  EXPECT_EQ(rec_len_from_disk(4096, 4096), 4096u);
  EXPECT_EQ(rec_len_to_disk(12, 4096), 12);
}

TEST(DirentSize, NameRoundedUpToFourBytes) {
  EXPECT_EQ(dirent_size(1), 12u);
  EXPECT_EQ(dirent_size(4), 12u);
  EXPECT_EQ(dirent_size(5), 16u);
  EXPECT_EQ(dirent_size(255), 264u);
}

TEST(Timestamp, EpochBitsExtendPast2038) {
  // 2^31 seconds: signed 32-bit wraps negative; extra epoch bit 1 restores it.
  const std::int64_t sec = std::int64_t(1) << 31;
  const std::uint32_t extra = encode_time_extra(sec, 5);
  EXPECT_EQ(extra & 3, 1u);
  const auto t = decode_time(std::uint32_t(sec), extra, true);
  EXPECT_EQ(t.sec, sec);
  EXPECT_EQ(t.nsec, 5u);
}

TEST(Timestamp, BeforeTheEpochHasNoEpochBits) {
  const std::uint32_t extra = encode_time_extra(-1, 0);
  EXPECT_EQ(extra & 3, 0u);
  EXPECT_EQ(decode_time(std::uint32_t(-1), extra, true).sec, -1);
}

TEST(Timestamp, WithoutExtraFieldsIsSigned32Bit) { EXPECT_EQ(decode_time(0x80000000u, 3, false).sec, -2147483648LL); }

// The kernel's table (commit "ext4: Initialize timestamps limits"): epoch
// bits 11 with a non-negative 32-bit time end at 0x37FFFFFFF, 2446-05-10.
TEST(Timestamp, LimitsAreWhereTheEpochBitsRunOut) {
  Layout l;
  l.inode_size = 256;
  EXPECT_EQ(time_limits(l).min, -2147483648LL);
  EXPECT_EQ(time_limits(l).max, 0x37FFFFFFFLL);
  EXPECT_TRUE(check_time(l, 0x37FFFFFFFLL, "t").has_value());
  EXPECT_FALSE(check_time(l, 0x380000000LL, "t").has_value());
  EXPECT_FALSE(check_time(l, -2147483649LL, "t").has_value());
  // The last second reads back; the next one would read back as 1901.
  const std::uint32_t extra = encode_time_extra(0x37FFFFFFFLL, 0);
  EXPECT_EQ(decode_time(0x7FFFFFFFu, extra, true).sec, 0x37FFFFFFFLL);
  EXPECT_EQ(decode_time(0x80000000u, encode_time_extra(0x380000000LL, 0), true).sec, -2147483648LL);
  l.inode_size = 128;
  EXPECT_EQ(time_limits(l).max, 2147483647LL);
  EXPECT_FALSE(check_time(l, 2147483648LL, "t").has_value());
}

Layout sparse_layout() {
  Layout l;
  l.block_size = 4096;
  l.blocks_per_group = 32768;
  l.group_count = 200;
  l.blocks_count = 200ull * 32768;
  l.ro_compat = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER;
  l.gdt_blocks = 4;
  l.reserved_gdt_blocks = 100;
  l.desc_size = 64;
  return l;
}

TEST(Layout, SparseSuperBackupsInZeroOneAndPowersOfThreeFiveSeven) {
  const Layout l = sparse_layout();
  std::vector<std::uint32_t> have;
  for (std::uint32_t g = 0; g < l.group_count; ++g)
    if (l.group_has_super(g)) have.push_back(g);
  EXPECT_EQ(have, (std::vector<std::uint32_t>{0, 1, 3, 5, 7, 9, 25, 27, 49, 81, 125}));
}

TEST(Layout, OverheadIsSuperblockGdtAndReserve) {
  const Layout l = sparse_layout();
  EXPECT_EQ(l.group_overhead_blocks(0), 1u + 4 + 100);
  EXPECT_EQ(l.group_overhead_blocks(3), 1u + 4 + 100);
  EXPECT_EQ(l.group_overhead_blocks(2), 0u);
}

TEST(Layout, SparseSuper2KeepsOnlyTheNamedBackups) {
  Layout l = sparse_layout();
  l.compat = EXT4_FEATURE_COMPAT_SPARSE_SUPER2;
  l.backup_bgs[0] = 1;
  l.backup_bgs[1] = 199;
  EXPECT_TRUE(l.group_has_super(0));
  EXPECT_TRUE(l.group_has_super(1));
  EXPECT_FALSE(l.group_has_super(3));
  EXPECT_TRUE(l.group_has_super(199));
}

TEST(Layout, LastGroupMayBeShort) {
  Layout l = sparse_layout();
  l.first_data_block = 1;
  l.block_size = 1024;
  l.blocks_per_group = 8192;
  l.blocks_count = 20000;
  l.group_count = 3;
  EXPECT_EQ(l.blocks_in_group(0), 8192u);
  EXPECT_EQ(l.blocks_in_group(2), 20000u - 1 - 2 * 8192);
}

TEST(Mode, LsStyleStrings) {
  EXPECT_EQ(mode_string(0100644), "-rw-r--r--");
  EXPECT_EQ(mode_string(040755), "drwxr-xr-x");
  EXPECT_EQ(mode_string(0120777), "lrwxrwxrwx");
  EXPECT_EQ(mode_string(0104755), "-rwsr-xr-x");
  EXPECT_EQ(mode_string(041777), "drwxrwxrwt");
}

// The S_IF* values come from the host's <sys/stat.h>, not from ext/: the
// table must agree with Linux's, for both forms of each type.
TEST(FileType, EachLinuxTypeHasItsJsonWordAndItsProse) {
  const struct {
    mode_t ifmt;
    const char* word;
    const char* prose;
  } want[] = {
      {S_IFREG, "file", "a regular file"},     {S_IFDIR, "dir", "a directory"},
      {S_IFLNK, "symlink", "a symbolic link"}, {S_IFCHR, "chardev", "a character device"},
      {S_IFBLK, "blockdev", "a block device"}, {S_IFIFO, "fifo", "a fifo"},
      {S_IFSOCK, "socket", "a socket"},
  };
  for (const auto& w : want) {
    const auto mode = std::uint16_t(w.ifmt | 0644);  // permission bits do not matter
    EXPECT_EQ(file_type_word(mode), w.word) << std::oct << w.ifmt;
    EXPECT_EQ(file_type_prose(mode), w.prose) << std::oct << w.ifmt;
  }
}

TEST(FileType, AnUnknownTypeIsSaidWithItsBits) {
  EXPECT_EQ(file_type_word(0x3000 | 0755), "unknown");
  EXPECT_EQ(file_type_prose(0x3000 | 0755), "an inode of unknown type 0x3000");
  EXPECT_EQ(file_type_word(0), "unknown");
  EXPECT_EQ(file_type_prose(0), "an inode of unknown type 0x0");
}

TEST(Path, SplitDropsEmptyComponents) {
  const auto parts = split_path("//a/b///c/");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "a");
  EXPECT_EQ(parts[2], "c");
  EXPECT_TRUE(split_path("/").empty());
}

TEST(Features, NamesAsDumpe2fsPrintsThem) {
  EXPECT_EQ(feature_names(EXT3_FEATURE_COMPAT_HAS_JOURNAL, EXT4_FEATURE_INCOMPAT_64BIT | EXT3_FEATURE_INCOMPAT_RECOVER,
                          EXT4_FEATURE_RO_COMPAT_METADATA_CSUM),
            "has_journal needs_recovery 64bit metadata_csum");
  EXPECT_EQ(feature_names(0, 1u << 31, 0), "FEATURE_I31");
}

}  // namespace
}  // namespace ext
