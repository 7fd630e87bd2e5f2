// Names added to directories through add_entry (ext/dir_write.hpp), which
// turns a full one-block directory into an htree and inserts by hash
// (ext/htree.hpp), judged by debugfs and e2fsck: `debugfs htree` lists the
// index and, for every leaf, each name with the hash debugfs computes;
// `dx_hash` gives a name's hash; e2fsck -fn checks the index, the hash
// ranges and every checksum.
//
// Numbers worked by hand from directory.rst for 1 KiB blocks with
// metadata_csum: a leaf ends 12 bytes early (the checksum tail), so it
// holds 1012 bytes of entries; a name of 8 bytes takes 8 + 8 = 16. The
// first block also holds "." and ".." (12 each): (1012 - 24) / 16 = 61
// names, so the 62nd converts the directory. A leaf holds 1012 / 16 = 63.
// dx_root: 1024 - 0x20 = 992 bytes of 8-byte entries, less one for the
// dx_tail: 123. dx_node: (1024 - 8) / 8 - 1 = 126.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unordered_map>

#include "ext/dir_write.hpp"
#include "ext/hash.hpp"
#include "tests/ext/peers.hpp"

namespace ext::htree_tests {

namespace test = fsio::test;

// Names of 8 bytes: "n0000042".
std::string name8(char prefix, std::uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%07u", prefix, i);
  return buf;
}

std::size_t total_names(const peers::Htree& h) {
  std::size_t n = 0;
  for (const auto& leaf : h.leaves) n += leaf.names.size();
  return n;
}

const peers::HtreeLeaf* leaf_at(const peers::Htree& h, std::uint32_t block) {
  for (const auto& leaf : h.leaves)
    if (leaf.block == block) return &leaf;
  return nullptr;
}

class Htree : public peers::WriterTest {
 protected:
  // SIZE (64 MiB) of 1 KiB blocks holding /f and an empty directory /d, with a
  // fixed hash seed so that every run splits the same way.
  void make_dir_image(const std::string& extra = "", const std::string& size = "64M") {
    std::filesystem::create_directories(dir_ / "src/d");
    make(1024, size, extra);
    peers::debugfs(img_, "ssv hash_seed 6d2a1f3e-0b8c-4a5d-9e7f-112233445566", true);
  }
  // Links every name to /f in DIR (one transaction), keeping /f's link
  // count right. With `spill`, before each name the cache writes out and
  // drops every block it may (spill_unseen, as extwb put's small cache does).
  void link(const std::vector<std::string>& names, const std::string& dir = "/d", bool spill = false) {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    const std::uint32_t f_ino = *fs->lookup("/f");
    auto d = fs->read_inode(*fs->lookup(dir));
    ASSERT_TRUE(d.has_value()) << d.error().message();
    for (const auto& n : names) {
      if (spill) {
        ASSERT_TRUE(tx.spill_if_over(0).has_value());
      }
      auto st = add_entry(*fs, tx.alloc(), *d, n, f_ino, EXT4_FT_REG_FILE);
      ASSERT_TRUE(st.has_value()) << n << ": " << st.error().message();
    }
    ASSERT_TRUE(fs->write_inode(*d, MetaKind::directory).has_value());
    auto f = fs->read_inode(f_ino);
    ASSERT_TRUE(f.has_value());
    auto fields = f->fields();
    fields.i_links_count = std::uint16_t(fields.i_links_count + names.size());
    f->set_fields(fields);
    ASSERT_TRUE(fs->write_inode(*f).has_value());
    auto st = tx.commit();
    ASSERT_TRUE(st.has_value()) << st.error().message();
  }
  // The hashes our dx_hash gives (to choose names; debugfs judges the result).
  std::uint32_t our_hash(const std::string& name) {
    if (!seed_) {
      auto fs = Filesystem::open(img_, OpenOptions{});
      EXPECT_TRUE(fs.has_value());
      std::copy(std::begin((*fs)->layout().hash_seed), std::end((*fs)->layout().hash_seed), seed_words_);
      seed_ = true;
    }
    return dx_hash(name, DX_HASH_HALF_MD4, seed_words_)->major;
  }
  // Pairs of 8-byte names "cNNNNNNN" with one hash (as our dx_hash computes
  // it; the tests confirm with debugfs): among 2^18 names a 31-bit hash
  // collides about 2^36 / 2^32 = 16 times.
  struct Pair {
    std::string x, y;
    std::uint32_t hash;
  };
  std::vector<Pair> collisions() {
    std::unordered_map<std::uint32_t, std::uint32_t> seen;
    std::vector<Pair> out;
    for (std::uint32_t i = 0; i < (1u << 18); ++i) {
      const std::uint32_t h = our_hash(name8('c', i));
      const auto [it, fresh] = seen.emplace(h, i);
      if (!fresh) out.push_back({name8('c', it->second), name8('c', i), h});
    }
    return out;
  }
  // Every name in the range its index entry gives, all of them there, e2fsck content.
  void expect_sound(const peers::Htree& h, std::size_t names) {
    EXPECT_EQ(peers::htree_misplaced(h), "");
    EXPECT_EQ(total_names(h), names);
    expect_clean();
  }

  bool seed_ = false;
  std::uint32_t seed_words_[4] = {};
};

TEST_F(Htree, AFullBlockBecomesARootAndTwoLeaves) {
  make_dir_image();
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 62; ++i) names.push_back(name8('n', i));
  link({names.begin(), names.begin() + 61});
  auto st = peers::debugfs_stat(img_, "/d");
  EXPECT_EQ(st.flags, 0x80000u);  // 61 names still fit the linear block
  EXPECT_EQ(st.size, 1024u);

  link({names[61]});
  st = peers::debugfs_stat(img_, "/d");
  EXPECT_EQ(st.flags, 0x81000u);  // INDEX_FL | EXTENTS_FL
  EXPECT_EQ(st.size, 3u * 1024);  // root and two leaves
  EXPECT_EQ(st.blockcount, 3u * 2);
  const auto h = peers::debugfs_htree(img_, "/d");
  EXPECT_EQ(h.hash_version, 1u);  // half_md4, the default
  EXPECT_EQ(h.indirect_levels, 0u);
  ASSERT_EQ(h.nodes.size(), 1u);
  EXPECT_EQ(h.nodes[0].limit, 123u);
  ASSERT_EQ(h.nodes[0].count, 2u);
  // Split by hash at half the bytes: equal entries, so the 31 lowest hashes
  // stay in block 1 and block 2 starts at the 32nd (index 31).
  auto hashes = peers::debugfs_hashes(img_, names);
  std::sort(hashes.begin(), hashes.end());
  ASSERT_NE(hashes[30], hashes[31]) << "two names with one hash at the split; choose other names";
  EXPECT_EQ(h.nodes[0].entries[0], (std::pair<std::uint32_t, std::uint32_t>{0, 1}));
  EXPECT_EQ(h.nodes[0].entries[1], (std::pair<std::uint32_t, std::uint32_t>{hashes[31], 2}));
  ASSERT_NE(leaf_at(h, 1), nullptr);
  ASSERT_NE(leaf_at(h, 2), nullptr);
  EXPECT_EQ(leaf_at(h, 1)->names.size(), 31u);
  EXPECT_EQ(leaf_at(h, 2)->names.size(), 31u);
  expect_sound(h, 62);
}

TEST_F(Htree, AFullLeafSplitsInTwoByHash) {
  make_dir_image();
  std::vector<std::string> first;
  for (std::uint32_t i = 0; i < 62; ++i) first.push_back(name8('n', i));
  link(first);
  const auto h0 = peers::debugfs_htree(img_, "/d");
  ASSERT_EQ(h0.nodes.at(0).count, 2u);
  const std::uint32_t mid = h0.nodes[0].entries[1].first;  // block 2 from here
  // Names for block 1 (hash below `mid`, as debugfs hashes them): 32 fill it
  // to 63, the 33rd splits it.
  std::vector<std::string> candidates;
  for (std::uint32_t i = 0; i < 400; ++i) candidates.push_back(name8('m', i));
  const auto hashes = peers::debugfs_hashes(img_, candidates);
  std::vector<std::string> low;
  std::vector<std::uint32_t> leaf1;
  for (const auto& [hash, name] : leaf_at(h0, 1)->names) leaf1.push_back(hash);
  for (std::size_t i = 0; i < candidates.size() && low.size() < 33; ++i) {
    if (hashes[i] >= mid || std::count(leaf1.begin(), leaf1.end(), hashes[i])) continue;
    low.push_back(candidates[i]);
    leaf1.push_back(hashes[i]);
  }
  ASSERT_EQ(low.size(), 33u);
  link({low.begin(), low.begin() + 32});
  const auto h1 = peers::debugfs_htree(img_, "/d");
  EXPECT_EQ(h1.nodes.at(0).count, 2u);  // 31 + 32 = 63: full, not split
  EXPECT_EQ(leaf_at(h1, 1)->names.size(), 63u);

  // The split sorts the 63 names the leaf holds by hash and keeps the lower
  // half of the bytes (32 names of 16: 512 >= 1008 / 2); the upper 31 move to
  // a new block 3 whose index entry, the 33rd hash, goes between block 1's
  // and block 2's. The new name then goes to the side its hash picks.
  std::vector<std::uint32_t> old(leaf1.begin(), leaf1.end() - 1);
  std::sort(old.begin(), old.end());
  ASSERT_EQ(old.size(), 63u);
  const bool new_goes_up = leaf1.back() >= old[32];
  link({low[32]});
  const auto h = peers::debugfs_htree(img_, "/d");
  ASSERT_EQ(h.nodes.at(0).count, 3u);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> want{{0, 1}, {old[32], 3}, {mid, 2}};
  EXPECT_EQ(h.nodes[0].entries, want);
  EXPECT_EQ(leaf_at(h, 1)->names.size(), new_goes_up ? 32u : 33u);
  EXPECT_EQ(leaf_at(h, 3)->names.size(), new_goes_up ? 32u : 31u);
  EXPECT_EQ(leaf_at(h, 2)->names.size(), 31u);
  EXPECT_EQ(peers::debugfs_stat(img_, "/d").size, 4u * 1024);
  expect_sound(h, 62 + 33);
}

// A leaf written out and dropped by a spill comes back from the device
// clean; when it then splits and the new name goes to the upper half, the
// lower half it keeps must still reach the device (it was lost: e2fsck
// found the old whole leaf beside the new upper one, its names twice).
TEST_F(Htree, ALeafSplitAfterASpillKeepsBothHalves) {
  make_dir_image();
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 600; ++i) names.push_back(name8('s', i));
  link(names, "/d", true);
  const auto h = peers::debugfs_htree(img_, "/d");
  EXPECT_GT(h.leaves.size(), 10u);  // 600 names of 16 bytes in leaves of 1012: at least 10 splits
  expect_sound(h, 600);
}

TEST_F(Htree, EqualHashesAcrossTheFirstSplitSetTheContinuedBit) {
  make_dir_image();
  const auto pairs = collisions();
  ASSERT_FALSE(pairs.empty()) << "no two names with one hash";
  const std::string x = pairs[0].x, y = pairs[0].y;
  const auto pair_hashes = peers::debugfs_hashes(img_, {x, y});
  ASSERT_EQ(pair_hashes[0], pair_hashes[1]) << x << " and " << y << " differ for debugfs";
  const std::uint32_t h = pair_hashes[0];
  // 62 names with the pair at the split (sorted places 30 and 31): 30 hash
  // below it, 30 above.
  std::vector<std::string> names{x}, below, above;
  for (std::uint32_t i = 0; below.size() < 30 || above.size() < 30; ++i) {
    const std::string n = name8('n', i);
    const std::uint32_t nh = our_hash(n);
    if (nh < h && below.size() < 30) below.push_back(n);
    if (nh > h && above.size() < 30) above.push_back(n);
  }
  names.insert(names.end(), below.begin(), below.end());
  names.insert(names.end(), above.begin(), above.end());
  names.push_back(y);
  auto all = peers::debugfs_hashes(img_, names);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all[30], h);
  ASSERT_EQ(all[31], h);
  ASSERT_NE(all[29], h);
  ASSERT_NE(all[32], h);
  link({names.begin(), names.end() - 1});
  link({names.back()});  // converts

  const auto tree = peers::debugfs_htree(img_, "/d");
  ASSERT_EQ(tree.nodes.at(0).count, 2u);
  // Block 2's range starts at the pair's hash with the low bit set: the run
  // of that hash began in block 1 and continues in block 2.
  EXPECT_EQ(tree.nodes[0].entries[1], (std::pair<std::uint32_t, std::uint32_t>{h | 1, 2}));
  const auto* one = leaf_at(tree, 1);
  const auto* two = leaf_at(tree, 2);
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->names.size(), 31u);
  EXPECT_EQ(two->names.size(), 31u);
  EXPECT_EQ(one->names.back().first, h);   // one of the pair ends block 1
  EXPECT_EQ(two->names.front().first, h);  // the other starts block 2
  expect_sound(tree, 62);
}

TEST_F(Htree, EqualHashesAcrossALeafSplitSetTheContinuedBit) {
  make_dir_image();
  std::vector<std::string> first;
  for (std::uint32_t i = 0; i < 62; ++i) first.push_back(name8('n', i));
  link(first);
  const auto h0 = peers::debugfs_htree(img_, "/d");
  ASSERT_EQ(h0.nodes.at(0).count, 2u);
  const std::uint32_t mid = h0.nodes[0].entries[1].first;
  std::vector<std::uint32_t> held;  // block 1's 31 hashes
  for (const auto& [hash, name] : leaf_at(h0, 1)->names) held.push_back(hash);
  // Fill block 1 to 63 so that its split (at 32 of 63: the 32nd and 33rd
  // hashes) falls between the two names of a pair: 31 hashes below the
  // pair's, 30 above it (and below `mid`, to stay in block 1).
  std::optional<Pair> pick;
  std::size_t below = 0, above = 0;
  for (const auto& p : collisions()) {
    below = std::count_if(held.begin(), held.end(), [&](std::uint32_t v) { return v < p.hash; });
    above = std::count_if(held.begin(), held.end(), [&](std::uint32_t v) { return v > p.hash; });
    if (p.hash < mid && below + above == held.size() && below <= 31 && above <= 30) {
      pick = p;
      break;
    }
  }
  ASSERT_TRUE(pick.has_value()) << "no pair hashing into block 1";
  const Pair pair = *pick;
  ASSERT_EQ(peers::debugfs_hashes(img_, {pair.x, pair.y}), (std::vector<std::uint32_t>{pair.hash, pair.hash}));
  std::vector<std::string> add{pair.x, pair.y};
  std::string last;  // the 64th name: it splits the full block
  for (std::uint32_t i = 0; below < 31 || above < 30 || last.empty(); ++i) {
    const std::string n = name8('m', i);
    const std::uint32_t nh = our_hash(n);
    if (nh == pair.hash || nh >= mid || std::count(held.begin(), held.end(), nh)) continue;
    held.push_back(nh);
    if (nh < pair.hash && below < 31) {
      add.push_back(n);
      ++below;
    } else if (nh > pair.hash && above < 30) {
      add.push_back(n);
      ++above;
    } else if (last.empty()) {
      last = n;
    } else {
      held.pop_back();
    }
  }
  ASSERT_EQ(add.size(), 32u);
  link(add);
  ASSERT_EQ(leaf_at(peers::debugfs_htree(img_, "/d"), 1)->names.size(), 63u);
  link({last});

  const auto tree = peers::debugfs_htree(img_, "/d");
  ASSERT_EQ(tree.nodes.at(0).count, 3u);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> want{{0, 1}, {pair.hash | 1, 3}, {mid, 2}};
  EXPECT_EQ(tree.nodes[0].entries, want);
  const bool last_goes_up = our_hash(last) > pair.hash;
  EXPECT_EQ(leaf_at(tree, 1)->names.size(), last_goes_up ? 32u : 33u);
  EXPECT_EQ(leaf_at(tree, 3)->names.size(), last_goes_up ? 32u : 31u);
  expect_sound(tree, 62 + 33);
}

TEST_F(Htree, AFullRootGainsALevelAndFullNodesSplit) {
  make_dir_image();
  // Leaves split into halves of 32, so they hold 32 to 63 names: the 123
  // root entries fill after some 4000 to 7700 names; then the root's
  // entries move into a node (limit 126), which fills after a few more
  // splits and is split in two under the root. 9000 names get there.
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 9000; ++i) names.push_back(name8('n', i));
  link(names);
  const auto h = peers::debugfs_htree(img_, "/d");
  EXPECT_EQ(h.indirect_levels, 1u);
  ASSERT_GE(h.nodes.size(), 3u);
  EXPECT_EQ(h.nodes[0].limit, 123u);
  EXPECT_EQ(h.nodes[0].count, h.nodes.size() - 1);  // the root indexes the nodes
  for (std::size_t i = 1; i < h.nodes.size(); ++i) {
    EXPECT_EQ(h.nodes[i].limit, 126u);
    EXPECT_GE(h.nodes[i].count, 63u) << "node " << i << ": a split leaves at least half";
  }
  expect_sound(h, 9000);
}

TEST_F(Htree, NamesGoIntoAnIndexE2fsckBuilt) {
  std::filesystem::create_directories(dir_ / "src/big");
  for (std::uint32_t i = 0; i < 300; ++i) test::make_file(dir_ / ("src/big/" + name8('e', i)), 0);
  make(1024, "64M");
  const auto r = test::run("e2fsck -fyD '" + img_ + "'");  // -D: index every directory
  ASSERT_LE(r.exit_code, 1) << r.output;
  const unsigned leaves = peers::debugfs_htree(img_, "/big").nodes.at(0).count;
  ASSERT_GE(leaves, 5u) << "300 names of 16 bytes need at least 4800 / 1012 -> 5 leaves";
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 500; ++i) names.push_back(name8('n', i));
  link(names, "/big");
  const auto h = peers::debugfs_htree(img_, "/big");
  EXPECT_GT(h.nodes[0].count, leaves);
  expect_sound(h, 800);
}

TEST_F(Htree, AThirdLevelIsRefused) {
  // Without metadata_csum no checksum needs fixing after the poke below.
  make_dir_image("-O ^metadata_csum", "8M");
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 80; ++i) names.push_back(name8('n', i));  // 1024 - 24 = 1000 / 16: 62 fit
  link(names);
  ASSERT_EQ(peers::debugfs_stat(img_, "/d").flags, 0x81000u);
  // dx_root_info.indirect_levels is byte 0x18 + 6 of the root (block 0).
  const std::uint64_t root = std::stoull(peers::debugfs(img_, "bmap /d 0"));
  {
    std::fstream f(img_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(root * 1024 + 0x1E));
    f.put(2);
  }
  const std::string before = test::read_all(img_);
  {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    const std::uint32_t d_ino = *fs->lookup("/d");
    auto d = fs->read_inode(d_ino);
    ASSERT_TRUE(d.has_value());
    auto st = add_entry(*fs, tx.alloc(), *d, "late", *fs->lookup("/f"), EXT4_FT_REG_FILE);
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().code, fsio::Errc::unsupported);
    EXPECT_EQ(st.error().message(),
              "ext directory inode " + std::to_string(d_ino) + ": htree with 3 levels (large_dir) is not supported");
  }
  EXPECT_TRUE(test::read_all(img_) == before);
}

}  // namespace ext::htree_tests
