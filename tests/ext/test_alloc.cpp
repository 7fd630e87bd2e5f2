// The block and inode allocator (ext/alloc.hpp) on mke2fs images: where a
// run lands for a goal, worked out by hand from the group arithmetic
// (group g covers [first_data_block + g * blocks_per_group, + blocks_per_group))
// and from the free ranges dumpe2fs lists before; then, after the commit,
// what dumpe2fs and e2fsck -fn say the bitmaps and descriptors hold.
//
// The 1 GiB image of 4 KiB blocks that most cases use (mke2fs 1.47 defaults):
// 8 groups of 32768 blocks; superblock backups in groups 1, 3, 5, 7, each
// followed by 1 descriptor block (8 descriptors of 64 bytes) and 127
// reserved GDT blocks; flex_bg packs all bitmaps and inode tables into
// group 0; the journal sits in group 4. Groups 1, 2, 3, 5, 6 are BLOCK_UNINIT.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "ext/dir_write.hpp"
#include "tests/ext/peers.hpp"

namespace ext::alloc_tests {

namespace test = fsio::test;
using peers::Range;
using Ranges = std::vector<Range>;
using Span = std::pair<std::uint64_t, std::uint32_t>;

// Runs given to /f one after another, logical block 0 first.
std::vector<Extent> as_file(const std::vector<BlockRun>& runs) {
  std::vector<Extent> out;
  std::uint32_t logical = 0;
  for (const auto& r : runs) {
    out.push_back({logical, r.len, r.start, false});
    logical += r.len;
  }
  return out;
}

class Alloc : public peers::WriterTest {
 protected:
  // The run handed out for a goal, as (start, len).
  Span alloc(Transaction& tx, std::uint64_t goal, std::uint32_t len) {
    auto run = tx.alloc().alloc_blocks(goal, len);
    EXPECT_TRUE(run.has_value()) << run.error().message();
    if (!run) return {};
    runs_.push_back(*run);
    return {run->start, run->len};
  }
  // Gives every run allocated so far to /f and commits.
  void commit(Filesystem& fs, Transaction& tx) {
    std::uint64_t blocks = 0;
    for (const auto& r : runs_) blocks += r.len;
    auto tree = peers::adopt(fs, tx, "/f", as_file(runs_), blocks * bs_);
    ASSERT_TRUE(tree.has_value()) << tree.error().message();
    ASSERT_TRUE(tree->empty()) << "the runs should fit the inode's four extents";
    auto st = tx.commit();
    ASSERT_TRUE(st.has_value()) << st.error().message();
  }
  std::vector<BlockRun> runs_;
};

TEST_F(Alloc, TakesTheGoalAndContinuesAfterIt) {
  make(4096, "1G");
  const std::uint64_t f0 = first_free(0);
  const Range free0 = groups_[0].free_block_ranges.at(0);
  ASSERT_EQ(free0.last, 32767u);  // group 0 is free from f0 to its end
  const std::uint64_t goal = f0 + 100;
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    EXPECT_EQ(alloc(tx, goal, 10), (Span{goal, 10}));
    EXPECT_EQ(alloc(tx, goal + 10, 10), (Span{goal + 10, 10}));  // contiguous with the first
    EXPECT_EQ(alloc(tx, goal, 5), (Span{goal + 20, 5}));         // the goal is taken: the next free block
    EXPECT_EQ(fs->group(0).free_blocks, groups_[0].free_blocks - 25);
    commit(*fs, tx);
  }
  const auto after = peers::dumpe2fs_groups(img_);
  EXPECT_EQ(after[0].free_block_ranges, (Ranges{{f0, goal - 1}, {goal + 25, 32767}}));
  EXPECT_EQ(after[0].free_blocks, groups_[0].free_blocks - 25);
  expect_clean();
}

TEST_F(Alloc, PassesOverAFragmentShorterThanTheWantedRun) {
  // Two files, then the first removed by debugfs: a 10-block hole before
  // the second file's 100 blocks.
  test::make_file(dir_ / "src/a", 10 * 4096, 'a');
  test::make_file(dir_ / "src/b", 100 * 4096, 'b');
  make(4096, "1G");
  const auto a = peers::debugfs_ex(img_, "/a");
  ASSERT_EQ(a.size(), 1u);
  const std::uint64_t hole = a[0].physical_first;
  peers::debugfs(img_, "rm /a", true);
  groups_ = peers::dumpe2fs_groups(img_);
  const std::uint32_t g = std::uint32_t(hole / 32768);
  // dumpe2fs: the hole is a free range of its own, and the next free range is long.
  const auto& ranges = groups_[g].free_block_ranges;
  std::size_t at = 0;
  while (at < ranges.size() && ranges[at].first != hole) ++at;
  ASSERT_LT(at + 1, ranges.size()) << "no free range at the hole " << hole;
  ASSERT_EQ(ranges[at].count(), 10u);
  const std::uint64_t next = ranges[at + 1].first;
  ASSERT_GE(ranges[at + 1].count(), 100u);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    // A run of 50 is wanted at least min(50, 2048) long: the hole is passed over.
    EXPECT_EQ(alloc(tx, hole, 50), (Span{next, 50}));
    // 8 fit the hole.
    EXPECT_EQ(alloc(tx, hole, 8), (Span{hole, 8}));
    // 5 do not fit the 2 left, so the next run of 5 is after the first 50.
    EXPECT_EQ(alloc(tx, hole, 5), (Span{next + 50, 5}));
    // 2 do.
    EXPECT_EQ(alloc(tx, hole, 2), (Span{hole + 8, 2}));
    commit(*fs, tx);
  }
  const auto after = peers::dumpe2fs_groups(img_);
  Ranges want;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (i == at) continue;  // the hole, now full
    want.push_back(i == at + 1 ? Range{next + 55, ranges[i].last} : ranges[i]);
  }
  EXPECT_EQ(after[g].free_block_ranges, want);
  expect_clean();
}

TEST_F(Alloc, RunsStopAtTheEndOfTheirGroup) {
  make(4096, "1G");
  // Free space runs on from group 1 into group 2 (65535 | 65536 = 2 * 32768).
  ASSERT_EQ(groups_[1].free_block_ranges, (Ranges{{32897, 65535}}));
  ASSERT_EQ(groups_[2].free_block_ranges, (Ranges{{65536, 98303}}));
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    // Only 50 blocks are left in group 1 after the goal: a run of 100 is taken in group 2.
    EXPECT_EQ(alloc(tx, 65486, 100), (Span{65536, 100}));
    // 50 fit, ending on group 1's last block.
    EXPECT_EQ(alloc(tx, 65486, 50), (Span{65486, 50}));
    // A run is at most a group long and stops at the group's end: 98303 - 65636 + 1.
    EXPECT_EQ(alloc(tx, 65636, 40000), (Span{65636, 32668}));
    commit(*fs, tx);
  }
  const auto after = peers::dumpe2fs_groups(img_);
  EXPECT_EQ(after[1].free_block_ranges, (Ranges{{32897, 65485}}));
  EXPECT_TRUE(after[2].free_block_ranges.empty());
  EXPECT_EQ(after[2].free_blocks, 0u);
  // Both groups have a real bitmap now.
  EXPECT_EQ(after[1].flags.find("BLOCK_UNINIT"), std::string::npos) << after[1].flags;
  EXPECT_EQ(after[2].flags.find("BLOCK_UNINIT"), std::string::npos) << after[2].flags;
  expect_clean();
}

TEST_F(Alloc, AFullGroupIsPassedOver) {
  make(4096, "1G");
  ASSERT_EQ(groups_[2].free_block_ranges, (Ranges{{65536, 98303}}));
  ASSERT_EQ(first_free(3), 98433u);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    EXPECT_EQ(alloc(tx, 65536, 32768), (Span{65536, 32768}));
    EXPECT_EQ(fs->group(2).free_blocks, 0u);
    // Group 3 starts with a superblock backup, one descriptor block and 127
    // reserved GDT blocks: 98304 + 1 + 1 + 127 = 98433.
    EXPECT_EQ(alloc(tx, 65536, 10), (Span{98433, 10}));
    commit(*fs, tx);
  }
  const auto after = peers::dumpe2fs_groups(img_);
  EXPECT_EQ(after[2].free_blocks, 0u);
  EXPECT_EQ(after[3].free_block_ranges, (Ranges{{98443, 131071}}));
  expect_clean();
}

TEST_F(Alloc, BlockUninitGroupsAreBuiltWithTheirMetadata) {
  // Without flex_bg each group holds its own block bitmap, inode bitmap and
  // inode table (8192 inodes * 256 bytes / 4096 = 512 blocks): group 2
  // (no backup) is free from 65536 + 1 + 1 + 512 = 66050; group 5 (a
  // backup) from 163840 + 1 + 1 + 127 + 1 + 1 + 512 = 164483.
  make(4096, "1G", "-O ^flex_bg");
  const auto h = peers::dumpe2fs_header(img_);
  ASSERT_EQ(peers::header_number(h, "Inode blocks per group"), 512u);
  ASSERT_EQ(peers::header_number(h, "Reserved GDT blocks"), 127u);
  ASSERT_NE(groups_[2].flags.find("BLOCK_UNINIT"), std::string::npos) << groups_[2].flags;
  ASSERT_NE(groups_[5].flags.find("BLOCK_UNINIT"), std::string::npos) << groups_[5].flags;
  EXPECT_EQ(first_free(2), 66050u);
  EXPECT_EQ(first_free(5), 164483u);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    EXPECT_EQ(alloc(tx, 65536, 10), (Span{66050, 10}));
    EXPECT_EQ(alloc(tx, 163840, 10), (Span{164483, 10}));
    commit(*fs, tx);
  }
  const auto after = peers::dumpe2fs_groups(img_);
  EXPECT_EQ(after[2].free_block_ranges, (Ranges{{66060, 98303}}));
  EXPECT_EQ(after[5].free_block_ranges, (Ranges{{164493, 196607}}));
  EXPECT_EQ(after[2].flags.find("BLOCK_UNINIT"), std::string::npos) << after[2].flags;
  expect_clean();
}

TEST_F(Alloc, RefusesWhenNoBlockIsLeftAndKeepsTheReserve) {
  make(1024, "4M", "-O ^has_journal");
  const auto h = peers::dumpe2fs_header(img_);
  const std::uint64_t free = peers::header_number(h, "Free blocks");
  const std::uint64_t reserved = peers::header_number(h, "Reserved block count");
  ASSERT_GT(reserved, 0u);
  const std::string before = test::read_all(img_);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    auto drain = [&](std::uint64_t& got) {
      for (;;) {
        auto run = tx.alloc().alloc_blocks(0, 4096);
        if (!run) return run.error();
        got += run->len;
      }
    };
    std::uint64_t outside = 0;
    const fsio::Error full = drain(outside);
    EXPECT_EQ(outside, free - reserved);
    EXPECT_EQ(full.code, fsio::Errc::io);
    EXPECT_EQ(full.sys_errno, ENOSPC);
    EXPECT_EQ(full.context, "ext: no free blocks left (outside the reserve)");
    // The reserve is there for those who ask for it, and then it is gone too.
    tx.alloc().use_reserved = true;
    std::uint64_t inside = 0;
    const fsio::Error empty = drain(inside);
    EXPECT_EQ(inside, reserved);
    EXPECT_EQ(empty.sys_errno, ENOSPC);
    EXPECT_EQ(empty.context, "ext: no free blocks left");
  }
  // Nothing reaches the image without a commit.
  EXPECT_TRUE(test::read_all(img_) == before);
}

TEST_F(Alloc, TakesAShorterRunWhenNoLongerOneIsLeft) {
  make(1024, "4M", "-O ^has_journal");
  auto fs = peers::open_rw(img_);
  Transaction tx(*fs, peers::kNow);
  tx.alloc().use_reserved = true;
  // Everything taken, then every other block of 64 free ones given back:
  // only runs of one block are free.
  std::uint64_t f0 = 0;  // the start of the first free range of 64 blocks or more
  for (const auto& r : groups_[0].free_block_ranges)
    if (f0 == 0 && r.count() >= 64) f0 = r.first;
  ASSERT_NE(f0, 0u);
  while (tx.alloc().alloc_blocks(0, 4096)) {
  }
  for (std::uint64_t b = f0; b < f0 + 64; b += 2) tx.alloc().free_blocks(b, 1);
  ASSERT_TRUE(tx.alloc().check_frees().has_value());
  ASSERT_TRUE(tx.alloc().apply_frees().has_value());
  // Four wanted, none of that length anywhere: the first free block after the goal.
  auto run = tx.alloc().alloc_blocks(f0 + 1, 4);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(Span(run->start, run->len), (Span{f0 + 2, 1}));
}

TEST_F(Alloc, FreesAreCheckedBeforeAnyIsApplied) {
  make(4096, "1G");
  const std::uint64_t f0 = first_free(0);
  auto fs = peers::open_rw(img_);
  {
    Transaction tx(*fs, peers::kNow);
    tx.alloc().free_blocks(f0, 1);  // free per dumpe2fs
    auto st = tx.alloc().check_frees();
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().code, fsio::Errc::corrupt);
    EXPECT_EQ(st.error().message(), "ext: freeing block " + std::to_string(f0) + ", which is already free");
  }
  {
    Transaction tx(*fs, peers::kNow);
    tx.alloc().free_blocks(f0 - 1, 1);  // the last block in use before the free range
    tx.alloc().free_blocks(f0 - 1, 1);
    auto st = tx.alloc().check_frees();
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().message(), "ext: freeing block " + std::to_string(f0 - 1) + " twice");
  }
  {
    Transaction tx(*fs, peers::kNow);
    tx.alloc().free_blocks(262144, 1);  // 8 * 32768: one past the last block
    auto st = tx.alloc().check_frees();
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().message(), "ext: freeing block 262144, outside the filesystem");
  }
  {
    Transaction tx(*fs, peers::kNow);
    const std::uint64_t free_ino = groups_[0].free_inode_ranges.at(0).first;
    tx.alloc().free_inode(std::uint32_t(free_ino), false);
    auto st = tx.alloc().check_frees();
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().message(), "ext: freeing inode " + std::to_string(free_ino) + ", which is already free");
  }
}

// A regular file's inode, empty (an extent header with no entries), linked into the root.
void make_file_inode(Filesystem& fs, Transaction& tx, std::uint32_t ino, const std::string& name) {
  const Layout& l = fs.layout();
  Inode inode{ino, std::vector<std::byte>(l.inode_size)};
  Ext4Inode f{};
  f.i_mode = 0100644;
  f.i_links_count = 1;
  f.i_flags = EXT4_EXTENTS_FL;
  f.i_extra_isize = 32;
  inode.set_fields(f);
  const std::uint8_t header[12] = {0x0A, 0xF3, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(inode.raw.data() + offsetof(Ext4Inode, i_block), header, sizeof header);
  set_inode_times(inode, tx.now(), nullptr, true);
  ASSERT_TRUE(fs.write_inode(inode).has_value());
  auto root = fs.read_inode(EXT2_ROOT_INO);
  ASSERT_TRUE(root.has_value());
  auto st = add_entry(fs, tx.alloc(), *root, name, ino, EXT4_FT_REG_FILE);
  ASSERT_TRUE(st.has_value()) << st.error().message();
  ASSERT_TRUE(fs.write_inode(*root, MetaKind::directory).has_value());
}

TEST_F(Alloc, InodesComeFromTheGoalGroup) {
  make(4096, "1G");
  // mke2fs used inodes 1-11 (11: lost+found) and 12 for /f: group 0's first free is 13.
  ASSERT_EQ(groups_[0].free_inode_ranges.at(0).first, 13u);
  // Group 3 (8192 inodes a group) starts at inode 3 * 8192 + 1 = 24577, all unused.
  ASSERT_EQ(groups_[3].free_inode_ranges, (Ranges{{24577, 32768}}));
  ASSERT_NE(groups_[3].flags.find("INODE_UNINIT"), std::string::npos);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    auto a = tx.alloc().alloc_inode(0, false);
    auto b = tx.alloc().alloc_inode(3, false);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*a, 13u);
    EXPECT_EQ(*b, 24577u);
    // ext4_new_inode: the table's used part now reaches inode index 0 of 8192, 8191 stay unused.
    EXPECT_EQ(fs->group(3).itable_unused, 8191u);
    make_file_inode(*fs, tx, *a, "i13");
    make_file_inode(*fs, tx, *b, "i24577");
    auto st = tx.commit();
    ASSERT_TRUE(st.has_value()) << st.error().message();
  }
  const auto after = peers::dumpe2fs_groups(img_);
  EXPECT_EQ(after[0].free_inode_ranges.at(0).first, 14u);
  EXPECT_EQ(after[3].free_inode_ranges, (Ranges{{24578, 32768}}));
  EXPECT_EQ(after[3].free_inodes, 8191u);
  EXPECT_EQ(after[3].unused_inodes, 8191u);
  EXPECT_EQ(after[3].flags.find("INODE_UNINIT"), std::string::npos) << after[3].flags;
  expect_clean();
}

}  // namespace ext::alloc_tests
