// The FAT planner of mkfat -d (fat/tree_fill.hpp) on trees made here:
// names and refusals worked out by hand, slot and cluster counts by hand,
// the smallest volume against a search of every size, where each cluster
// goes and what the FAT and the directories hold, and DOS times at FAT's
// bounds. The volumes it writes are judged by fsck.fat, mtools and diff in
// tests/cli/mkfat_root*.sh.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "fat/tree_fill.hpp"

namespace fat {
namespace {

using fsio::NodeKind;

// A tree built in list order (the test keeps siblings sorted).
struct Maker {
  fsio::Tree t;
  Maker() {
    t.label = "SRC";
    fsio::TreeNode root;
    root.kind = NodeKind::directory;
    t.nodes.push_back(root);
  }
  std::uint32_t add(std::uint32_t parent, const std::string& name, NodeKind kind, std::uint64_t size = 0) {
    fsio::TreeNode n;
    n.name = name;
    n.parent = parent;
    n.kind = kind;
    n.size = size;
    n.mtime = {1700000000, 0};
    const auto index = std::uint32_t(t.nodes.size());
    if (kind == NodeKind::file && size > 0) {
      n.content = std::uint32_t(t.contents.size());
      t.contents.push_back({size, index});
    }
    t.nodes.push_back(n);
    return index;
  }
  std::uint32_t dir(std::uint32_t parent, const std::string& name) { return add(parent, name, NodeKind::directory); }
  std::uint32_t file(std::uint32_t parent, const std::string& name, std::uint64_t size) {
    return add(parent, name, NodeKind::file, size);
  }
};

ShortName sn(const char (&s)[12]) {
  ShortName out;
  std::memcpy(out.data(), s, 11);
  return out;
}

fsio::Error names_error(const fsio::Tree& t, const TreeOptions& o = {}) {
  auto r = plan_names(t, o, false);
  EXPECT_FALSE(r);
  return r ? fsio::Error{} : r.error();
}

TEST(TreeNames, ExactShortNamesAreClaimedBeforeTails) {
  // "FOO BAR.TXT" sorts first (' ' < 'B') and needs a tail; the exact
  // "FOOBAR~1.TXT" after it keeps its own name, so the tail is ~2 (Linux,
  // making them in this order, would refuse the second with EEXIST).
  Maker m;
  const auto lossy = m.file(0, "FOO BAR.TXT", 1);
  const auto exact = m.file(0, "FOOBAR~1.TXT", 1);
  auto names = plan_names(m.t, {}, false).value();
  EXPECT_EQ(names.nodes[exact].name.short_name, sn("FOOBAR~1TXT"));
  EXPECT_EQ(names.nodes[exact].name.slot_count(), 1u);
  EXPECT_EQ(names.nodes[lossy].name.short_name, sn("FOOBAR~2TXT"));
  EXPECT_EQ(names.nodes[lossy].name.slot_count(), 2u);
  EXPECT_EQ(names.nodes[0].slots, 3u);
  EXPECT_EQ(names.files, 2u);
  EXPECT_EQ(names.bytes, 2u);
}

TEST(TreeNames, SlotsCountDotsTheLabelAndLongNames) {
  Maker m;
  const auto d = m.dir(0, "DIR");
  m.file(d, "this long name needs three slots.txt", 0);  // 36 UTF-16 units: 3 LFN slots and its 8.3 entry
  m.file(d, "B", 0);
  auto names = plan_names(m.t, {}, true).value();
  EXPECT_EQ(names.nodes[0].slots, 2u);  // the label, DIR
  EXPECT_EQ(names.nodes[d].slots, 2u + 4 + 1);
  EXPECT_EQ(names.directories, 1u);
}

TEST(TreeNames, NamesEqualWhenCaseIsIgnoredAreRefusedNamingBoth) {
  Maker m;
  m.file(0, "README", 1);
  m.file(0, "readme", 1);
  EXPECT_EQ(names_error(m.t).message(),
            "SRC/README and SRC/readme: the same name when case is ignored; FAT cannot hold both");
  Maker u;  // Ä and ä (UTF-8), as Windows compares them
  const auto d = u.dir(0, "d");
  u.file(d, "\xC3\x84rger", 1);
  u.file(d, "\xC3\xA4rger", 1);
  EXPECT_EQ(names_error(u.t).code, fsio::Errc::unsupported);
}

TEST(TreeNames, NamesVfatRefusesAreRefusedWithThePath) {
  Maker m;
  const auto d = m.dir(0, "d");
  m.file(d, "what?", 1);
  EXPECT_EQ(names_error(m.t).message(),
            "SRC/d/what?: name 'what?': a control character or one of * ? < > | \" : / \\ cannot be in a FAT name");
  Maker l;
  l.file(0, std::string(256, 'x'), 1);
  EXPECT_NE(names_error(l.t).message().find("256 UTF-16 units; FAT holds at most 255"), std::string::npos);
  Maker bad;
  bad.file(0, "\xFF", 1);
  EXPECT_EQ(names_error(bad.t).message(), "SRC/\xFF: name is not valid UTF-8 (byte 0)");
}

TEST(TreeNames, SpecialFilesAreRefusedOrSkipped) {
  Maker m;
  const auto d = m.dir(0, "dev");
  m.add(d, "fifo", NodeKind::fifo);
  m.add(d, "null", NodeKind::char_device);
  EXPECT_EQ(names_error(m.t).message(),
            "SRC/dev/fifo: a FIFO; FAT holds only files and directories (--skip-special leaves it out)");
  TreeOptions skip;
  skip.skip_special = true;
  auto names = plan_names(m.t, skip, false).value();
  EXPECT_EQ(names.skipped, (std::vector<std::string>{"SRC/dev/fifo: a FIFO", "SRC/dev/null: a character device"}));
  EXPECT_EQ(names.nodes[d].slots, 2u);
  EXPECT_FALSE(names.nodes[2].kept);
}

TEST(TreeNames, FilesOf4GiBAreRefused) {
  Maker ok;
  ok.file(0, "max", 0xFFFFFFFFull);
  EXPECT_TRUE(plan_names(ok.t, {}, false));
  Maker big;
  big.file(0, "big", 0x100000000ull);
  EXPECT_EQ(names_error(big.t).message(),
            "SRC/big: 4294967296 bytes; a FAT file holds at most 4 GiB - 1 (4294967295 bytes)");
}

TEST(TreeNames, ADirectoryHoldsAtMost65536Slots) {
  // "n00000 x": a space, so an LFN slot and an 8.3 entry each; with '.'
  // and '..' 32767 names fill 65536 slots exactly.
  for (const std::uint32_t count : {32767u, 32768u}) {
    Maker m;
    const auto d = m.dir(0, "d");
    char name[16];
    for (std::uint32_t i = 0; i < count; ++i) {
      std::snprintf(name, sizeof name, "n%05u x", i);
      m.file(d, name, 0);
    }
    auto names = plan_names(m.t, {}, false);
    if (count == 32767) {
      ASSERT_TRUE(names) << names.error().message();
      EXPECT_EQ(names->nodes[d].slots, 65536u);
    } else {
      ASSERT_FALSE(names);
      EXPECT_EQ(names.error().message(),
                "SRC/d: its entries need 65538 slots of 32 bytes; a FAT directory holds at most 65536");
    }
  }
}

TEST(TreeNeeds, ClustersByHand) {
  Maker m;
  m.file(0, "e", 0);
  m.file(0, "f1", 1);
  m.file(0, "f4096", 4096);
  m.file(0, "f4097", 4097);
  const auto d = m.dir(0, "g");
  m.file(d, "x", 1);
  auto names = plan_names(m.t, {}, false).value();
  TreeOptions o;
  // files 0 + 1 + 1 + 2 + 1, the directory 1, the FAT32 root 1.
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat32, 4096).clusters, 7u);
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat16, 4096).clusters, 6u);
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat16, 512).clusters, 1u + 8 + 9 + 1 + 1);
  o.slack_percent = 10;
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat32, 4096).slack, 1u);  // 10% of 7, rounded up
  o.slack_percent = 0;
  o.slack_bytes = 5000;
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat32, 4096).slack, 2u);
  EXPECT_EQ(tree_needs(m.t, names, o, FatType::fat16, 4096).root_slots, 10u);  // 5 lower-case names: an LFN each
}

TEST(TreeNeeds, ARefusalGivesTheNumbers) {
  Layout l;
  l.type = FatType::fat16;
  l.sector_size = 512;
  l.sectors_per_cluster = 8;
  l.cluster_count = 1100;
  l.root_entries = 512;
  TreeNeeds n;
  n.clusters = 1234;
  EXPECT_EQ(check_tree_fits(l, n, 0).error().message(), "the tree needs 1,234 clusters of 4 KiB; the volume has 1,100");
  n.slack = 10;
  EXPECT_EQ(check_tree_fits(l, n, 3).error().message(),
            "the tree needs 1,234 clusters of 4 KiB and 10 free (--slack); the volume has 1,097 (3 more are bad)");
  n.clusters = 10;
  n.root_slots = 600;
  EXPECT_EQ(check_tree_fits(l, n, 0).error().message(),
            "the root directory needs 600 slots; FAT16's holds 512 (-r sets more; FAT32's root grows)");
  n.root_slots = 512;
  EXPECT_TRUE(check_tree_fits(l, n, 0));
}

// Every size from 1 KiB up, in order: the first that fits is what
// smallest_blocks must find by its search over runs of one type and
// cluster size. (The fit itself is compute_geometry's and check_tree_fits',
// tested on their own; this checks the search.)
std::uint64_t first_fit_by_walking(const fsio::Tree& t, const TreeNames& names, const FormatOptions& f) {
  std::map<std::pair<int, std::uint64_t>, TreeNeeds> memo;
  for (std::uint64_t kib = 1;; ++kib) {
    FormatOptions o = f;
    o.blocks = kib;
    auto g = compute_geometry(kib * 1024, o, {});
    if (!g) continue;
    const auto key = std::make_pair(int(g->type), g->cluster_bytes());
    if (!memo.count(key)) memo[key] = tree_needs(t, names, {}, g->type, g->cluster_bytes());
    if (g->type == FatType::fat32 && g->cluster_count < 65525) continue;
    if (check_tree_fits(*g, memo[key], 0)) return kib;
  }
}

TEST(SmallestBlocks, IsTheFirstSizeThatFitsWalkingEverySize) {
  Maker small;                       // many one-cluster files: a run of larger clusters can hold fewer of them
  const auto s = small.dir(0, "S");  // (a FAT12/16 root holds 512 entries)
  for (int i = 0; i < 3000; ++i) small.file(s, "F" + std::to_string(10000 + i), 100);
  // 40,000 one-cluster files fit the end of FAT16's run of 2 KiB clusters
  // (about 80 MiB), not the start of its run of 4 KiB (128 MiB: 32,768
  // clusters); doubling from the bottom first fits at 256 MiB.
  Maker many;
  const auto md = many.dir(0, "M");
  for (int i = 0; i < 40000; ++i) many.file(md, "F" + std::to_string(100000 + i), 1);
  Maker mixed;
  const auto d = mixed.dir(0, "D");
  for (int i = 0; i < 40; ++i) mixed.file(d, "G" + std::to_string(100 + i), 3000 * std::uint64_t(i));
  mixed.file(0, "BIG", 3u << 20);
  struct Case {
    const char* what;
    Maker* tree;
    FormatOptions f;
  };
  FormatOptions f12, f16, f32, s1, s4k;
  f12.fat_type = 12;
  f16.fat_type = 16;
  f32.fat_type = 32;
  s1.sectors_per_cluster = 1;
  s4k.sector_size = 4096;
  const Case cases[] = {{"many", &many, {}},          {"small", &small, {}},         {"small -F 16", &small, f16},
                        {"small -F 32", &small, f32}, {"small -s 1", &small, s1},    {"mixed", &mixed, {}},
                        {"mixed -F 12", &mixed, f12}, {"mixed -S 4096", &mixed, s4k}};
  for (const Case& c : cases) {
    const auto names = plan_names(c.tree->t, {}, false).value();
    auto got = smallest_blocks(c.tree->t, names, {}, c.f);
    ASSERT_TRUE(got) << c.what << ": " << got.error().message();
    EXPECT_EQ(*got, first_fit_by_walking(c.tree->t, names, c.f)) << c.what;
    if (c.tree == &many) {
      EXPECT_LT(*got, 128u * 1024) << "the run of 2 KiB clusters holds it";
    }
  }
}

TEST(SmallestBlocks, ATreeNoVolumeOfTheTypeHoldsIsRefused) {
  Maker m;
  for (int i = 0; i < 5000; ++i) m.file(0, "F" + std::to_string(10000 + i), 1);
  FormatOptions f12;
  f12.fat_type = 12;  // at most 4084 clusters: 5000 files never fit
  const auto names = plan_names(m.t, {}, false).value();
  auto r = smallest_blocks(m.t, names, {}, f12);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("no FAT12 volume holds the tree"), std::string::npos) << r.error().message();
}

Geometry geometry(std::uint64_t bytes, FormatOptions f = {}) {
  auto g = compute_geometry(bytes, f, {});
  EXPECT_TRUE(g) << g.error().message();
  return *g;
}

// A FAT16 of 2 KiB clusters (mkfs.fat's choice for 16 MiB): clusters worked out by hand.
TEST(LayOut, DirectoriesFirstThenFilesInTreeOrder) {
  Maker m;
  const auto a = m.dir(0, "A");
  const auto x = m.file(a, "X", 5000);  // 3 clusters
  const auto b = m.file(0, "B", 1);
  const auto c = m.dir(0, "C");
  const Geometry g = geometry(16u << 20);
  ASSERT_EQ(g.type, FatType::fat16);
  ASSERT_EQ(g.cluster_bytes(), 2048u);
  const auto names = plan_names(m.t, {}, false).value();
  auto l = lay_out(m.t, names, g, {}, {}).value();
  EXPECT_EQ(l.extents[a], (std::vector<Extent>{{2, 1}}));
  EXPECT_EQ(l.extents[c], (std::vector<Extent>{{3, 1}}));
  EXPECT_EQ(l.extents[x], (std::vector<Extent>{{4, 3}}));
  EXPECT_EQ(l.extents[b], (std::vector<Extent>{{7, 1}}));
  EXPECT_EQ(l.dir_clusters, 2u);
  EXPECT_EQ(l.file_clusters, 4u);
  EXPECT_EQ(l.free_clusters, g.cluster_count - 6);
  EXPECT_EQ(l.last_allocated, 7u);
  const auto fat = l.fat.span();
  EXPECT_EQ(get_entry(FatType::fat16, fat, 0), 0xFFF8u);
  for (auto [cl, next] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {2, 0xFFFF}, {3, 0xFFFF}, {4, 5}, {5, 6}, {6, 0xFFFF}, {7, 0xFFFF}, {8, 0}})
    EXPECT_EQ(get_entry(FatType::fat16, fat, cl), next) << cl;
  // A/: '.', '..' (the root: 0), X at cluster 4 of 5000 bytes.
  const auto dir_a = l.dirs[a].span();
  const auto dot = fsio::load<DirEntry>(dir_a, 0), dotdot = fsio::load<DirEntry>(dir_a, 32),
             entry = fsio::load<DirEntry>(dir_a, 64);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(dot.name), 11), ".          ");
  EXPECT_EQ(dot.first_cluster_lo, 2u);
  EXPECT_EQ(dotdot.first_cluster_lo, 0u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(entry.name), 11), "X          ");
  EXPECT_EQ(entry.first_cluster_lo, 4u);
  EXPECT_EQ(entry.file_size, 5000u);
  EXPECT_EQ(entry.attributes, attr::archive);
  // The root region: A, B, C at slots 0-2, directories with attr 0x10 and no size.
  const auto root = l.dirs[0].span();
  EXPECT_EQ(root.size(), std::size_t(g.root_dir_sectors()) * 512);
  EXPECT_EQ(fsio::load<DirEntry>(root, 0).attributes, attr::directory);
  EXPECT_EQ(fsio::load<DirEntry>(root, 32).first_cluster_lo, 7u);
  EXPECT_EQ(fsio::load<DirEntry>(root, 64).first_cluster_lo, 3u);
  EXPECT_EQ(std::to_integer<int>(root[96]), 0) << "the end of the directory";
}

TEST(LayOut, BadClustersAreSkippedAndMarked) {
  Maker m;
  const auto x = m.file(0, "X", 5000);
  const auto y = m.file(0, "Y", 1);
  const Geometry g = geometry(16u << 20);
  const auto names = plan_names(m.t, {}, false).value();
  auto l = lay_out(m.t, names, g, {3, 6}, {}).value();
  EXPECT_EQ(l.extents[x], (std::vector<Extent>{{2, 1}, {4, 2}}));
  EXPECT_EQ(l.extents[y], (std::vector<Extent>{{7, 1}}));
  const auto fat = l.fat.span();
  EXPECT_EQ(get_entry(FatType::fat16, fat, 2), 4u);
  EXPECT_EQ(get_entry(FatType::fat16, fat, 3), 0xFFF7u);
  EXPECT_EQ(get_entry(FatType::fat16, fat, 5), 0xFFFFu);
  EXPECT_EQ(get_entry(FatType::fat16, fat, 6), 0xFFF7u);
  EXPECT_EQ(l.free_clusters, g.cluster_count - 4 - 2);
}

TEST(LayOut, TheFat32RootTakesCluster2AndGrows) {
  Maker m;
  for (int i = 0; i < 100; ++i) m.file(0, "long file name " + std::to_string(100 + i), 0);  // 3 slots each
  FormatOptions f;
  f.fat_type = 32;
  f.sectors_per_cluster = 1;
  const Geometry g = geometry(40u << 20, f);
  const auto names = plan_names(m.t, {}, true).value();
  auto l = lay_out(m.t, names, g, {}, {}).value();
  // 1 (label) + 300 slots of 32 bytes: 19 clusters of 512 bytes.
  EXPECT_EQ(l.extents[0], (std::vector<Extent>{{2, 19}}));
  EXPECT_EQ(get_entry(FatType::fat32, l.fat.span(), 2), 3u);
  EXPECT_EQ(get_entry(FatType::fat32, l.fat.span(), 20), 0x0FFFFFFFu);
  EXPECT_EQ(std::to_integer<int>(l.dirs[0].span()[0]), 0) << "slot 0 is left for the label";
  FormatOptions r112;
  r112.root_entries = 112;
  auto refused = lay_out(m.t, names, geometry(2u << 20, r112), {}, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "the root directory needs 301 slots; FAT12's holds 112 (-r sets more; FAT32's root grows)");
}

TEST(TreeTime, DosTimesAtFatsResolutionAndBounds) {
  TreeOptions o;
  // 2000-01-01 00:00:01.5 UTC: date 20<<9 | 1<<5 | 1, time 0, 150 hundredths.
  DosDateTime t = tree_time({946684801, 500000000}, o);
  EXPECT_EQ(t.date, 20 << 9 | 1 << 5 | 1);
  EXPECT_EQ(t.time, 0);
  EXPECT_EQ(t.tenths, 150);
  t = tree_time({1700000000, 0}, o);  // 2023-11-14 22:13:20 UTC
  EXPECT_EQ(t.date, 43 << 9 | 11 << 5 | 14);
  EXPECT_EQ(t.time, 22 << 11 | 13 << 5 | 10);
  EXPECT_EQ(tree_time({0, 0}, o).date, kDosEpoch.date);  // 1970
  EXPECT_EQ(tree_time({315532799, 0}, o).date, kDosEpoch.date);
  t = tree_time({4354819200, 0}, o);  // 2108-01-01
  EXPECT_EQ(t.date, 127 << 9 | 12 << 5 | 31);
  EXPECT_EQ(t.time, 23 << 11 | 59 << 5 | 29);
  EXPECT_EQ(t.tenths, 199);
  o.clamp = 946684800;  // SOURCE_DATE_EPOCH 2000-01-01: newer is clamped, older kept
  EXPECT_EQ(tree_time({1700000000, 0}, o).date, 20 << 9 | 1 << 5 | 1);
  EXPECT_EQ(tree_time({1700000000, 0}, o).time, 0);
  EXPECT_EQ(tree_time({631152000, 0}, o).date, 10 << 9 | 1 << 5 | 1);  // 1990-01-01
}

}  // namespace
}  // namespace fat
