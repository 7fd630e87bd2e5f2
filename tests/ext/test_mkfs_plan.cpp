// mke2fs 1.47.0's choices, against numbers worked out by hand from its
// code and checked on images it made (mke2fs -t ext4 on new sparse files,
// inspected with dumpe2fs and debugfs): usage types, block size, inode
// counts and per-group rounding, the reserve, reserved GDT blocks, table
// placement with flex_bg, the journal's place and extents, the overhead
// and s_kbytes_written.
#include <gtest/gtest.h>

#include "ext/group_desc.hpp"
#include "ext/mkfs.hpp"

namespace ext {
namespace {

using fsio::Errc;

std::array<std::uint8_t, 16> zeros16() { return {}; }

struct Made {
  MkfsParams p;
  MkfsLayout m{{}, {}, BlockSet(0, 0), {}};
  MkfsFiles f;
  std::uint64_t kbytes = 0;
};

// mke2fs -t ext4 [options] NEW-FILE SIZE with the built-in profile.
Made make(const std::string& size, MkfsRequest r = {}) {
  r.size = size;
  MkfsTarget t;
  t.name = "new.img";
  t.exists = false;
  auto plan = plan_mkfs(r, t, Mke2fsConf::builtin(), zeros16);
  EXPECT_TRUE(plan.has_value()) << (plan ? "" : plan.error().message());
  Made out;
  if (!plan) return out;
  out.p = plan->params;
  out.m = std::move(plan->layout);
  out.f = plan->files;
  out.kbytes = plan->kbytes;
  return out;
}

MkfsRequest features(const std::string& list) {
  MkfsRequest r;
  r.features.push_back(list);
  return r;
}

TEST(MkfsPlan, SixtyFourMiBIsSmallWithOneKiBBlocks) {
  const Made x = make("64M");
  EXPECT_EQ(x.p.fs_types, (std::vector<std::string>{"ext4", "small"}));
  const Layout& l = x.m.l;
  EXPECT_EQ(l.block_size, 1024u);
  EXPECT_EQ(l.blocks_count, 65536u);
  EXPECT_EQ(l.first_data_block, 1u);
  EXPECT_EQ(l.group_count, 8u);
  EXPECT_EQ(l.inodes_count, 16384u);  // 64 MiB / 4096 bytes per inode
  EXPECT_EQ(l.inodes_per_group, 2048u);
  EXPECT_EQ(l.reserved_gdt_blocks, 256u);  // 511, capped at a quarter of the block
  EXPECT_EQ(l.r_blocks_count, 3276u);      // (u64)(5.0 * 65536 / 100.0)
  EXPECT_EQ(x.m.groups[0].block_bitmap, 259u);
  EXPECT_EQ(x.m.groups[0].inode_bitmap, 267u);
  EXPECT_EQ(x.m.groups[0].inode_table, 275u);
  EXPECT_EQ(x.f.root_block, 4371u);
  EXPECT_EQ(x.f.lpf_blocks,
            (std::vector<std::uint64_t>{4372, 4373, 4374, 4375, 4376, 4377, 4378, 4379, 4380, 4381, 4382, 4383}));
  EXPECT_EQ(x.f.resize_dind, 4384u);
  EXPECT_EQ(x.f.journal_blocks, 4096u);
  ASSERT_EQ(x.f.journal_extents.size(), 1u);
  EXPECT_EQ(x.f.journal_extents[0].physical, 16385u);  // group 2, the emptiest around the middle
  EXPECT_EQ(x.f.overhead, 9499u);
  EXPECT_EQ(x.kbytes, 279u);
  EXPECT_EQ(x.m.free_blocks, 56023u);
  EXPECT_EQ(x.m.free_inodes, 16373u);
}

TEST(MkfsPlan, OneGiB) {
  const Made x = make("1G");
  const Layout& l = x.m.l;
  EXPECT_EQ(x.p.fs_types, (std::vector<std::string>{"ext4"}));  // "default" has no section
  EXPECT_EQ(l.blocks_count, 262144u);
  EXPECT_EQ(l.group_count, 8u);
  EXPECT_EQ(l.inodes_count, 65536u);
  EXPECT_EQ(l.reserved_gdt_blocks, 127u);
  EXPECT_EQ(l.r_blocks_count, 13107u);
  EXPECT_EQ(x.m.groups[0].block_bitmap, 129u);
  EXPECT_EQ(x.m.groups[7].inode_bitmap, 144u);
  EXPECT_EQ(x.m.groups[0].inode_table, 145u);
  EXPECT_EQ(x.m.groups[7].inode_table, 145u + 7 * 512);
  EXPECT_EQ(x.f.root_block, 4241u);
  EXPECT_EQ(x.f.resize_dind, 4246u);
  ASSERT_EQ(x.f.journal_extents.size(), 1u);
  EXPECT_EQ(x.f.journal_extents[0].physical, 131072u);  // group 4
  EXPECT_EQ(x.f.overhead, 12949u);
  EXPECT_EQ(x.kbytes, 533u);
  EXPECT_EQ(x.m.free_blocks, 249189u);
  EXPECT_EQ(x.m.groups[0].itable_unused, 8192u - 11);
  EXPECT_EQ(x.m.groups[1].flags, EXT4_BG_INODE_UNINIT | EXT4_BG_BLOCK_UNINIT);
  EXPECT_EQ(x.m.groups[4].flags, EXT4_BG_INODE_UNINIT);  // the journal cleared BLOCK_UNINIT
}

TEST(MkfsPlan, OneTiBPacksFlexGroupsAndSplitsTheJournal) {
  const Made x = make("1T");
  const Layout& l = x.m.l;
  EXPECT_EQ(l.group_count, 8192u);
  EXPECT_EQ(l.gdt_blocks, 128u);
  EXPECT_EQ(l.reserved_gdt_blocks, 1024u);
  EXPECT_EQ(x.m.groups[0].inode_table, 1185u);
  EXPECT_EQ(x.m.groups[16].block_bitmap, 16u * 32768);  // flex group 1 starts in its first group
  EXPECT_EQ(x.m.groups[16].inode_table, 16u * 32768 + 32);
  EXPECT_EQ(x.f.journal_blocks, 262144u);
  EXPECT_EQ(x.f.journal_extents.size(), 8u);
  EXPECT_EQ(x.f.journal_extents[0].physical, 134250496u);  // group 4097, emptier than 4096
  EXPECT_EQ(x.f.journal_leaf, 134250495u);                 // just before the first extent
  EXPECT_EQ(x.f.overhead, 4494739u);
  EXPECT_EQ(x.kbytes, 6229u);
  EXPECT_EQ(x.m.free_blocks, 263940710u);
}

TEST(MkfsPlan, TheLastGroupIsTrimmedButNotTheInodeRequest) {
  const Made x = make("1048976K");  // 262144 blocks + 116: too few for a group's tables + 50
  EXPECT_EQ(x.m.l.blocks_count, 262144u);
  EXPECT_EQ(x.m.l.inodes_per_group, 8208u);  // the 65536 + 29 inodes of the request, over 8 groups
  EXPECT_EQ(x.m.l.inodes_count, 65664u);
}

TEST(MkfsPlan, InodesPerGroupFillWholeTableBlocks) {
  const Made x = make("1056768K");  // 9 groups
  EXPECT_EQ(x.m.l.group_count, 9u);
  EXPECT_EQ(x.m.l.inodes_per_group, 7344u);  // 66048 / 9 = 7339 -> 459 blocks of 16 -> 7344
  EXPECT_EQ(x.m.l.inodes_count, 66096u);
}

TEST(MkfsPlan, ReservedGdtBlocksForGrowthTo1024Times) {
  EXPECT_EQ(make("1G", features("^64bit")).m.l.reserved_gdt_blocks, 63u);
  EXPECT_EQ(make("2M").m.l.reserved_gdt_blocks, 15u);
  EXPECT_EQ(reserved_gdt_blocks(268435456, 0, 32768, 64, 128, 4096), 1024u);  // 1920, capped
}

TEST(MkfsPlan, JournalSizeByBlockCount) {
  EXPECT_EQ(default_journal_blocks(2047), 0u);
  EXPECT_EQ(default_journal_blocks(2048), 1024u);
  EXPECT_EQ(default_journal_blocks(262143), 4096u);
  EXPECT_EQ(default_journal_blocks(262144), 8192u);
  EXPECT_EQ(default_journal_blocks(32768 * 1024), 262144u);
  const Made tiny = make("1M");
  EXPECT_EQ(tiny.f.journal_blocks, 0u);  // "Filesystem too small for a journal"
  EXPECT_FALSE(tiny.m.l.has_compat(EXT3_FEATURE_COMPAT_HAS_JOURNAL));
}

TEST(MkfsPlan, WithoutFlexBgEachGroupHoldsItsTables) {
  const Made x = make("1G", features("^flex_bg"));
  EXPECT_EQ(x.m.groups[0].block_bitmap, 129u);
  EXPECT_EQ(x.m.groups[0].inode_bitmap, 130u);
  EXPECT_EQ(x.m.groups[0].inode_table, 131u);
  EXPECT_EQ(x.m.groups[1].block_bitmap, 32768u + 129);
  EXPECT_EQ(x.f.root_block, 643u);
  EXPECT_EQ(x.f.resize_dind, 648u);
  EXPECT_EQ(x.f.journal_extents[0].physical, 131586u);
}

TEST(MkfsPlan, FeatureSetsMoveTheJournalAndTheCounts) {
  const Made s2 = make("1G", features("sparse_super2"));
  EXPECT_EQ(s2.f.journal_extents[0].physical, 98304u);  // groups 3 and 5 hold no backup now
  EXPECT_EQ(s2.f.overhead, 12691u);
  EXPECT_EQ(s2.m.l.backup_bgs[0], 1u);
  EXPECT_EQ(s2.m.l.backup_bgs[1], 7u);
  EXPECT_EQ(make("1G", features("^has_journal")).f.overhead, 4757u);
  EXPECT_EQ(make("1G", features("^metadata_csum")).kbytes, 581u);
  const Made orphan = make("1G", features("orphan_file"));
  EXPECT_EQ(orphan.f.orphan_ino, 12u);
  ASSERT_EQ(orphan.f.orphan_extents.size(), 1u);
  EXPECT_EQ(orphan.f.orphan_extents[0].physical, 4247u);
  EXPECT_EQ(orphan.f.orphan_extents[0].len, 64u);
  EXPECT_EQ(orphan.kbytes, 789u);
  EXPECT_EQ(orphan.m.groups[0].itable_unused, 8180u);
}

TEST(MkfsPlan, UsageTypesBySize) {
  EXPECT_EQ(make("2M").p.fs_types.back(), "floppy");
  EXPECT_EQ(make("511M").p.fs_types.back(), "small");
  EXPECT_EQ(make("4T").p.fs_types.back(), "big");
  const Made huge = make("16T");
  EXPECT_EQ(huge.p.fs_types.back(), "huge");
  EXPECT_EQ(huge.m.l.inodes_count, 268435456u);                         // 65536 bytes per inode
  EXPECT_FALSE(huge.m.l.has_compat(EXT2_FEATURE_COMPAT_RESIZE_INODE));  // above 2^32 - 1 blocks
}

TEST(MkfsPlan, RefusesWhatItDoesNotMake) {
  MkfsTarget t;
  t.exists = false;
  auto refused = [&](MkfsRequest r, Errc want) {
    if (!r.size) r.size = "1G";
    auto plan = plan_mkfs(r, t, Mke2fsConf::builtin(), zeros16);
    EXPECT_FALSE(plan.has_value());
    if (!plan) {
      EXPECT_EQ(plan.error().code, want) << plan.error().message();
    }
    return plan ? std::string() : plan.error().message();
  };
  MkfsRequest ext3;
  ext3.fs_type = "ext3";
  EXPECT_NE(refused(ext3, Errc::unsupported).find("ext3"), std::string::npos);
  EXPECT_NE(refused(features("bigalloc"), Errc::unsupported).find("bigalloc"), std::string::npos);
  EXPECT_NE(refused(features("inline_data,encrypt"), Errc::unsupported).find("inline_data encrypt"), std::string::npos);
  EXPECT_NE(refused(features("^extent,^64bit"), Errc::unsupported).find("ext2/ext3"), std::string::npos);
  EXPECT_NE(refused(features("nonsense"), Errc::invalid_argument).find("nonsense"), std::string::npos);
  EXPECT_NE(refused(features("metadata_csum_seed,^metadata_csum"), Errc::invalid_argument).find("metadata_csum"),
            std::string::npos);
  MkfsRequest big;
  big.size = "64T";
  big.features.push_back("^64bit");
  EXPECT_NE(refused(big, Errc::invalid_argument).find("32 bits"), std::string::npos);
}

}  // namespace
}  // namespace ext
