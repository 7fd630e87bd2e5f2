// The reader sees each damage of tests/fatcorrupt.py (whose every damage
// tests/cli/fat_corrupt.sh checks against fsck.fat -n): a small census built
// only from the reader's API (tree walk, walk_chain, ClusterBitmap,
// FatTable::scan and compare_copies, Volume findings) finds the same thing
// fsck.fat does. It is also the shape fatck's checks can take: one bit per
// cluster, every chain walked once.
#include <gtest/gtest.h>

#include <regex>

#include "fat/bitmap.hpp"
#include "fat/directory.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

struct FileChain {
  std::string path;
  Chain chain;
  std::uint32_t size = 0;
  bool directory = false;
};

struct Census {
  std::vector<FileChain> files;
  std::vector<std::string> cross_linked;  // paths whose chain met a cluster already owned
  std::vector<LfnProblem> lfn;
  std::uint64_t lost = 0;  // non-free entries no chain owns
  std::uint32_t free = 0;
};

Census census(Volume& vol) {
  Census c;
  ClusterBitmap owned(vol.layout().entry_count());
  auto mark = [&](const std::string& path, std::uint32_t first) {
    bool crossed = false;
    auto chain = walk_chain(vol.fat(), first, [&](std::uint32_t a, std::uint32_t n) {
      for (std::uint32_t i = 0; i < n; ++i) crossed |= owned.test_and_set(a + i);
      return true;
    });
    EXPECT_TRUE(chain.has_value());
    if (crossed) c.cross_linked.push_back(path);
    return chain.value();
  };
  if (vol.layout().type == FatType::fat32) mark("/", vol.layout().root_cluster);
  std::vector<std::pair<std::string, std::uint32_t>> dirs{{"", 0}};
  while (!dirs.empty()) {
    auto [path, first] = dirs.back();
    dirs.pop_back();
    auto d = (first == 0 ? Directory::open_root(vol) : Directory::open(vol, first)).value();
    for (const auto& p : d.problems()) c.lfn.push_back(p);
    for (const Entry& e : d.entries()) {
      if (e.is_dot() || e.is_label() || e.first_cluster == 0) continue;
      const std::string p = path + "/" + e.name;
      c.files.push_back({p, mark(p, e.first_cluster), e.size, e.is_directory()});
      if (e.is_directory()) dirs.emplace_back(p, e.first_cluster);
    }
  }
  EXPECT_TRUE(vol.fat()
                  .scan(
                      [&](std::uint32_t at, std::span<const std::uint32_t> v) {
                        for (std::size_t i = 0; i < v.size(); ++i) {
                          const std::uint32_t n = at + std::uint32_t(i);
                          if (v[i] == 0) ++c.free;
                          else if (!owned.test(n)) ++c.lost;
                        }
                        return true;
                      },
                      2)
                  .has_value());
  return c;
}

const FileChain* find(const Census& c, const std::string& path) {
  for (const auto& f : c.files)
    if (f.path == path) return &f;
  return nullptr;
}

struct CorpusImage {
  const char* name;
  std::uint64_t kib;
  const char* args;
};

class Corpus : public ::testing::TestWithParam<CorpusImage> {};

TEST_P(Corpus, TheReaderSeesWhatFsckFatSees) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  const std::string script = std::string(FSIO_SOURCE_ROOT) + "/tests/fatcorrupt.py";
  if (!support::have_tool("python3")) GTEST_SKIP() << "python3 is not installed; the corpus script cannot run";
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, GetParam().kib, GetParam().args);
  for (auto [name, size] :
       {std::pair{"A.BIN", 20000}, std::pair{"B.BIN", 9000}, std::pair{"a long file name.txt", 24}}) {
    support::make_file(dir / name, size, 'x');
    test::mtools("mcopy", img, "'" + (dir / name) + "' ::");
  }
  auto damage = [&](const std::string& args) {
    const std::string copy = dir / "damaged";
    EXPECT_EQ(support::run("cp --sparse=always " + img + " " + copy).exit_code, 0);
    const auto r = support::run("python3 " + script + " " + copy + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return std::pair{copy, r.output};
  };
  auto open = [](const std::string& path) { return test::open_volume(path).value(); };
  auto number = [](const std::string& text, const char* pattern) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(text, m, std::regex(pattern))) << text;
    return std::uint32_t(std::stoul(m[1]));
  };
  {  // the clean image: nothing to find
    auto v = open(img);
    const Census c = census(**v);
    EXPECT_EQ(c.lost, 0u);
    EXPECT_TRUE(c.cross_linked.empty());
    EXPECT_TRUE(c.lfn.empty());
    for (const auto& f : c.files) EXPECT_TRUE(f.chain.ok()) << f.path;
  }
  {
    auto [path, said] = damage("copies-differ");
    auto v = open(path);
    auto diff = (*v)->fat().compare_copies().value();
    ASSERT_EQ(diff.size(), 1u);
    EXPECT_EQ(diff[0].copy, 1u);
    EXPECT_EQ(diff[0].first_entry, number(said, R"(entry (\d+) changed)"));
  }
  {
    auto [path, said] = damage("lost-clusters 3");
    auto v = open(path);
    EXPECT_EQ(census(**v).lost, 3u);
  }
  {
    auto [path, said] = damage("chain-longer /A.BIN");
    auto v = open(path);
    const Census c = census(**v);
    const auto* f = find(c, "/A.BIN");
    ASSERT_NE(f, nullptr);
    EXPECT_GT(f->chain.bytes((*v)->layout()), (f->size + (*v)->layout().cluster_bytes() - 1) /
                                                  (*v)->layout().cluster_bytes() * (*v)->layout().cluster_bytes());
    EXPECT_EQ(f->chain.last, number(said, R"(cluster (\d+) appended)"));
  }
  {
    auto [path, said] = damage("chain-shorter /B.BIN");
    auto v = open(path);
    const Census c = census(**v);
    const auto* f = find(c, "/B.BIN");
    ASSERT_NE(f, nullptr);
    EXPECT_LT(f->chain.bytes((*v)->layout()), f->size);
  }
  {
    auto [path, said] = damage("free-in-chain /A.BIN");
    auto v = open(path);
    const Census c = census(**v);
    const auto* f = find(c, "/A.BIN");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->chain.end, ChainEnd::free_cluster);
    EXPECT_EQ(f->chain.stop, number(said, R"(cluster (\d+) marked free)"));
    EXPECT_EQ(f->chain.length, 1u);
  }
  {
    auto [path, said] = damage("cross-link /A.BIN /B.BIN");
    auto v = open(path);
    const Census c = census(**v);
    ASSERT_EQ(c.cross_linked.size(), 1u);
    EXPECT_EQ(c.cross_linked[0], "/B.BIN");
    EXPECT_EQ(c.lost, 1u) << "B's old last cluster";
  }
  {
    auto [path, said] = damage("loop /A.BIN");
    auto v = open(path);
    const Census c = census(**v);
    const auto* f = find(c, "/A.BIN");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->chain.end, ChainEnd::loop);
    EXPECT_EQ(f->chain.last, number(said, R"(cluster (\d+) points back)"));
    EXPECT_EQ(f->chain.stop, number(said, R"(points back to (\d+))"));
  }
  {
    auto [path, said] = damage("out-of-range /B.BIN");
    auto v = open(path);
    const Census c = census(**v);
    const auto* f = find(c, "/B.BIN");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->chain.end, ChainEnd::out_of_range);
    EXPECT_EQ(f->chain.stop, number(said, R"(points to (\d+))"));
  }
  {
    auto [path, said] = damage("dirty");
    EXPECT_TRUE(open(path)->volume->dirty().dirty());
  }
  {
    auto [path, said] = damage("bad-lfn '/a long file name.txt'");
    auto v = open(path);
    const Census c = census(**v);
    ASSERT_EQ(c.lfn.size(), 1u);
    EXPECT_EQ(c.lfn[0].kind, LfnProblem::Kind::checksum);
    EXPECT_EQ(c.lfn[0].text, "a long file name.txt");
  }
  if ((*open(img))->layout().type == FatType::fat32) {
    auto [path, said] = damage("wrong-free-count -10");
    auto v = open(path);
    const Census c = census(**v);
    EXPECT_EQ((*v)->fsinfo()->free_count + 10, c.free);
  }
}

INSTANTIATE_TEST_SUITE_P(Reader, Corpus,
                         ::testing::Values(CorpusImage{"fat12", 8000, "-F 12 -s 4"},
                                           CorpusImage{"fat16", 64 * 1024, "-F 16 -s 2"},
                                           CorpusImage{"fat32", 100 * 1024, "-F 32 -s 1"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace fat
