// fill: names and times from what the user types, clusters and FSInfo
// worked out by hand on fresh mkfs.fat volumes, the order of writes and
// flushes as a recording engine sees them, Ctrl-C between files, and
// refusals that write nothing. Volumes are judged by fsck.fat and mtools.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <regex>
#include <thread>

#include "fat/directory.hpp"
#include "fat/fill.hpp"
#include "fat/fsinfo.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/fat/peer_images.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

TEST(ExpandNames, NumbersFromFirstWithTheWidthAndPaddingAsked) {
  EXPECT_EQ(expand_names("FILL%04d.BIN", 0, 3).value(),
            (std::vector<std::string>{"FILL0000.BIN", "FILL0001.BIN", "FILL0002.BIN"}));
  EXPECT_EQ(expand_names("clip %d.mp4", 9, 2).value(), (std::vector<std::string>{"clip 9.mp4", "clip 10.mp4"}));
  EXPECT_EQ(expand_names("%3d", 7, 1).value(), (std::vector<std::string>{"  7"}));
  EXPECT_EQ(expand_names("100%% %02u", 5, 1).value(), (std::vector<std::string>{"100% 05"}));
  EXPECT_EQ(expand_names("ONE.BIN", 0, 1).value(), (std::vector<std::string>{"ONE.BIN"}));
}

TEST(ExpandNames, RefusesPatternsThatCannotNameEveryFile) {
  for (const char* p : {"A%d%d", "A%s", "A%", "A%011d"}) {
    auto r = expand_names(p, 0, 2);
    ASSERT_FALSE(r.has_value()) << p;
    EXPECT_EQ(r.error().code, fsio::Errc::invalid_argument) << p;
  }
  EXPECT_FALSE(expand_names("SAME.BIN", 0, 2).has_value()) << "two files, one name";
  EXPECT_FALSE(expand_names("A%d", ~std::uint64_t(0), 2).has_value()) << "the numbers overflow";
}

TEST(SplitPath, DirectoryAndNameWithEmptyPartsIgnored) {
  EXPECT_EQ(split_path("/A/B/c.bin").value(), (std::pair<std::string, std::string>{"/A/B", "c.bin"}));
  EXPECT_EQ(split_path("c.bin").value(), (std::pair<std::string, std::string>{"/", "c.bin"}));
  EXPECT_EQ(split_path("//A//c").value(), (std::pair<std::string, std::string>{"/A", "c"}));
  for (const char* bad : {"/", "", "/A/", "/A/../b", "/./b"}) EXPECT_FALSE(split_path(bad).has_value()) << bad;
}

TEST(FillTime, SourceDateEpochIsUtc) {
  // 1700000000 is 2023-11-14 22:13:20 UTC.
  const DosDateTime t = fill_time(1700000000);
  EXPECT_EQ(t.date, (2023 - 1980) << 9 | 11 << 5 | 14);
  EXPECT_EQ(t.time, 22 << 11 | 13 << 5 | 20 / 2);
}

// Every request the device sees, in order, with an optional hook at the Nth write.
class Recorder final : public fsio::Engine {
 public:
  struct Event {
    fsio::IoOp op;
    std::uint64_t offset, bytes;
  };
  explicit Recorder(int fd) : inner_(fsio::make_sync_engine(fd, 32)) {}
  const char* name() const override { return "recorder"; }
  unsigned depth() const override { return inner_->depth(); }
  unsigned in_flight() const override { return inner_->in_flight(); }
  std::uint64_t syscalls() const override { return inner_->syscalls(); }
  fsio::Status queue(const fsio::IoRequest& r) override {
    events->push_back({r.op, r.offset, r.bytes});
    if (r.op == fsio::IoOp::write && ++writes_ == hook_at && hook) hook();
    return inner_->queue(r);
  }
  fsio::Result<unsigned> commit() override { return inner_->commit(); }
  fsio::Result<unsigned> reap(std::span<fsio::IoCompletion> out, unsigned n) override { return inner_->reap(out, n); }

  std::shared_ptr<std::vector<Event>> events = std::make_shared<std::vector<Event>>();
  std::uint64_t hook_at = 0;
  std::function<void()> hook;

 private:
  std::unique_ptr<fsio::Engine> inner_;
  std::uint64_t writes_ = 0;
};

struct Opened {
  fsio::Device dev;
  std::optional<fsio::IoQueue> queue;
  std::optional<Volume> vol;
  std::shared_ptr<std::vector<Recorder::Event>> events;
};

std::unique_ptr<Opened> open_recorded(const std::string& path, std::uint64_t hook_at = 0,
                                      std::function<void()> hook = {}) {
  fsio::OpenOptions oo;
  oo.write = true;
  oo.direct = false;
  oo.allow_mounted = true;
  auto o = std::unique_ptr<Opened>(new Opened{fsio::Device::open(path, oo).value(), {}, {}, {}});
  auto rec = std::make_unique<Recorder>(o->dev.fd());
  rec->hook_at = hook_at;
  rec->hook = std::move(hook);
  o->events = rec->events;
  o->queue.emplace(fsio::IoQueue::create(o->dev, std::move(rec)).value());
  o->vol.emplace(Volume::open(*o->queue, {0, fill_fat_cache()}).value());
  o->events->clear();  // the reads of opening
  return o;
}

// The writes and flushes as letters: f FAT, i FSInfo, c a cluster (data or
// directory), r the FAT12/16 root region, | a flush. Reads are left out.
std::string letters(const Opened& o) {
  const Layout& l = o.vol->layout();
  std::string s;
  for (const auto& e : *o.events) {
    if (e.op == fsio::IoOp::flush) s += '|';
    if (e.op != fsio::IoOp::write) continue;
    if (e.offset >= l.fat_offset(0) && e.offset < l.fat_offset(l.num_fats)) s += 'f';
    else if (l.type == FatType::fat32 && e.offset == l.sector_offset(l.fsinfo_sector)) s += 'i';
    else if (e.offset >= l.sector_offset(l.data_start_sector())) s += 'c';
    else if (e.offset >= l.root_dir_offset()) s += 'r';
    else s += '?';
  }
  return s;
}

std::string fsck(const std::string& img) { return support::run("fsck.fat -n " + img).output; }
bool fsck_clean(const std::string& img) {
  const auto r = support::run("fsck.fat -n " + img);
  return r.exit_code == 0 && r.output.find("\n  ") == std::string::npos;
}

FillOptions files(std::uint32_t n, std::uint64_t size, const std::string& dir = "/",
                  const std::string& pattern = "FILL%04d.BIN") {
  FillOptions o;
  o.names = expand_names(pattern, 0, n).value();
  o.size = size;
  o.dir = dir;
  o.when = fill_time(1700000000);
  return o;
}

TEST(Fill, FreshFat32ClustersAndFsInfoWorkedOutByHand) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 100 * 1024, "-F 32 -s 1");  // root at cluster 2, FSInfo next free 2
  std::uint32_t free_before = 0;
  {
    auto o = open_recorded(img);
    free_before = o->vol->fsinfo()->free_count;
    auto r = fill(*o->vol, files(3, 1000));  // 1000 bytes: 2 clusters of 512
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_EQ(r->files.size(), 3u);
    EXPECT_EQ(r->files[0].extents, (std::vector<Extent>{{3, 2}}));
    EXPECT_EQ(r->files[1].extents, (std::vector<Extent>{{5, 2}}));
    EXPECT_EQ(r->files[2].extents, (std::vector<Extent>{{7, 2}}));
    EXPECT_EQ(r->files_done, 3u);
    EXPECT_EQ(r->clusters_allocated, 6u);
    EXPECT_EQ(r->free_after, free_before - 6);
    EXPECT_EQ(r->fat_sectors_per_copy, 1u) << "entries 3..8 share FAT sector 0";
    EXPECT_EQ(r->bytes_zeroed, 3u * 2 * 512);
    // One batch: data and FAT in one plug, a flush, the root directory, then
    // FSInfo and the final flush.
    EXPECT_TRUE(std::regex_match(letters(*o), std::regex(R"([cf]+\|[ci]+\|)"))) << letters(*o);
  }
  // FSInfo as stored (fatgen103: free count at 0x1E8, next free at 0x1EC).
  const auto fsinfo = support::read_bytes(img, 512, 512);
  const auto info = fsio::load<FsInfo>(fsinfo);
  EXPECT_EQ(std::uint32_t(info.free_count), free_before - 6);
  EXPECT_EQ(std::uint32_t(info.next_free), 8u) << "the last cluster allocated, as Linux keeps it";
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
  const auto listing = test::mtools("mdir -/ -b", img, "::");
  for (const char* n : {"::/FILL0000.BIN", "::/FILL0001.BIN", "::/FILL0002.BIN"})
    EXPECT_NE(listing.find(n), std::string::npos) << listing;
}

TEST(Fill, SyncFlushesBetweenFatAndEntryAndAfterEachFile) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 100 * 1024, "-F 32 -s 1");
  auto o = open_recorded(img);
  FillOptions opt = files(3, 5000);
  opt.sync = true;
  auto r = fill(*o->vol, opt);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  // Per file: its data and chain, a flush, its entry with FSInfo, a flush.
  // (Inside one plug requests go in offset order: FSInfo, sector 1, first.)
  EXPECT_TRUE(std::regex_match(letters(*o), std::regex(R"(([cf]+\|[ci]{2}\|){3})"))) << letters(*o);
  EXPECT_EQ(r->flushes, 6u);
  EXPECT_EQ(r->fsinfo_writes, 3u);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
}

// The FAT of 700 MiB in 512-byte clusters is 5.6 MB, six of fill's 1 MiB
// blocks; three 200 MiB files touch five of them. Every read of the writing
// phase (directories and FAT blocks) comes before its first write: no batch
// waits for a read.
TEST(Fill, SyncReadsEverythingItChangesBeforeTheFirstWrite) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 700 * 1024, "-F 32 -s 1");
  test::mtools("mmd", img, "::/SUB");
  auto o = open_recorded(img);
  FillOptions opt = files(3, 200u << 20, "/SUB");
  opt.sync = true;
  opt.zero = false;
  auto r = fill(*o->vol, opt);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const auto& ev = *o->events;
  const auto first_write = std::find_if(ev.begin(), ev.end(), [](const auto& e) { return e.op == fsio::IoOp::write; });
  ASSERT_NE(first_write, ev.end());
  const Layout& l = o->vol->layout();
  std::uint64_t fat_reads = 0;
  for (auto e = ev.begin(); e != ev.end(); ++e) {
    if (e->op != fsio::IoOp::read) continue;
    const bool fat = e->offset >= l.fat_offset(0) && e->offset < l.fat_offset(l.num_fats);
    if (fat && e->bytes == fill_fat_cache().block_bytes) ++fat_reads;
    EXPECT_TRUE(e < first_write) << "a read at byte " << e->offset << " after writing began";
  }
  EXPECT_GE(fat_reads, 5u) << "the blocks of three 200 MiB chains, read before writing";
  EXPECT_TRUE(std::regex_match(letters(*o), std::regex(R"(([cf]+\|[ci]{2}\|){3})"))) << letters(*o);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
}

TEST(Fill, AGrowingDirectoryHasItsNewClusterZeroedAndFlushedBeforeTheLink) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 100 * 1024, "-F 32 -s 1");  // 512-byte clusters: 16 slots
  auto o = open_recorded(img);
  // Long names take 3 slots: a new directory (2 slots for the dots) holds 4
  // of them, so the fifth grows it.
  FillOptions opt = files(5, 100, "/d", "long file name %d.bin");
  opt.sync = true;
  auto r = fill(*o->vol, opt);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  // The directory: its cluster, its FAT entry (nothing reachable points at
  // either yet, so no flush between), a flush, its entry. Four files. The
  // fifth: zeros for the directory's new cluster and the file's data,
  // flushed, then the chain and the link to the new cluster, flushed, then
  // the entry.
  EXPECT_TRUE(std::regex_match(letters(*o), std::regex(R"(c+f+\|[ci]+\|([cf]+\|[ci]+\|){4}c+\|f+\|[ci]+\|)")))
      << letters(*o);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
  const auto listing = test::mtools("mdir -/ -b", img, "::");
  EXPECT_NE(listing.find("::/d/long file name 4.bin"), std::string::npos) << listing;
}

TEST(Fill, LongNamesStayInsideA512ByteUnitAndTheSlotsSkippedAreMarkedDeleted) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 300 * 1024,
             "-F 32 -s 8");  // 4 KiB clusters: 128 slots, 8 units of 16 (65525+ clusters, as mtools needs)
  auto o = open_recorded(img);
  // The dots and four 3-slot names fill slots 0..13; the fifth name needs 3
  // and would cross into the second unit at slot 14, so it goes to 16, and
  // 14 and 15 (the old end) become deleted slots.
  auto r = fill(*o->vol, files(6, 10, "/d", "long file name %d.bin"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto d = Directory::open(*o->vol, lookup(*o->vol, "/d").value()).value();
  EXPECT_EQ(d.find("long file name 4.bin")->first_slot, 16u);
  EXPECT_EQ(d.find("long file name 5.bin")->first_slot, 19u);
  EXPECT_EQ(std::to_integer<int>(d.slot(14)[0]), kDirEntryFree);
  EXPECT_EQ(std::to_integer<int>(d.slot(15)[0]), kDirEntryFree);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
  const auto listing = test::mtools("mdir -/ -b", img, "::");
  for (int i = 0; i < 6; ++i)
    EXPECT_NE(listing.find("::/d/long file name " + std::to_string(i) + ".bin"), std::string::npos) << listing;
}

TEST(Fill, ReplacingFreesTheOldChainOnlyAfterTheNewEntryIsDurable) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 20 * 1024, "-F 16 -s 1");
  const std::string src = dir / "old";
  support::make_file(src, 3000, 'x');
  test::mtools("mcopy", img, src + " ::/FILL0000.BIN");
  auto o = open_recorded(img);
  FillOptions opt = files(1, 700);
  auto refused = fill(*o->vol, opt);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("exists (--force replaces it)"), std::string::npos)
      << refused.error().message();
  EXPECT_EQ(letters(*o), "") << "a refusal writes nothing";
  opt.force = true;
  auto r = fill(*o->vol, opt);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_TRUE(r->files[0].replaced);
  EXPECT_EQ(r->clusters_freed, 6u) << "3000 bytes in 512-byte clusters";
  // Data and chain, flush, the entry rewritten in the root region, flush,
  // the old chain freed, and the final flush (FAT16 has no FSInfo).
  EXPECT_TRUE(std::regex_match(letters(*o), std::regex(R"([cf]+\|r\|f+\|)"))) << letters(*o);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
  const auto listing = test::mtools("mdir -/ -b", img, "::");
  const std::string out = dir / "out";
  test::mtools("mcopy -n", img, "::/FILL0000.BIN " + out);
  EXPECT_EQ(support::read_string(out, 0, 700), std::string(700, '\0'));
  EXPECT_EQ(std::filesystem::file_size(out), 700u);
}

TEST(Fill, RefusalsWriteNothing) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 1440, "");
  auto o = open_recorded(img);
  struct Case {
    FillOptions opt;
    const char* says;
  };
  test::mtools("mcopy", img, "/dev/null ::/HOLE");
  for (const Case& c : {Case{files(3, 600 * 1024), "are free"}, Case{files(300, 0), "root directory is full"},
                        Case{files(1, 10, "/HOLE/x"), "is a file, not a directory"}}) {
    o->events->clear();
    auto r = fill(*o->vol, c.opt);
    ASSERT_FALSE(r.has_value()) << c.says;
    EXPECT_NE(r.error().message().find(c.says), std::string::npos) << r.error().message();
    EXPECT_EQ(letters(*o), "") << c.says;
  }
}

TEST(Fill, CtrlCStopsBetweenFilesAndLeavesTheCompletedOnes) {
  if (auto m = test::missing_peer_tools(); !m.empty()) GTEST_SKIP() << m;
  support::TempDir dir;
  const std::string img = dir / "img";
  test::mkfs(img, 20 * 1024, "-F 16 -s 1");
  // The flag a signal sets outlives the guard: clear it for the tests after.
  struct Reset {
    ~Reset() { fsio::InterruptGuard clear; }
  } reset;
  fsio::InterruptGuard guard;
  // SIGINT at the 4th write, the first file's entry (writes 1-3 are its
  // data and the FAT sector of each copy); wait until the guard has seen it.
  auto o = open_recorded(img, 4, [] {
    std::raise(SIGINT);
    for (int i = 0; i < 200 && !fsio::InterruptGuard::requested(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  FillOptions opt = files(6, 2000);
  opt.sync = true;
  auto r = fill(*o->vol, opt);
  ASSERT_TRUE(fsio::InterruptGuard::requested());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, fsio::Errc::interrupted);
  std::smatch m;
  const std::string msg = r.error().message();
  ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(after (\d) of 6 files)"))) << msg;
  const int done = std::stoi(m[1]);
  EXPECT_GE(done, 1);
  EXPECT_LT(done, 6);
  EXPECT_TRUE(fsck_clean(img)) << fsck(img);
  const auto listing = test::mtools("mdir -/ -b", img, "::");
  for (int i = 0; i < 6; ++i) {
    const std::string name = "::/FILL000" + std::to_string(i) + ".BIN";
    EXPECT_EQ(listing.find(name) != std::string::npos, i < done) << name << " in\n" << listing;
  }
}

}  // namespace
}  // namespace fat
