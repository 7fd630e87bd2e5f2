// check_volume and repair_volume on what the CLI corpus does not reach:
// directory trees that loop back on themselves, loops and cross-links in
// directory chains, a FAT32 root that loops, live entries after a 0x00 slot,
// thousands of out-of-range entries against the findings limit, lost chains
// and loops. Each damage is confirmed by fsck.fat -n first (its message is
// named), the counts are worked out by hand, and after repair_volume
// fsck.fat -n must find the volume clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "fat/check.hpp"
#include "fat/directory.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

struct Img {
  support::TempDir dir;
  std::string path = dir / "img";
  std::string src = dir / "src";

  Img(std::uint64_t kib, const std::string& args) {
    test::mkfs(path, kib, args);
    support::run("mkdir -p " + src);
  }
  // A file of `size` bytes (pattern from `seed`) copied to ::dest.
  void put(const std::string& dest, std::uint64_t size, char seed = 'a') {
    const std::string local = src + "/" + std::to_string(files++);
    support::make_file(local, size, seed);
    test::mtools("mcopy", path, local + " '::" + dest + "'");
  }
  void mkdir(const std::string& d) { test::mtools("mmd", path, "'::" + d + "'"); }
  std::unique_ptr<test::OpenVolume> open(bool write = false) { return test::open_volume(path, write).value(); }
  Entry lookup(const std::string& p) { return fat::lookup(**open(), p).value(); }
  // FAT entry n := value in every copy.
  void set_fat(std::uint32_t n, std::uint32_t value) {
    auto v = open();
    const Layout l = (*v)->layout();
    std::vector<std::uint8_t> bytes;
    for (std::uint32_t i = 0; i < entry_span(l.type); ++i) bytes.push_back(std::uint8_t(value >> (8 * i)));
    ASSERT_NE(l.type, FatType::fat12) << "12-bit entries are not patched this way";
    for (std::uint32_t c = 0; c < l.num_fats; ++c) test::patch(path, l.fat_offset(c) + entry_offset(l.type, n), bytes);
  }
  std::vector<std::uint32_t> chain(std::uint32_t first) {
    auto v = open();
    std::vector<std::uint32_t> out;
    EXPECT_TRUE(walk_chain((*v)->fat(), first, [&](std::uint32_t a, std::uint32_t n) {
                  for (std::uint32_t i = 0; i < n; ++i) out.push_back(a + i);
                  return true;
                }).has_value());
    return out;
  }
  support::RunResult fsck() { return support::run("fsck.fat -n " + path); }
  support::RunResult corrupt(const std::string& args) {
    return support::run("python3 " + std::string(FSIO_SOURCE_ROOT) + "/tests/fatcorrupt.py " + path + " " + args);
  }
  CheckResult check(const CheckOptions& o = {}) {
    auto v = open();
    return check_volume(**v, o).value();
  }
  // Checks and repairs; the report must be complete.
  CheckResult repair() {
    auto v = open(true);
    auto r = check_volume(**v).value();
    RepairReport rep;
    const auto st = repair_volume(**v, r.plan, rep);
    EXPECT_TRUE(st.has_value()) << st.error().message();
    EXPECT_TRUE(rep.complete);
    return r;
  }
  unsigned files = 0;
};

std::size_t kinds(const CheckResult& r, CheckKind k) {
  return std::size_t(std::count_if(r.findings.begin(), r.findings.end(), [k](const auto& f) { return f.kind == k; }));
}

std::string listing(const CheckResult& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += std::string(check_kind_name(f.kind)) + " " + f.where + ": " + f.message + " / " + f.action + "\n";
  return s;
}

#define SKIP_WITHOUT_PEERS()                                              \
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m; \
  if (!support::have_tool("python3")) GTEST_SKIP() << "python3 is not installed (fatcorrupt.py)"

// fsck.fat's "N files, U/C clusters" summary line.
std::pair<std::uint64_t, std::uint64_t> fsck_counts(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"((\d+) files, (\d+)/\d+ clusters)"))) << out;
  return {std::stoull(m[1]), std::stoull(m[2])};
}

struct Shape {
  std::uint64_t kib;
  const char* args;
};
class CleanVolume : public ::testing::TestWithParam<Shape> {};

// populate() puts long, short, non-ASCII and empty names, nested
// directories and a fragmented file on the volume: nothing to find, and the
// files and clusters in use are what fsck.fat counts.
TEST_P(CleanVolume, HasNothingToFindAndCountsWhatFsckFatCounts) {
  SKIP_WITHOUT_PEERS();
  Img img(GetParam().kib, GetParam().args);
  const auto cb = (*img.open())->layout().cluster_bytes();
  const auto made = test::populate(img.path, img.src, cb, 60);
  const auto r = img.check();
  EXPECT_EQ(r.count(Severity::error) + r.count(Severity::warning), 0u) << listing(r);
  EXPECT_TRUE(r.plan.empty());
  const auto [fsck_files, fsck_used] = fsck_counts(img.fsck().output);
  EXPECT_EQ(r.counts.files + r.counts.directories, fsck_files);
  EXPECT_EQ(r.counts.files + r.counts.directories, made.size());
  EXPECT_EQ(r.counts.used, fsck_used);
  EXPECT_EQ(r.counts.lost, 0u);
}

INSTANTIATE_TEST_SUITE_P(Check, CleanVolume,
                         ::testing::Values(Shape{8000, "-F 12 -s 4"}, Shape{65536, "-F 16 -s 4"},
                                           Shape{102400, "-F 32 -s 1"}));

// /A/B/C/D whose first cluster is A's: the walk must end. A owns that
// cluster already, so D is the second of a cross-link (fsck.fat: "share
// clusters") and, nothing of its chain left, its entry goes.
TEST(Check, DirectoryPointingAtAnAncestorEndsTheWalk) {
  SKIP_WITHOUT_PEERS();
  Img img(65536, "-F 16 -s 4");
  for (const char* d : {"A", "A/B", "A/B/C", "A/B/C/D"}) img.mkdir(d);
  img.put("A/B/C/D/F.BIN", 5000);
  const std::uint32_t a = img.lookup("/A").first_cluster;
  const auto d = img.lookup("/A/B/C/D");
  auto v = img.open();
  auto c = Directory::open(**v, img.lookup("/A/B/C")).value();
  const auto off = c.position(d.slot).device_offset;
  v.reset();
  test::patch(img.path, off + 26, {std::uint8_t(a), std::uint8_t(a >> 8)});
  EXPECT_NE(img.fsck().output.find("share clusters"), std::string::npos) << img.fsck().output;
  const auto r = img.check();
  EXPECT_EQ(kinds(r, CheckKind::cross_link), 1u) << listing(r);
  EXPECT_EQ(r.findings[0].where, "/A/B/C/D");
  EXPECT_EQ(r.counts.lost, 1u + 3u) << "D's own cluster and F.BIN's 3";
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
}

// A directory of 40 entries in 512-byte clusters (16 slots each) whose last
// cluster points back to its first.
TEST(Check, LoopInADirectoryChainIsCut) {
  SKIP_WITHOUT_PEERS();
  Img img(16384, "-F 16 -s 1");
  img.mkdir("DIR");
  for (int i = 0; i < 40; ++i) img.put("DIR/F" + std::to_string(i) + ".TXT", 100 + i, char('a' + i % 26));
  const auto before = img.chain(img.lookup("/DIR").first_cluster);
  ASSERT_GE(before.size(), 3u);
  ASSERT_EQ(img.corrupt("loop /DIR").exit_code, 0);
  EXPECT_NE(img.fsck().output.find("Circular cluster chain"), std::string::npos) << img.fsck().output;
  const auto r = img.check();
  ASSERT_EQ(kinds(r, CheckKind::loop), 1u) << listing(r);
  EXPECT_EQ(r.findings[0].where, "/DIR");
  EXPECT_EQ(r.counts.files, 40u);
  EXPECT_EQ(r.count(Severity::error), 1u) << listing(r);
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
  EXPECT_EQ(img.chain(img.lookup("/DIR").first_cluster), before);
  EXPECT_EQ(test::mtools("mtype", img.path, "::DIR/F39.TXT"), std::string(139, char('a' + 39 % 26)));
}

// A chain cut by the repair ends with the mark fsck.fat 4.2 writes (FAT_EOF:
// 0xFF8, 0xFFF8, 0x0FFFFFF8), not mkfs.fat's 0x...FFF: the repaired image is
// fsck.fat -a's byte for byte, on each FAT type.
class CutMark : public ::testing::TestWithParam<Shape> {};

TEST_P(CutMark, IsFsckFatsAndTheImageIsItsByteForByte) {
  SKIP_WITHOUT_PEERS();
  Img img(GetParam().kib, GetParam().args);
  img.put("LOOP.BIN", 9000, 'l');
  const auto chain = img.chain(img.lookup("/LOOP.BIN").first_cluster);
  ASSERT_EQ(img.corrupt("loop /LOOP.BIN").exit_code, 0);
  const std::string theirs = img.dir / "theirs";
  support::run("cp --sparse=always " + img.path + " " + theirs);
  EXPECT_EQ(support::run("fsck.fat -a " + theirs).exit_code, 1);
  img.repair();
  auto v = img.open();
  const FatType type = (*v)->layout().type;
  EXPECT_EQ((*v)->fat().get(chain.back()).value(), fsck_end_of_chain(type));
  EXPECT_EQ(fsck_end_of_chain(type), type == FatType::fat12 ? 0xFF8u : type == FatType::fat16 ? 0xFFF8u : 0x0FFFFFF8u);
  EXPECT_EQ(support::run("cmp " + img.path + " " + theirs).exit_code, 0) << "fatck's repair is not fsck.fat's";
}

INSTANTIATE_TEST_SUITE_P(Check, CutMark,
                         ::testing::Values(Shape{1440, "-F 12"}, Shape{16384, "-F 16 -s 1"},
                                           Shape{40000, "-F 32 -s 1"}));

// /D2's next-to-last cluster points at /D1's last: D2 is cut before it
// (the second of the two), the files in its last cluster lose their entries
// and their clusters are reclaimed, as fsck.fat does.
TEST(Check, CrossLinkedDirectoriesCutTheSecond) {
  SKIP_WITHOUT_PEERS();
  Img img(16384, "-F 16 -s 1");
  img.mkdir("D1");
  img.mkdir("D2");
  for (int i = 0; i < 40; ++i) img.put("D1/F" + std::to_string(i) + ".TXT", 600, 'x');
  for (int i = 0; i < 40; ++i) img.put("D2/G" + std::to_string(i) + ".TXT", 600, 'y');
  const auto d2 = img.chain(img.lookup("/D2").first_cluster);
  ASSERT_EQ(img.corrupt("cross-link /D1 /D2").exit_code, 0);
  const auto out = img.fsck().output;
  EXPECT_NE(out.find("share clusters"), std::string::npos) << out;
  EXPECT_NE(out.find("Reclaimed"), std::string::npos) << out;
  const auto r = img.check();
  ASSERT_EQ(kinds(r, CheckKind::cross_link), 1u) << listing(r);
  EXPECT_NE(r.findings[0].message.find("/D1 and /D2 share clusters"), std::string::npos) << listing(r);
  // D2 keeps all but its last cluster: 16 slots each, "." and ".." first.
  const std::uint64_t kept = (d2.size() - 1) * 16 - 2;
  EXPECT_EQ(r.counts.files, 40u + kept);
  EXPECT_EQ(r.counts.lost, 1u + (40u - kept) * 2u) << "D2's last cluster and two clusters per lost file";
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
  EXPECT_EQ(test::mtools("mtype", img.path, "::D1/F39.TXT"), std::string(600, 'x'));
}

// The FAT32 root is a chain without an entry: a loop in it is cut too.
TEST(Check, LoopInTheFat32RootIsCut) {
  SKIP_WITHOUT_PEERS();
  Img img(102400, "-F 32 -s 1");
  for (int i = 0; i < 40; ++i) img.put("R" + std::to_string(i) + ".TXT", 10, 'r');
  const std::uint32_t root = (*img.open())->layout().root_cluster;
  const auto before = img.chain(root);
  ASSERT_GE(before.size(), 3u);
  img.set_fat(before.back(), root);
  EXPECT_NE(img.fsck().output.find("Circular cluster chain"), std::string::npos) << img.fsck().output;
  const auto r = img.check();
  ASSERT_EQ(kinds(r, CheckKind::loop), 1u) << listing(r);
  EXPECT_EQ(r.findings[0].where, "/");
  EXPECT_EQ(r.counts.files, 40u);
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
  EXPECT_EQ(img.chain(root), before);
}

// A 0x00 slot in the middle of the root: Linux and fsck.fat read on past it
// (it counts as free for them), so C.BIN's clusters stay owned; B.BIN's
// entry is gone and its clusters are lost.
TEST(Check, EntriesAfterAZeroSlotKeepTheirClusters) {
  SKIP_WITHOUT_PEERS();
  Img img(65536, "-F 16 -s 4");
  img.put("A.BIN", 5000);
  img.put("B.BIN", 5000);
  img.put("C.BIN", 5000);
  auto v = img.open();
  auto root = Directory::open_root(**v).value();
  const auto b = *root.find("B.BIN");
  const auto off = root.position(b.slot).device_offset;
  v.reset();
  test::patch(img.path, off, {0x00});
  const auto out = img.fsck().output;
  EXPECT_NE(out.find("Reclaimed 3 unused clusters"), std::string::npos) << out;
  const auto r = img.check();
  EXPECT_EQ(kinds(r, CheckKind::after_end), 1u) << listing(r);
  EXPECT_EQ(r.counts.lost, 3u) << "B.BIN's 5000 bytes in 2 KiB clusters";
  EXPECT_EQ(r.counts.used, 6u) << "A.BIN's and C.BIN's";
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
  EXPECT_NE(support::run("fsck.fat -n -l " + img.path).output.find("/C.BIN"), std::string::npos);
}

// 3000 unowned entries holding a reserved value: every one is out of range
// and lost; only `max_findings_per_kind` are kept, all are repaired.
TEST(Check, FindingsPastTheLimitAreCountedAndStillRepaired) {
  SKIP_WITHOUT_PEERS();
  Img img(65536, "-F 16 -s 4");
  auto v = img.open();
  const Layout l = (*v)->layout();
  v.reset();
  std::vector<std::uint8_t> run;
  for (int i = 0; i < 3000; ++i) run.insert(run.end(), {0xF0, 0xFF});
  for (std::uint32_t c = 0; c < l.num_fats; ++c)
    test::patch(img.path, l.fat_offset(c) + entry_offset(l.type, 1000), run);
  const auto out = img.fsck().output;
  EXPECT_NE(out.find("Reclaimed 3000 unused clusters"), std::string::npos) << out.substr(0, 400);
  CheckOptions o;
  o.max_findings_per_kind = 100;
  const auto r = img.check(o);
  EXPECT_EQ(kinds(r, CheckKind::out_of_range), 100u);
  EXPECT_EQ(r.omitted[std::size_t(CheckKind::out_of_range)], 2900u);
  EXPECT_EQ(r.count(Severity::error), 3001u) << "3000 out of range and the lost clusters";
  EXPECT_EQ(r.plan.cut.count(), 3000u);
  EXPECT_EQ(r.counts.lost, 3000u);
  EXPECT_EQ(r.counts.lost_chains, 3000u) << "none points at another";
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output.substr(0, 400);
}

// Lost clusters 100->101->102, 200->201 and a loop 300<->301: seven lost
// clusters, two chains with a head (the loop has none).
TEST(Check, LostChainsAreCountedByTheirHeads) {
  SKIP_WITHOUT_PEERS();
  Img img(65536, "-F 16 -s 4");
  const std::uint32_t eoc = 0xFFFF;
  for (auto [n, v] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {100, 101}, {101, 102}, {102, eoc}, {200, 201}, {201, eoc}, {300, 301}, {301, 300}})
    img.set_fat(n, v);
  EXPECT_NE(img.fsck().output.find("Reclaimed 7 unused clusters"), std::string::npos) << img.fsck().output;
  const auto r = img.check();
  EXPECT_EQ(r.counts.lost, 7u);
  EXPECT_EQ(r.counts.lost_chains, 2u);
  ASSERT_EQ(kinds(r, CheckKind::lost_clusters), 1u);
  EXPECT_NE(r.findings[0].message.find("7 unused clusters (14336 bytes) in 2 chains"), std::string::npos) << listing(r);
  img.repair();
  EXPECT_EQ(img.fsck().exit_code, 0) << img.fsck().output;
}

}  // namespace
}  // namespace fat
