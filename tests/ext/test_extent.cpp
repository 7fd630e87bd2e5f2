// The extent tree the writer builds (ext/extent_build.hpp), against bytes
// worked out by hand from the kernel's Documentation/filesystems/ext4
// (ifork.rst, "The Contents of inode.i_block") and against debugfs and
// e2fsck on mke2fs-made images:
//
//   ext4_extent_header (12 bytes): eh_magic 0xF30A (stored 0A F3), eh_entries,
//     eh_max, eh_depth (0 = leaf), eh_generation (0)
//   ext4_extent (12): ee_block le32, ee_len le16 (> 32768: unwritten, len - 32768),
//     ee_start_hi le16, ee_start_lo le32
//   ext4_extent_idx (12): ei_block le32, ei_leaf_lo le32, ei_leaf_hi le16, ei_unused le16
//   i_block holds a header and 4 entries: (60 - 12) / 12 = 4; a tree block
//   holds (block_size - 12) / 12 entries: 340 at 4 KiB, 84 at 1 KiB, and
//   the crc32c tail at 12 + 12 * eh_max (4092 at 4 KiB).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "ext/extent.hpp"
#include "ext/extent_build.hpp"
#include "tests/ext/peers.hpp"

namespace ext::extent_tests {

namespace test = fsio::test;
using Bytes = std::vector<std::uint8_t>;

// Little-endian fields appended one by one, as the spec lists them.
struct LE {
  Bytes b;
  LE& u16(std::uint16_t v) {
    b.push_back(std::uint8_t(v));
    b.push_back(std::uint8_t(v >> 8));
    return *this;
  }
  LE& u32(std::uint32_t v) { return u16(std::uint16_t(v)).u16(std::uint16_t(v >> 16)); }
  LE& header(std::uint16_t entries, std::uint16_t max, std::uint16_t depth) {
    return u16(0xF30A).u16(entries).u16(max).u16(depth).u32(0);
  }
  LE& extent(std::uint32_t block, std::uint16_t len, std::uint64_t start) {
    return u32(block).u16(len).u16(std::uint16_t(start >> 32)).u32(std::uint32_t(start));
  }
  LE& index(std::uint32_t block, std::uint64_t leaf) {
    return u32(block).u32(std::uint32_t(leaf)).u16(std::uint16_t(leaf >> 32)).u16(0);
  }
};

Bytes to_bytes(std::span<const std::byte> s) {
  Bytes out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// "{logical, len, physical[, unwritten]} ..." (Extent has no operator==).
std::string str(const std::vector<Extent>& v) {
  std::string out;
  for (const auto& e : v)
    out += "{" + std::to_string(e.logical) + ", " + std::to_string(e.len) + ", " + std::to_string(e.physical) +
           (e.unwritten ? ", unwritten} " : "} ");
  return out;
}

// --- normalize_extents: pure arithmetic ---

TEST(NormalizeExtents, SplitsInitializedExtentsAt32768Blocks) {
  // 70000 = 32768 + 32768 + 4464; each piece starts where the last ended, logically and physically.
  const auto out = normalize_extents({{0, 70000, 1000, false}});
  const std::vector<Extent> want{{0, 32768, 1000, false}, {32768, 32768, 33768, false}, {65536, 4464, 66536, false}};
  EXPECT_EQ(str(out), str(want));
}

TEST(NormalizeExtents, SplitsUnwrittenExtentsAt32767Blocks) {
  // An unwritten extent stores len + 32768 in 16 bits: at most 65535, so 32767 blocks.
  // 40000 = 32767 + 7233.
  const auto out = normalize_extents({{0, 40000, 500, true}});
  const std::vector<Extent> want{{0, 32767, 500, true}, {32767, 7233, 33267, true}};
  EXPECT_EQ(str(out), str(want));
}

TEST(NormalizeExtents, MergesOnlyWhatIsContiguousBothWays) {
  // Logically and physically contiguous: one extent of 150.
  EXPECT_EQ(str(normalize_extents({{0, 100, 1000, false}, {100, 50, 1100, false}})), str({{0, 150, 1000, false}}));
  // Merged up to 32768 (32700 + 68), the remaining 32 blocks start a new extent.
  EXPECT_EQ(str(normalize_extents({{0, 32700, 1000, false}, {32700, 100, 33700, false}})),
            str({{0, 32768, 1000, false}, {32768, 32, 33768, false}}));
  // A physical gap, a logical gap (a hole), and unwritten next to written stay apart.
  const std::vector<Extent> apart_phys{{0, 10, 1000, false}, {10, 10, 2000, false}};
  const std::vector<Extent> apart_log{{0, 10, 1000, false}, {20, 10, 1010, false}};
  const std::vector<Extent> apart_kind{{0, 10, 1000, false}, {10, 10, 1010, true}};
  EXPECT_EQ(str(normalize_extents(apart_phys)), str(apart_phys));
  EXPECT_EQ(str(normalize_extents(apart_log)), str(apart_log));
  EXPECT_EQ(str(normalize_extents(apart_kind)), str(apart_kind));
}

// --- i_blocks (inodes.rst: i_blocks_lo, l_i_blocks_high, EXT4_HUGE_FILE_FL) ---

TEST(InodeBlocks, CountsSectorsAndNeedsHugeFilePast32Bits) {
  Layout l;
  l.block_size = 4096;
  l.ro_compat = EXT4_FEATURE_RO_COMPAT_HUGE_FILE;
  Inode inode{12, std::vector<std::byte>(256)};
  auto f = inode.fields();
  f.i_flags = EXT4_EXTENTS_FL | EXT4_HUGE_FILE_FL;  // a stale flag is cleared
  inode.set_fields(f);
  // 3 blocks of 4096 = 24 sectors of 512.
  ASSERT_TRUE(set_inode_blocks(inode, 3, l).has_value());
  EXPECT_EQ(std::uint32_t(inode.fields().i_blocks_lo), 24u);
  EXPECT_EQ(std::uint16_t(inode.fields().l_i_blocks_high), 0u);
  EXPECT_EQ(inode.flags(), EXT4_EXTENTS_FL);
  // 2^29 blocks = 2^32 sectors: lo 0, high 1.
  ASSERT_TRUE(set_inode_blocks(inode, 1u << 29, l).has_value());
  EXPECT_EQ(std::uint32_t(inode.fields().i_blocks_lo), 0u);
  EXPECT_EQ(std::uint16_t(inode.fields().l_i_blocks_high), 1u);
  // 2^45 blocks = 2^48 sectors, past 48 bits: counted in blocks with
  // HUGE_FILE_FL, 2^45 = high 2^13 = 0x2000, lo 0.
  ASSERT_TRUE(set_inode_blocks(inode, 1ull << 45, l).has_value());
  EXPECT_EQ(std::uint32_t(inode.fields().i_blocks_lo), 0u);
  EXPECT_EQ(std::uint16_t(inode.fields().l_i_blocks_high), 0x2000u);
  EXPECT_EQ(inode.flags(), EXT4_EXTENTS_FL | EXT4_HUGE_FILE_FL);
  // Without huge_file, 32 bits of sectors: 2^29 - 1 blocks fit (0xFFFFFFF8), 2^29 do not.
  l.ro_compat = 0;
  ASSERT_TRUE(set_inode_blocks(inode, (1u << 29) - 1, l).has_value());
  EXPECT_EQ(std::uint32_t(inode.fields().i_blocks_lo), 0xFFFFFFF8u);
  EXPECT_EQ(std::uint16_t(inode.fields().l_i_blocks_high), 0u);
  auto st = set_inode_blocks(inode, 1u << 29, l);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, fsio::Errc::unsupported);
  EXPECT_EQ(st.error().message(), "ext: a file of 536870912 blocks needs the huge_file feature");
}

// --- reading: a bad entry is named by where it is (root or block N, entry K) ---

// walk_extents over an inode whose i_block is `root`, extent blocks read from `blocks`.
fsio::Status walk(const Bytes& root, const std::map<std::uint64_t, Bytes>& blocks) {
  Layout l;
  l.block_size = 1024;
  l.blocks_count = 1000;
  l.first_data_block = 1;
  Inode inode{12, std::vector<std::byte>(256)};
  auto f = inode.fields();
  std::memcpy(f.i_block, root.data(), root.size());
  inode.set_fields(f);
  return walk_extents(
      inode, l,
      [&](std::uint64_t b) -> fsio::Result<std::span<const std::byte>> {
        return std::as_bytes(std::span(blocks.at(b)));
      },
      [](const Extent&) -> fsio::Status { return {}; }, {});
}

TEST(WalkExtents, NamesTheRootOrTheBlockAndTheEntryOfAFault) {
  // Root leaf: entry 1 starts at logical 5, inside entry 0's 0..9.
  auto st = walk(LE().header(2, 4, 0).extent(0, 10, 100).extent(5, 1, 200).b, {});
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message(),
            "ext inode 12: extent root entry 1: ee_block 5 is out of order or outside its index range");
  // Root index -> block 50, a leaf whose entry 2 has length 0; eh_max 84 = (1024 - 12) / 12.
  Bytes leaf = LE().header(3, 84, 0).extent(0, 1, 100).extent(1, 1, 101).extent(2, 0, 102).b;
  leaf.resize(1024);
  st = walk(LE().header(1, 4, 1).index(0, 50).b, {{50, leaf}});
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message(), "ext inode 12: extent block 50 entry 2: ee_len 0");
  // The block's header itself: no entry named.
  Bytes bad(1024);
  st = walk(LE().header(1, 4, 1).index(0, 50).b, {{50, bad}});
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message(), "ext inode 12: extent block 50: bad eh_magic 0x0 (expected 0xF30A)");
}

// --- trees written into mke2fs images, read back by debugfs and e2fsck ---

// Most cases use 1 GiB of 4 KiB blocks: 8 groups of 32768 blocks, flex_bg
// keeping every group's bitmaps and inode table in group 0.
class ExtentTree : public peers::WriterTest {
 protected:
  // The extents given to /f, committed; returns the tree blocks.
  std::vector<std::uint64_t> commit_file(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& runs,
                                         const std::vector<Extent>& extents, std::uint64_t size) {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    for (const auto& [first, len] : runs) {
      take(tx, first, len);
      if (HasFatalFailure()) return {};
    }
    auto tree = peers::adopt(*fs, tx, "/f", extents, size);
    EXPECT_TRUE(tree.has_value()) << tree.error().message();
    auto st = tx.commit();
    EXPECT_TRUE(st.has_value()) << st.error().message();
    return tree ? *tree : std::vector<std::uint64_t>{};
  }
  Bytes i_block() {
    auto fs = Filesystem::open(img_, OpenOptions{});
    EXPECT_TRUE(fs.has_value());
    auto inode = (*fs)->read_inode(*(*fs)->lookup("/f"));
    EXPECT_TRUE(inode.has_value());
    return to_bytes(inode->i_block());
  }
  Bytes block(std::uint64_t b, std::size_t len) { return to_bytes(test::read_bytes(img_, b * bs_, len)); }
};

TEST_F(ExtentTree, FourExtentsLiveInTheInode) {
  make(4096, "1G");
  // Four extents of 2 blocks at logical 0, 10, 20, 30 (holes between, so
  // nothing merges), on 8 consecutive free blocks P..P+7 of group 0.
  const std::uint64_t p = first_free(0);
  std::vector<Extent> ex;
  for (std::uint32_t k = 0; k < 4; ++k) ex.push_back({10 * k, 2, p + 2 * k, false});
  const auto tree = commit_file({{p, 8}}, ex, 32 * 4096);
  EXPECT_TRUE(tree.empty());
  // i_block: header {entries 4, max 4, depth 0}, then the four extents.
  LE want;
  want.header(4, 4, 0);
  for (std::uint32_t k = 0; k < 4; ++k) want.extent(10 * k, 2, p + 2 * k);
  EXPECT_EQ(i_block(), want.b);

  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(rows[k].max_level, 0u);
    EXPECT_EQ(rows[k].entries, 4u);
    EXPECT_EQ(rows[k].logical_first, 10 * k);
    EXPECT_EQ(rows[k].logical_last, 10 * k + 1);
    EXPECT_EQ(rows[k].physical_first, p + 2 * k);
    EXPECT_EQ(rows[k].length, 2u);
    EXPECT_FALSE(rows[k].uninit);
  }
  const auto st = peers::debugfs_stat(img_, "/f");
  EXPECT_EQ(st.flags, 0x80000u);     // EXTENTS_FL alone
  EXPECT_EQ(st.blockcount, 8u * 8);  // 8 blocks of 4096 = 64 sectors
  EXPECT_EQ(st.size, 32u * 4096);
  expect_clean();
}

TEST_F(ExtentTree, AFifthExtentMovesThemIntoALeafBlock) {
  make(4096, "1G");
  const std::uint64_t p = first_free(0);
  std::vector<Extent> ex;
  for (std::uint32_t k = 0; k < 5; ++k) ex.push_back({10 * k, 2, p + 2 * k, false});
  const auto tree = commit_file({{p, 10}}, ex, 42 * 4096);
  // The leaf is allocated at the goal, the block after the last extent: P + 10.
  ASSERT_EQ(tree, (std::vector<std::uint64_t>{p + 10}));
  // i_block: header {1, 4, depth 1}, one index {ei_block 0, leaf P + 10}.
  LE root;
  root.header(1, 4, 1).index(0, p + 10);
  root.b.resize(60);  // three unused index slots, zero
  EXPECT_EQ(i_block(), root.b);
  // The leaf: header {5, max (4096 - 12) / 12 = 340 = 0x154, depth 0}, the
  // five extents, zeros up to the checksum at 12 + 12 * 340 = 4092.
  LE leaf;
  leaf.header(5, 340, 0);
  for (std::uint32_t k = 0; k < 5; ++k) leaf.extent(10 * k, 2, p + 2 * k);
  leaf.b.resize(4092);
  EXPECT_EQ(block(p + 10, 4092), leaf.b);
  EXPECT_EQ(Bytes(leaf.b.begin(), leaf.b.begin() + 6), (Bytes{0x0A, 0xF3, 0x05, 0x00, 0x54, 0x01}));

  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].level, 0u);  // the index row: level 0 of 1, pointing at the leaf
  EXPECT_EQ(rows[0].max_level, 1u);
  EXPECT_EQ(rows[0].physical_first, p + 10);
  for (std::uint32_t k = 0; k < 5; ++k) {
    EXPECT_EQ(rows[1 + k].level, 1u);
    EXPECT_EQ(rows[1 + k].logical_first, 10 * k);
    EXPECT_EQ(rows[1 + k].physical_first, p + 2 * k);
    EXPECT_EQ(rows[1 + k].length, 2u);
  }
  // i_blocks counts the leaf: (10 + 1) * 8 sectors. e2fsck checks the leaf's checksum.
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, 11u * 8);
  expect_clean();
}

TEST_F(ExtentTree, A341stExtentStartsASecondLeaf) {
  make(4096, "1G");
  // 341 one-block extents at logical 0, 2, 4, ... (holes between) on 341
  // consecutive blocks: 340 fill the first leaf, the last goes to a second.
  const std::uint64_t p = first_free(0);
  std::vector<Extent> ex;
  for (std::uint32_t k = 0; k < 341; ++k) ex.push_back({2 * k, 1, p + k, false});
  const auto tree = commit_file({{p, 341}}, ex, 682 * 4096);
  ASSERT_EQ(tree, (std::vector<std::uint64_t>{p + 341, p + 342}));
  // Root: two indexes, the second at the logical block of extent 340: 680.
  LE root;
  root.header(2, 4, 1).index(0, p + 341).index(680, p + 342);
  root.b.resize(60);
  EXPECT_EQ(i_block(), root.b);
  EXPECT_EQ(Bytes(block(p + 341, 12)), LE().header(340, 340, 0).b);
  LE second;
  second.header(1, 340, 0).extent(680, 1, p + 340);
  EXPECT_EQ(block(p + 342, 24), second.b);

  const auto rows = peers::debugfs_ex(img_, "/f");
  std::size_t index_rows = 0, leaf_rows = 0;
  for (const auto& r : rows) {
    if (r.leaf()) {
      EXPECT_EQ(r.logical_first, 2 * leaf_rows);
      EXPECT_EQ(r.physical_first, p + leaf_rows);
      ++leaf_rows;
    } else {
      EXPECT_EQ(r.physical_first, p + 341 + index_rows);
      ++index_rows;
    }
  }
  EXPECT_EQ(index_rows, 2u);
  EXPECT_EQ(leaf_rows, 341u);
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, (341u + 2) * 8);
  expect_clean();
}

TEST_F(ExtentTree, DepthTwoWhenTheRootCannotIndexEveryLeaf) {
  // 1 KiB blocks: a tree block holds (1024 - 12) / 12 = 84 entries; the root
  // indexes 4 leaves = 336 extents. 337 need 5 leaves, so one index block
  // above them and a root of depth 2: 6 tree blocks.
  make(1024, "64M");
  std::uint64_t p = 0;
  for (const auto& g : groups_)
    for (const auto& r : g.free_block_ranges)
      if (p == 0 && r.count() >= 337 + 6) p = r.first;
  ASSERT_NE(p, 0u) << "no run of 343 free blocks in the image";
  std::vector<Extent> ex;
  for (std::uint32_t k = 0; k < 337; ++k) ex.push_back({2 * k, 1, p + k, false});
  const auto tree = commit_file({{p, 337}}, ex, 674 * 1024);
  ASSERT_EQ(tree.size(), 6u);
  const Bytes root = i_block();
  EXPECT_EQ(Bytes(root.begin(), root.begin() + 12), LE().header(1, 4, 2).b);
  // The index block (the last one built): 5 entries of 84 max at depth 1,
  // pointing at the leaves for logical 0, 168, 336, 504, 672 (84 extents of 2 each).
  LE index;
  index.header(5, 84, 1);
  for (std::uint32_t k = 0; k < 5; ++k) index.index(168 * k, tree[k]);
  EXPECT_EQ(block(tree[5], 12 + 5 * 12), index.b);

  const auto rows = peers::debugfs_ex(img_, "/f");
  std::size_t at_level[3] = {};
  for (const auto& r : rows) {
    ASSERT_EQ(r.max_level, 2u);
    ++at_level[r.level];
  }
  EXPECT_EQ(at_level[0], 1u);
  EXPECT_EQ(at_level[1], 5u);
  EXPECT_EQ(at_level[2], 337u);
  // 1 KiB blocks are 2 sectors each.
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, (337u + 6) * 2);
  expect_clean();
}

TEST_F(ExtentTree, TheLongestInitializedAndUnwrittenExtents) {
  make(4096, "1G");
  // Groups 2 and 6 hold no metadata (flex_bg, no superblock backup):
  // [2 * 32768, 3 * 32768) = 65536-98303 and 196608-229375 are all free.
  ASSERT_EQ(groups_.at(2).free_block_ranges, (std::vector<peers::Range>{{65536, 98303}}));
  ASSERT_EQ(groups_.at(6).free_block_ranges, (std::vector<peers::Range>{{196608, 229375}}));
  const std::vector<Extent> ex{{0, 32768, 65536, false}, {32768, 32767, 196608, true}};
  const auto tree = commit_file({{65536, 32768}, {196608, 32767}}, ex, 65535ull * 4096);
  EXPECT_TRUE(tree.empty());
  // ee_len 32768 = 0x8000 is initialized; 32767 unwritten is stored as
  // 32767 + 32768 = 65535 = 0xFFFF. 65536 = 0x10000, 196608 = 0x30000.
  const Bytes want{0x0A, 0xF3, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
                   0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00};
  const Bytes got = i_block();
  EXPECT_EQ(Bytes(got.begin(), got.begin() + 36), want);

  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].logical_last, 32767u);
  EXPECT_EQ(rows[0].physical_last, 98303u);
  EXPECT_EQ(rows[0].length, 32768u);
  EXPECT_FALSE(rows[0].uninit);
  EXPECT_EQ(rows[1].logical_first, 32768u);
  EXPECT_EQ(rows[1].logical_last, 65534u);
  EXPECT_EQ(rows[1].physical_first, 196608u);
  EXPECT_EQ(rows[1].length, 32767u);
  EXPECT_TRUE(rows[1].uninit);
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, 65535u * 8);
  expect_clean();
}

TEST_F(ExtentTree, StartsPast32BitsUseEeStartHi) {
  // No image here has 2^32 blocks (16 TiB at 4 KiB), so this tree is only
  // encoded in memory and never committed: block 0x1_2345_6789 is stored as
  // ee_start_hi 0x0001, ee_start_lo 0x23456789.
  make(4096, "1G");
  auto fs = peers::open_rw(img_);
  Transaction tx(*fs, peers::kNow);
  auto inode = fs->read_inode(*fs->lookup("/f"));
  ASSERT_TRUE(inode.has_value());
  auto tree = build_extent_tree(*fs, tx.alloc(), *inode, {{7, 3, 0x123456789ull, false}}, 0);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  const Bytes got = to_bytes(inode->i_block());
  const Bytes want{0x0A, 0xF3, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x07, 0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x89, 0x67, 0x45, 0x23};
  EXPECT_EQ(Bytes(got.begin(), got.begin() + 24), want);
  EXPECT_TRUE(inode->flags() & EXT4_EXTENTS_FL);
}

}  // namespace ext::extent_tests
