// The reader against volumes mtools filled: every file and directory mdir
// lists is found with the names, sizes and times mdir shows, every chain is
// the one mshowfat shows, and every file reads back byte for byte. Images
// come from mkfs.fat and from mkfat, FAT12/16/32, 512 B to 32 KiB clusters,
// 512 and 4096-byte sectors, one and two FATs.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "fat/directory.hpp"
#include "fat/format.hpp"
#include "fat/geometry.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

struct Config {
  const char* name;
  std::uint64_t kib;
  const char* mkfs_args;  // nullptr: made by mkfat with `fat_type`
  unsigned fat_type;
};
const Config kConfigs[] = {
    {"mkfs_fat12_floppy", 1440, "", 0},
    {"mkfs_fat12_4k_sectors", 8000, "-S 4096", 0},
    {"mkfs_fat16", 64 * 1024, "", 0},
    {"mkfs_fat16_one_fat_512b", 20 * 1024, "-F 16 -s 1 -f 1", 0},
    {"mkfs_fat32_512b", 100 * 1024, "-F 32 -s 1", 0},
    {"mkfs_fat32_4k_sectors", 300 * 1024, "-F 32 -S 4096", 0},
    {"mkfs_fat32_32k", 2200 * 1024, "-F 32 -s 64", 0},  // mtools needs >= 65525 clusters to see FAT32
    {"mkfat_fat16", 64 * 1024, nullptr, 16},
    {"mkfat_fat32", 100 * 1024, nullptr, 32},
};

// What mdir -a shows for one entry.
struct Shown {
  std::string short_name;  // "ALONGN~1.TXT", "lower.txt" (mtools shows the case bits too)
  std::string size;        // bytes, or "<DIR>"
  std::string when;        // "2019-05-06 07:08"
};

// mdir -a's lines for one directory, by long name (or short name shown).
// A line is "BASE     EXT   SIZE YYYY-MM-DD  HH:MM  long name"; the short
// name's columns are characters, not bytes, so split it on spaces.
std::map<std::string, Shown> mdir(const std::string& img, const std::string& dir) {
  const std::string out = test::mtools("mdir -a", img, "'::" + (dir.empty() ? "/" : dir) + "'");
  std::map<std::string, Shown> shown;
  const std::regex line(R"(^(\S+)( +\S{1,3})? +(\d+|<DIR>) +(\d{4}-\d\d-\d\d) +(\d+):(\d\d) *(.*)$)");
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (l.rfind("Directory for", 0) == 0 || !std::regex_match(l, m, line)) continue;
    std::string ext = m[2];
    ext.erase(0, ext.find_first_not_of(' '));
    const std::string short_name = ext.empty() ? std::string(m[1]) : std::string(m[1]) + "." + ext;
    const std::string name = m[7].length() ? std::string(m[7]) : short_name;
    if (name == "." || name == "..") continue;
    const std::string hour = m[5].length() == 1 ? "0" + std::string(m[5]) : std::string(m[5]);
    shown[name] = {short_name, m[3], std::string(m[4]) + " " + hour + ":" + std::string(m[6])};
  }
  return shown;
}

std::string file_bytes(const std::string& path) { return support::read_all(path); }

std::string dos_when(const DosDateTime& d) {
  const std::tm t = decode_dos_datetime(d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                t.tm_min);
  return buf;
}

void make_image(const Config& c, const std::string& img) {
  if (c.mkfs_args) {
    test::mkfs(img, c.kib, c.mkfs_args);
    return;
  }
  support::make_file(img, c.kib * 1024);
  FormatOptions o;
  o.fat_type = c.fat_type;
  const Geometry g = compute_geometry(c.kib * 1024, o).value();
  fsio::OpenOptions oo;
  oo.write = true;
  oo.direct = false;
  oo.allow_mounted = true;
  auto dev = fsio::Device::open(img, oo).value();
  auto q = fsio::IoQueue::create(dev).value();
  ASSERT_TRUE(format_volume(q, g, o, nullptr).has_value());
}

class PeerFilledVolumes : public ::testing::TestWithParam<Config> {};

TEST_P(PeerFilledVolumes, EveryFileIsFoundWithMtoolsNamesSizesTimesChainsAndBytes) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  const Config c = GetParam();
  support::TempDir dir;
  const std::string img = dir / "img";
  make_image(c, img);
  const auto cb = test::fsck_geometry(img)["cluster_bytes"];
  const auto sources = test::populate(img, dir / "src", cb);
  ASSERT_EQ(test::fsck_geometry(img)["exit"], 0u) << "mtools left a volume fsck.fat complains about";
  auto v = test::open_volume(img);
  ASSERT_TRUE(v.has_value()) << v.error().message();
  Volume& vol = **v.value();

  // Walk the whole tree, comparing each directory with mdir.
  std::set<std::string> seen;
  std::vector<std::pair<std::string, Entry>> todo{{"", Entry{}}};
  while (!todo.empty()) {
    const auto [path, self] = todo.back();
    todo.pop_back();
    auto d = path.empty() ? Directory::open_root(vol) : Directory::open(vol, self);
    ASSERT_TRUE(d.has_value()) << path << ": " << d.error().message();
    EXPECT_TRUE(d->chain().ok()) << path << ": " << describe(d->chain());
    EXPECT_TRUE(d->problems().empty()) << path << ": " << d->problems().size() << " LFN problems";
    auto shown = mdir(img, path);
    for (const Entry& e : d->entries()) {
      if (e.is_dot() || e.is_label()) continue;
      const std::string p = path + "/" + e.name;
      seen.insert(p);
      ASSERT_TRUE(shown.count(e.name)) << p << " is not in mdir's listing";
      const Shown& s = shown[e.name];
      EXPECT_EQ(e.short_name, s.short_name) << p;
      EXPECT_EQ(e.is_directory() ? "<DIR>" : std::to_string(e.size), s.size) << p;
      EXPECT_EQ(dos_when(e.modified), s.when) << p;
      EXPECT_EQ(d->find(e.name), &e) << p;
      EXPECT_EQ(d->find(fold_case(e.name)), &e) << "case-insensitive " << p;
      shown.erase(e.name);
      if (e.is_directory()) {
        todo.emplace_back(p, e);
        continue;
      }
      EXPECT_EQ(dos_when(e.modified), "2019-05-06 07:08") << p;  // mcopy -m kept the source's time
      EXPECT_EQ(decode_dos_datetime(e.modified).tm_sec, 10) << p;
      const auto src = sources.find(p);
      ASSERT_NE(src, sources.end()) << p;
      std::string got;
      ASSERT_TRUE(read_file(
                      vol, e.first_cluster, e.size,
                      [&](std::span<const std::byte> b) {
                        got.append(reinterpret_cast<const char*>(b.data()), b.size());
                        return true;
                      },
                      3 * cb)
                      .has_value())
          << p;
      EXPECT_TRUE(got == file_bytes(src->second)) << p << ": bytes differ";
    }
    EXPECT_TRUE(shown.empty()) << path << ": mdir lists " << (shown.empty() ? "" : shown.begin()->first)
                               << " which the reader did not find";
  }
  std::set<std::string> want;
  for (const auto& [p, s] : sources) want.insert(p);
  EXPECT_EQ(seen, want);

  // Chains as mshowfat shows them, including the fragmented file.
  for (const char* p : {"/a long name.txt", "/exactly13char", "/fragmented.bin", "/Sub Dir/inner file.bin",
                        "/Sub Dir/Deeper/deep.dat", "/lower.txt"}) {
    auto e = lookup(vol, p);
    ASSERT_TRUE(e.has_value()) << p << ": " << e.error().message();
    std::vector<std::uint32_t> clusters;
    auto chain = walk_chain(vol.fat(), e->first_cluster, [&](std::uint32_t a, std::uint32_t n) {
      for (std::uint32_t i = 0; i < n; ++i) clusters.push_back(a + i);
      return true;
    });
    ASSERT_TRUE(chain.has_value());
    EXPECT_TRUE(chain->ok()) << describe(*chain);
    EXPECT_EQ(clusters, test::mshowfat_clusters(img, p)) << p;
    EXPECT_EQ(chain->length, (e->size + cb - 1) / cb) << p;
  }
  auto frag = lookup(vol, "/fragmented.bin");
  std::uint32_t runs = 0;
  ASSERT_TRUE(
      walk_chain(vol.fat(), frag->first_cluster, [&](std::uint32_t, std::uint32_t) { return ++runs; }).has_value());
  EXPECT_GE(runs, 3u) << "the file was meant to fill three holes";
}

INSTANTIATE_TEST_SUITE_P(Reader, PeerFilledVolumes, ::testing::ValuesIn(kConfigs),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Lookup, PathsAreCaseInsensitiveAndSayWhatIsMissing) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 64 * 1024, "");
  test::populate(img, dir / "src", 2048, 0);
  auto v = test::open_volume(img);
  ASSERT_TRUE(v.has_value());
  Volume& vol = **v.value();
  for (const char* p : {"/sub dir/DEEPER/Deep.DAT", "//Sub Dir//Deeper/deep.dat", "/SUBDIR~1/DEEPER/DEEP.DAT"}) {
    auto e = lookup(vol, p);
    ASSERT_TRUE(e.has_value()) << p << ": " << e.error().message();
    EXPECT_EQ(e->name, "deep.dat");
  }
  auto root = lookup(vol, "/");
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->is_directory());
  EXPECT_EQ(root->first_cluster, 0u);
  auto missing = lookup(vol, "/Sub Dir/nothing/deep.dat");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, fsio::Errc::not_found);
  EXPECT_EQ(missing.error().message(), "no '/Sub Dir/nothing'");
  auto through_file = lookup(vol, "/README.TXT/x");
  ASSERT_FALSE(through_file.has_value());
  EXPECT_EQ(through_file.error().code, fsio::Errc::invalid_argument);
}

// The same reads with O_DIRECT (where the filesystem under the image takes
// it): every buffer and offset the reader uses must be aligned.
TEST(DirectIo, TheTreeReadsTheSameWithODirect) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 100 * 1024, "-F 32 -s 1");
  const auto sources = test::populate(img, dir / "src", 512, 40);
  fsio::OpenOptions oo;
  oo.direct = true;
  auto dev = fsio::Device::open(img, oo);
  ASSERT_TRUE(dev.has_value()) << dev.error().message();
  if (!dev->direct()) GTEST_SKIP() << "the filesystem under " << img << " refuses O_DIRECT: " << dev->direct_fallback();
  auto q = fsio::IoQueue::create(*dev).value();
  auto vol = Volume::open(q);
  ASSERT_TRUE(vol.has_value()) << vol.error().message();
  unsigned files = 0;
  for (const auto& [path, src] : sources) {
    if (src.empty()) continue;
    auto e = lookup(*vol, path);
    ASSERT_TRUE(e.has_value()) << path << ": " << e.error().message();
    std::string got;
    auto st = read_file(*vol, e->first_cluster, e->size, [&](std::span<const std::byte> b) {
      got.append(reinterpret_cast<const char*>(b.data()), b.size());
      return true;
    });
    ASSERT_TRUE(st.has_value()) << path << ": " << st.error().message();
    EXPECT_TRUE(got == file_bytes(src)) << path;
    ++files;
  }
  EXPECT_GT(files, 50u);
  EXPECT_TRUE(vol->fat().compare_copies().value().empty());
}

// Damaged long names, made by editing the slots of "Twenty-six characters
// long" (two LFN slots, 0x42 and 0x01, then its 8.3 entry): the entry keeps
// its short name, the problem is named, and fsck.fat -n sees it too.
TEST(LfnProblems, DamagedRunsAreNamedAndTheEntryKeepsItsShortName) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  struct Patch {
    int slot;            // 0: the 0x42 slot, 1: the 0x01 slot, 2: the 8.3 entry
    std::size_t offset;  // within the slot
    std::uint8_t value;
  };
  struct Damage {
    const char* what;
    std::vector<Patch> patches;
    LfnProblem::Kind kind;
    bool keeps_long_name;
    const char* fsck_says;
    const char* short_name = "TWENTY~1";
  };
  const Damage damages[] = {
      {"first slot loses the last-slot flag",
       {{0, 0, 0x02}},
       LfnProblem::Kind::fragment,
       false,
       "found outside a LFN sequence"},
      {"middle slot deleted", {{1, 0, 0xE5}}, LfnProblem::Kind::orphan, false, "Orphaned long file name part"},
      {"run announces three slots",
       {{0, 0, 0x43}, {1, 0, 0x02}},
       LfnProblem::Kind::unfinished,
       false,
       "Unfinished long file name"},
      {"8.3 name changed under the LFN",
       {{2, 1, 'Q'}},
       LfnProblem::Kind::checksum,
       false,
       "Wrong checksum for long file name",
       "TQENTY~1"},
      {"one slot's checksum differs",
       {{1, 0x0D, 0x00}},
       LfnProblem::Kind::part_checksum,
       false,
       "Checksum in long filename part wrong"},
      {"start cluster in an LFN slot",
       {{1, 0x1A, 0x07}},
       LfnProblem::Kind::start_cluster,
       true,
       "Start cluster field in VFAT long filename slot is not 0"},
  };
  for (const Damage& d : damages) {
    support::TempDir dir;
    const std::string img = dir / "img";
    test::mkfs(img, 1440, "");
    test::populate(img, dir / "src", 512, 0);
    std::uint64_t at[3] = {};
    {
      auto v = test::open_volume(img);
      ASSERT_TRUE(v.has_value());
      auto root = Directory::open_root(**v.value()).value();
      const Entry* e = root.find("Twenty-six characters long");
      ASSERT_NE(e, nullptr);
      ASSERT_EQ(e->slot_count(), 3u);
      for (std::uint32_t k = 0; k < 3; ++k) at[k] = root.position(e->first_slot + k).device_offset;
    }
    for (const Patch& p : d.patches) test::patch(img, at[p.slot] + p.offset, {p.value});
    auto v = test::open_volume(img);
    ASSERT_TRUE(v.has_value());
    auto root = Directory::open_root(**v.value()).value();
    const auto& problems = root.problems();
    ASSERT_FALSE(problems.empty()) << d.what;
    EXPECT_EQ(problems[0].kind, d.kind) << d.what;
    const Entry* e = root.find("Twenty-six characters long");
    EXPECT_EQ(e != nullptr, d.keeps_long_name) << d.what;
    EXPECT_NE(root.find(d.short_name), nullptr) << d.what << ": the entry stays, by its short name";
    const auto fsck = support::run("fsck.fat -n " + img);
    EXPECT_NE(fsck.output.find(d.fsck_says), std::string::npos) << d.what << ":\n" << fsck.output;
  }
}

}  // namespace
}  // namespace fat
