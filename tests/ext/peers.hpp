// What the writer's unit tests share: images made by mke2fs, opened for
// writing and changed through ext/'s public interfaces (Allocator,
// build_extent_tree, add_entry, FileWriter), committed, and then judged by
// the peers: what debugfs, dumpe2fs and e2fsck -fn say the bytes mean.
//
// The parsers read the output of e2fsprogs 1.47 (`debugfs -R 'ex F'`,
// `'stat F'`, `'htree D'`, `dumpe2fs`); a line they cannot read throws, so
// a change of format fails a test loudly instead of passing it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ext/commit.hpp"
#include "ext/fs.hpp"
#include "tests/support/support.hpp"

namespace ext::peers {

namespace test = fsio::test;

// The transaction time of every test (2023-11-14 22:13:20 UTC).
inline constexpr Timestamp kNow{1700000000, 0};

// "" when mke2fs, debugfs, dumpe2fs and e2fsck are all installed, else
// which one is missing (for GTEST_SKIP).
std::string missing_peers();

// mke2fs -q -F ARGS [-d SRC] IMG SIZE; throws with mke2fs's output on failure.
void mkfs(const std::string& img, const std::string& args, const std::string& size, const std::string& src = "");
// `debugfs -R CMD IMG` (with -w when `write`); throws when debugfs fails or
// reports an error for the command.
std::string debugfs(const std::string& img, const std::string& cmd, bool write = false);
// e2fsck -fn: exit code 0 and its output.
test::RunResult fsck(const std::string& img);

// Opens an image for writing; throws with the library's message on failure.
std::unique_ptr<Filesystem> open_rw(const std::string& img);

// An inclusive range of blocks or inodes, as dumpe2fs prints them ("4248-32767").
struct Range {
  std::uint64_t first = 0, last = 0;
  std::uint64_t count() const { return last - first + 1; }
  bool operator==(const Range&) const = default;
};

// One "Group N:" paragraph of dumpe2fs.
struct Group {
  std::uint64_t first = 0, last = 0;  // its blocks
  std::string flags;                  // "[INODE_UNINIT, BLOCK_UNINIT]" or ""
  std::uint64_t free_blocks = 0, free_inodes = 0, dirs = 0, unused_inodes = 0;
  std::vector<Range> free_block_ranges, free_inode_ranges;
};
std::vector<Group> dumpe2fs_groups(const std::string& img);
// dumpe2fs -h as "field" -> "value" ("Reserved block count" -> "13107").
std::map<std::string, std::string> dumpe2fs_header(const std::string& img);
std::uint64_t header_number(const std::map<std::string, std::string>& h, const std::string& field);

// One row of `debugfs -R 'ex F'`: a leaf extent or an index entry.
struct ExRow {
  unsigned level = 0, max_level = 0;  // " 1/ 1"
  unsigned entry = 0, entries = 0;    // "  2/  5": entry 2 of 5 in its node
  std::uint64_t logical_first = 0, logical_last = 0;
  std::uint64_t physical_first = 0, physical_last = 0;  // an index row: the child block in both
  std::uint64_t length = 0;
  bool uninit = false;
  bool leaf() const { return level == max_level; }
};
std::vector<ExRow> debugfs_ex(const std::string& img, const std::string& path);

// What `debugfs -R 'stat F'` says of an inode.
struct Stat {
  std::uint32_t flags = 0;
  std::uint64_t size = 0;
  std::uint64_t blockcount = 0;  // i_blocks, 512-byte units
  std::uint32_t links = 0;
};
Stat debugfs_stat(const std::string& img, const std::string& path);

// `debugfs -R 'htree D'`, parsed: the index nodes and every leaf with the
// hashes debugfs computed for its names.
struct HtreeLeaf {
  std::uint32_t block = 0;  // logical block of the directory
  // The range its index entry gives: lo <= hash < hi (hi 0: 2^32), or
  // hash <= hi when the next entry's hash has the low "continued" bit.
  std::uint32_t lo = 0, hi = 0;
  bool hi_continued = false;
  std::vector<std::pair<std::uint32_t, std::string>> names;  // (hash, name)
};
struct HtreeNode {
  unsigned count = 0, limit = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> entries;  // (hash as stored, logical block)
};
struct Htree {
  unsigned hash_version = 0, indirect_levels = 0;
  std::vector<HtreeNode> nodes;   // the root first, then the interior nodes in order
  std::vector<HtreeLeaf> leaves;  // in hash order
};
Htree debugfs_htree(const std::string& img, const std::string& dir);
// Every leaf's names lie in its index entry's hash range; "" when they do,
// else the first one that does not.
std::string htree_misplaced(const Htree& h);

// Hashes that debugfs's dx_hash gives names with the image's seed and
// default hash, one debugfs run for all of them.
std::vector<std::uint32_t> debugfs_hashes(const std::string& img, const std::vector<std::string>& names);

// Gives the allocated data blocks of `extents` to the file at `path`
// (a regular file without blocks, made by mke2fs -d): the extent tree built
// (build_extent_tree), i_size = `size`, i_blocks = data + tree blocks, the
// inode written. Returns the tree blocks.
fsio::Result<std::vector<std::uint64_t>> adopt(Filesystem& fs, Transaction& tx, const std::string& path,
                                               const std::vector<Extent>& extents, std::uint64_t size);

// Bytes of the file at `path` as debugfs dump reads them.
std::string debugfs_dump(const std::string& img, const std::string& path, const test::TempDir& dir);

// A test on an image of its own: SetUp skips (saying which peer is
// missing) or makes a scratch directory whose src/ holds an empty file "f"
// (mke2fs -d copies src/ into every image).
class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // mke2fs -t ext4 -b BLOCK_SIZE EXTRA -d src IMG SIZE; then reads dumpe2fs's groups.
  void make(std::uint32_t block_size, const std::string& size, const std::string& extra = "");
  // The first free block of group g, as dumpe2fs lists it.
  std::uint64_t first_free(std::uint32_t g) const { return groups_.at(g).free_block_ranges.at(0).first; }
  // Asserts that the allocator hands out exactly [first, first + len) for that goal and length.
  void take(Transaction& tx, std::uint64_t first, std::uint32_t len);
  // e2fsck -fn finds nothing.
  void expect_clean();

  test::TempDir dir_;
  std::string img_;
  std::uint32_t bs_ = 0;
  std::vector<Group> groups_;
};

}  // namespace ext::peers
