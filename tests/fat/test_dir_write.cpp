// The writing half of the directory code, judged by the peers: files and
// directories made with make_name, make_entry, make_dot_entries,
// Directory::add / append_cluster and FatTable, on volumes mtools filled
// first, must leave fsck.fat -n silent, be listed by mdir with the names we
// gave, copy out byte for byte with mcopy, and get short names that do not
// collide with the ones mtools made.
#include <gtest/gtest.h>

#include "fat/bitmap.hpp"
#include "fat/directory.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

constexpr DosDateTime kWhen{std::uint16_t((2020 - 1980) << 9 | 2 << 5 | 29), std::uint16_t(13 << 11 | 14 << 5 | 15), 0};

// The smallest writer the tests need: free clusters from a bitmap built by
// one scan, data written through the queue, chains set in the FatTable.
struct Writer {
  Volume& vol;
  ClusterBitmap used;
  std::uint32_t next = 2;

  explicit Writer(Volume& v) : vol(v), used(v.layout().entry_count()) {
    EXPECT_TRUE(vol.fat()
                    .scan([&](std::uint32_t first, std::span<const std::uint32_t> values) {
                      for (std::size_t i = 0; i < values.size(); ++i)
                        if (values[i] != 0 || first + i < 2) used.set(std::uint32_t(first + i));
                      return true;
                    })
                    .has_value());
  }
  std::uint32_t take() {
    const std::uint32_t c = used.next_clear(next);
    EXPECT_LT(c, used.size()) << "volume full";
    used.set(c);
    next = c + 1;
    return c;
  }
  // A chain of n clusters holding `data` (zero padded); returns its first.
  std::uint32_t store(const std::string& data) {
    const std::uint64_t cb = vol.layout().cluster_bytes();
    const std::uint64_t n = std::max<std::uint64_t>((data.size() + cb - 1) / cb, 1);
    std::uint32_t first = 0, prev = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t c = take();
      fsio::AlignedBuffer buf(cb);
      if (i * cb < data.size())
        std::memcpy(buf.data(), data.data() + i * cb, std::min<std::uint64_t>(cb, data.size() - i * cb));
      EXPECT_TRUE(vol.queue().write(vol.layout().cluster_offset(c), buf.span()).has_value());
      EXPECT_TRUE(vol.fat().set(c, end_of_chain(vol.layout().type)).has_value());
      if (prev) {
        EXPECT_TRUE(vol.fat().set(prev, c).has_value());
      }
      if (!first) first = c;
      prev = c;
    }
    return first;
  }
  // Adds the slots for `name` to dir, growing it by a cluster when full.
  void add(Directory& dir, std::string_view name, std::uint8_t attrs, std::uint32_t first, std::uint32_t size,
           ShortNameStyle style = ShortNameStyle::win95) {
    auto slots = make_name(
        name, [&](const ShortName& s) { return dir.short_name_taken(s); }, style);
    ASSERT_TRUE(slots.has_value()) << slots.error().message();
    const auto bytes = entry_slots(*slots, make_entry(*slots, attrs, first, size, kWhen, vol.layout().type));
    auto at = dir.find_free(slots->slot_count());
    while (!at) {
      const std::uint32_t c = take();
      ASSERT_TRUE(dir.append_cluster(c).has_value());
      ASSERT_TRUE(vol.fat().set(dir.clusters()[dir.clusters().size() - 2], c).has_value());
      ASSERT_TRUE(vol.fat().set(c, end_of_chain(vol.layout().type)).has_value());
      at = dir.find_free(slots->slot_count());
    }
    ASSERT_TRUE(dir.add(*at, bytes).has_value());
    ASSERT_NE(dir.find(name), nullptr) << name;
  }
  // A new empty directory under `parent_cluster` (0 or the FAT32 root
  // cluster for the root); returns its cluster.
  std::uint32_t make_dir(std::uint32_t parent_cluster) {
    const std::uint32_t c = take();
    fsio::AlignedBuffer buf(vol.layout().cluster_bytes());
    const auto dots = make_dot_entries(vol.layout(), c, parent_cluster, kWhen);
    fsio::store(buf.span(), dots[0], 0);
    fsio::store(buf.span(), dots[1], 32);
    EXPECT_TRUE(vol.queue().write(vol.layout().cluster_offset(c), buf.span()).has_value());
    EXPECT_TRUE(vol.fat().set(c, end_of_chain(vol.layout().type)).has_value());
    return c;
  }
  void commit(Directory& dir) {
    auto plug = vol.queue().plug();
    dir.queue_dirty(plug);
    ASSERT_TRUE(plug.finish().has_value());
    dir.clear_dirty();
  }
};

std::string content(unsigned seed, std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = char((seed * 31 + i * 13) & 0xFF);
  return s;
}

struct WriteCase {
  const char* name;
  std::uint64_t kib;
  const char* args;
};

class WrittenEntries : public ::testing::TestWithParam<WriteCase> {};

TEST_P(WrittenEntries, FsckFatIsSilentAndMtoolsReadsWhatWeWrote) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  const WriteCase c = GetParam();
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, c.kib, c.args);
  const auto cb = test::fsck_geometry(img)["cluster_bytes"];
  test::populate(img, dir / "src", cb, 0);
  std::map<std::string, std::string> files;  // path -> content
  {
    auto v = test::open_volume(img, true);
    ASSERT_TRUE(v.has_value()) << v.error().message();
    Volume& vol = **v.value();
    Writer w(vol);
    auto root = Directory::open_root(vol).value();
    const std::uint32_t root_cluster = vol.layout().type == FatType::fat32 ? vol.layout().root_cluster : 0;
    // A directory in the root, a directory in it, and files in all three.
    const std::uint32_t sub = w.make_dir(root_cluster);
    w.add(root, "New Dir", attr::directory, sub, 0);
    auto subdir = Directory::open(vol, sub).value();
    const std::uint32_t deeper = w.make_dir(sub);
    w.add(subdir, "deeper", attr::directory, deeper, 0);
    auto deeperdir = Directory::open(vol, deeper).value();
    auto file = [&](Directory& d, const std::string& dpath, const std::string& name, std::size_t size,
                    ShortNameStyle style = ShortNameStyle::win95) {
      const std::string data = content(unsigned(files.size()), size);
      w.add(d, name, attr::archive, size ? w.store(data) : 0, std::uint32_t(size), style);
      files[dpath + "/" + name] = data;
    };
    file(root, "", "a long name 2.txt", 100);  // mtools made "a long name.txt" = ALONGN~1.TXT
    file(root, "", "PLAIN.BIN", 3 * cb + 1);
    file(root, "", "lower.bin", 7, ShortNameStyle::winnt);
    file(root, "", "empty file", 0);
    for (int i = 0; i < 60; ++i)  // 3 slots each: past a 4 KiB cluster (128 slots)
      file(subdir, "/New Dir", "Long Name Number " + std::to_string(i) + ".txt", std::size_t(i) * 37);
    file(deeperdir, "/New Dir/deeper", "x", 1);
    EXPECT_EQ(decode_short_name(root.find("a long name 2.txt")->raw_name), "ALONGN~2.TXT");
    EXPECT_EQ(root.find("lower.bin")->short_name, "lower.bin");
    EXPECT_TRUE(root.find("lower.bin")->long_name.empty()) << "case bits, no LFN";
    EXPECT_GT(subdir.clusters().size(), std::size_t(1)) << "60 long names should not fit one cluster";
    // Allocation first (all FAT copies), then the directories, then FSInfo.
    ASSERT_TRUE(vol.fat().flush().has_value());
    w.commit(deeperdir);
    w.commit(subdir);
    w.commit(root);
    auto free = vol.fat().count_free();
    ASSERT_TRUE(free.has_value());
    auto plug = vol.queue().plug();
    vol.queue_fsinfo(plug, *free, w.next - 1);
    ASSERT_TRUE(plug.finish().has_value());
  }
  const auto fsck = support::run("fsck.fat -n " + img);
  EXPECT_EQ(fsck.exit_code, 0) << fsck.output;
  EXPECT_EQ(fsck.output.find("\n  "), std::string::npos) << "fsck.fat found something:\n" << fsck.output;
  const std::string listing = test::mtools("mdir -/ -b", img, "::");
  for (const auto& [path, data] : files) {
    EXPECT_NE(listing.find("::" + path + "\n"), std::string::npos) << path << " not in\n" << listing;
    const std::string out = dir / "out";
    test::mtools("mcopy -n", img, "'::" + path + "' '" + out + "'");
    EXPECT_TRUE(support::read_all(out) == data) << path;
    std::remove(out.c_str());
  }
  // The reader finds them too; ".." of the deeper directory is New Dir, and
  // ".." of New Dir is the root, written as cluster 0 on every FAT type.
  auto v = test::open_volume(img);
  ASSERT_TRUE(v.has_value());
  Volume& vol = **v.value();
  auto dotdot = [&](const char* path) -> std::uint32_t {
    auto d = Directory::open(vol, lookup(vol, path).value()).value();
    for (const Entry& e : d.entries())
      if (e.is_dot() && e.raw_name[1] == '.') return e.first_cluster;
    ADD_FAILURE() << path << " has no '..'";
    return ~0u;
  };
  EXPECT_EQ(dotdot("/New Dir/deeper"), lookup(vol, "/New Dir")->first_cluster);
  EXPECT_EQ(dotdot("/New Dir"), 0u);
  for (const auto& [path, data] : files) EXPECT_TRUE(lookup(vol, path).has_value()) << path;
}

INSTANTIATE_TEST_SUITE_P(Writer, WrittenEntries,
                         ::testing::Values(WriteCase{"fat12", 1440, ""}, WriteCase{"fat16", 20 * 1024, "-F 16 -s 1"},
                                           WriteCase{"fat32", 100 * 1024, "-F 32 -s 1"},
                                           WriteCase{"fat32_4k", 300 * 1024, "-F 32 -S 4096 -f 1"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The edits themselves, on a fresh FAT16 root (slots 0.. are zero).
TEST(DirectoryAdd, MovingTheEndZeroesTheSlotAfterSoNothingStaleAppears) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 20 * 1024, "-F 16");
  std::uint64_t slot2 = 0;
  {
    auto v = test::open_volume(img);
    slot2 = Directory::open_root(**v.value()).value().position(2).device_offset;
  }
  // A stale entry after the end marker: invisible to every reader.
  test::patch(img, slot2, {'G', 'A', 'R', 'B', 'A', 'G', 'E', ' ', 'B', 'I', 'N', 0x20});
  auto v = test::open_volume(img, true);
  ASSERT_TRUE(v.has_value());
  Volume& vol = **v.value();
  auto root = Directory::open_root(vol).value();
  EXPECT_EQ(root.end_slot(), 0u);
  EXPECT_TRUE(root.entries().empty());
  auto name = make_name("two slots.txt", [&](const ShortName& n) { return root.short_name_taken(n); }).value();
  ASSERT_EQ(name.slot_count(), 2u);
  const auto bytes = entry_slots(name, make_entry(name, attr::archive, 0, 0, kWhen, vol.layout().type));
  EXPECT_EQ(root.find_free(2), 0u);
  ASSERT_TRUE(root.add(0, bytes).has_value());
  EXPECT_EQ(root.end_slot(), 2u);
  EXPECT_EQ(std::to_integer<int>(root.slot(2)[0]), 0) << "the stale slot became the end";
  EXPECT_FALSE(root.add(1, std::span(bytes).first(32)).has_value()) << "slot 1 is in use";
  std::vector<std::byte> deleted(bytes.begin(), bytes.begin() + 32);
  deleted[0] = std::byte(kDirEntryFree);
  EXPECT_FALSE(root.add(2, deleted).has_value()) << "an entry that reads as deleted";
  auto plug = vol.queue().plug();
  EXPECT_EQ(root.queue_dirty(plug), 1u) << "slots 0-2 share one sector";
  ASSERT_TRUE(plug.finish().has_value());
  const auto listing = test::mtools("mdir -a", img, "::");
  EXPECT_NE(listing.find("two slots.txt"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("GARBAGE"), std::string::npos) << listing;
  EXPECT_EQ(support::run("fsck.fat -n " + img).exit_code, 0);
}

TEST(DirectoryAdd, FreeSlotsRightAfterALiveLfnSlotAreNotUsed) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 20 * 1024, "-F 16");
  auto v = test::open_volume(img, true);
  Volume& vol = **v.value();
  auto root = Directory::open_root(vol).value();
  // slot 0: a live LFN slot whose 8.3 entry was deleted (slot 1).
  auto name = make_name("orphan long name", [](const ShortName&) { return false; }).value();
  const auto bytes = entry_slots(name, make_entry(name, attr::archive, 0, 0, kWhen, vol.layout().type));
  ASSERT_EQ(name.slot_count(), 3u);
  std::vector<std::byte> tail(bytes.begin() + 32, bytes.end());
  tail[32] = std::byte(kDirEntryFree);
  ASSERT_TRUE(root.overwrite(1, tail).has_value());  // slot 1: LFN slot 1, slot 2: deleted 8.3
  ASSERT_TRUE(root.overwrite(0, std::span(bytes).first(32)).has_value());
  EXPECT_EQ(root.find_free(1), 3u) << "slot 2 follows a live LFN slot";
  ASSERT_FALSE(root.problems().empty());
  EXPECT_EQ(root.problems()[0].kind, LfnProblem::Kind::orphan);
}

}  // namespace
}  // namespace fat
