// Writeback planning (ext/writeback.hpp): how FileWriter cuts a file into
// passes of at most `chunk` bytes, drains its dirty buffer at the limit,
// allocates one run per pass where free space allows and merges runs into
// extents, leaves zero blocks as holes with --sparse, and pads the last
// block. The counts are worked out by hand; the result is committed into a
// mke2fs image and judged by debugfs (`ex`, `stat`, `dump`) and e2fsck -fn.
//
// The image: 1 GiB of 4 KiB blocks, 8 groups of 32768; group 0 is free from
// its first free block to 32767, group 1 (a superblock backup, BLOCK_UNINIT)
// from 32897 to 65535, group 2 (no metadata: flex_bg) from 65536 to 98303.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "ext/extent_build.hpp"
#include "ext/writeback.hpp"
#include "tests/ext/peers.hpp"

namespace ext::writeback_tests {

namespace test = fsio::test;
constexpr std::uint64_t kMiB = 1u << 20;

// `bytes` bytes that vary within and between blocks, never 0 (no block reads
// as a hole); each whole 4 KiB block starts with its number plus one, so no
// two blocks are alike.
std::string pattern(std::uint64_t bytes) {
  std::string s(bytes, '\0');
  for (std::uint64_t i = 0; i < bytes; ++i) s[i] = char(1 + (i / 4096 + i / 7) % 251);
  for (std::uint64_t b = 0; (b + 1) * 4096 <= bytes; ++b) {
    const std::uint64_t tag = b + 1;
    std::memcpy(s.data() + b * 4096, &tag, sizeof tag);
  }
  return s;
}

// A pipe's worth at a time, size unknown (FileWriter::stream's two halves).
class PipeLike : public Source {
 public:
  explicit PipeLike(const std::string& data) : data_(data) {}
  fsio::Result<std::size_t> read(std::span<std::byte> buf) override {
    const std::size_t n = std::min<std::size_t>({buf.size(), data_.size() - at_, 65536});
    std::memcpy(buf.data(), data_.data() + at_, n);
    at_ += n;
    return n;
  }

 private:
  const std::string& data_;
  std::size_t at_ = 0;
};

struct Written {
  WritebackStats stats;
  std::vector<Extent> extents;            // as FileWriter planned them
  std::vector<std::uint64_t> pass_bytes;  // bytes written by each pass
  std::uint64_t requests = 0;             // requests queued: plug.write calls, one per run
};

class Writeback : public peers::WriterTest {
 protected:
  void SetUp() override {
    WriterTest::SetUp();
    if (IsSkipped()) return;
    make(4096, "1G");
  }
  // Writes `data` into /f through a FileWriter (segments of `segment` bytes,
  // or from a PipeLike when `segment` is 0), commits, returns the plan.
  Written put(const std::string& data, const WritebackOptions& o, std::uint64_t goal, std::size_t segment) {
    auto fs = peers::open_rw(img_);
    Transaction tx(*fs, peers::kNow);
    // Every bitmap read now, so that the requests counted below are the data's alone.
    EXPECT_TRUE(tx.alloc().check_all_bitmaps().has_value());
    const auto before = fs->queue().stats();
    std::vector<std::uint64_t> marks;  // bytes written whenever FileWriter polls (before each pass)
    FileWriter w(*fs, tx.alloc(), goal, o, segment ? std::optional<std::uint64_t>(data.size()) : std::nullopt);
    w.interrupted = [&] {
      marks.push_back(fs->queue().stats().bytes_written);
      return false;
    };
    if (segment == 0) {
      PipeLike src(data);
      auto st = w.stream(src);
      EXPECT_TRUE(st.has_value()) << st.error().message();
    } else {
      for (std::size_t at = 0; at < data.size(); at += segment) {
        const auto part = std::as_bytes(std::span(data)).subspan(at, std::min(segment, data.size() - at));
        auto st = w.write(part);
        EXPECT_TRUE(st.has_value()) << st.error().message();
      }
      auto st = w.finish();
      EXPECT_TRUE(st.has_value()) << st.error().message();
    }
    Written out{w.stats(), w.extents(), {}, fs->queue().stats().requests_queued - before.requests_queued};
    marks.push_back(fs->queue().stats().bytes_written);
    // stream() also polls while it waits for input: those marks add nothing.
    for (std::size_t i = 1; i < marks.size(); ++i)
      if (marks[i] != marks[i - 1]) out.pass_bytes.push_back(marks[i] - marks[i - 1]);
    auto tree = peers::adopt(*fs, tx, "/f", normalize_extents(w.extents()), w.size());
    EXPECT_TRUE(tree.has_value()) << tree.error().message();
    auto st = tx.commit();
    EXPECT_TRUE(st.has_value()) << st.error().message();
    return out;
  }
  void expect_file(const std::string& data) {
    EXPECT_TRUE(peers::debugfs_dump(img_, "/f", dir_) == data) << "debugfs dump /f differs from what was written";
    expect_clean();
  }
};

TEST_F(Writeback, PassesAreBoundedByTheChunk) {
  // 5 MiB = 1280 blocks, all in the buffer (64 MiB limit); passes of 1 MiB = 256 blocks: 5.
  const std::string data = pattern(5 * kMiB);
  const std::uint64_t p = first_free(0);
  const auto w = put(data, {.chunk = kMiB}, p, 1 << 20);
  EXPECT_EQ(w.stats.passes, 5u);
  EXPECT_EQ(w.pass_bytes, std::vector<std::uint64_t>(5, kMiB));
  // Free space is contiguous: one run a pass, one request a run, all merged into one extent.
  EXPECT_EQ(w.stats.runs, 5u);
  EXPECT_EQ(w.requests, 5u);
  EXPECT_EQ(w.stats.blocks_committed, 1280u);
  EXPECT_EQ(w.stats.segments, 5u);
  ASSERT_EQ(w.extents.size(), 1u);
  EXPECT_EQ(w.extents[0].physical, p);
  EXPECT_EQ(w.extents[0].len, 1280u);
  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].physical_first, p);
  EXPECT_EQ(rows[0].physical_last, p + 1279);
  expect_file(data);
}

TEST_F(Writeback, TheDirtyLimitDrainsTheBufferBeforeTheEnd) {
  // A buffer of 1.5 MiB = 384 blocks drains as a pass of 256 and one of 128;
  // 1280 = 3 * 384 + 128: three such drains, then the last 128 at the end.
  const std::string data = pattern(5 * kMiB);
  const std::uint64_t p = first_free(0);
  const auto w = put(data, {.dirty_limit = 3 * kMiB / 2, .chunk = kMiB}, p, 100000);
  const std::uint64_t half = kMiB / 2;
  EXPECT_EQ(w.pass_bytes, (std::vector<std::uint64_t>{kMiB, half, kMiB, half, kMiB, half, half}));
  EXPECT_EQ(w.stats.passes, 7u);
  EXPECT_EQ(w.stats.runs, 7u);
  EXPECT_EQ(w.stats.segments, 53u);  // 5242880 / 100000 = 52.4: 53 segments
  ASSERT_EQ(w.extents.size(), 1u);
  EXPECT_EQ(w.extents[0].len, 1280u);
  expect_file(data);
}

TEST_F(Writeback, AStreamOfUnknownSizeDrainsHalfTheBufferAtATime) {
  // A 4 MiB limit, halves of 2 MiB; 5 MiB + 1000 bytes = 2 MiB + 2 MiB +
  // 1 MiB + 1000: passes of 1 MiB, 1 MiB, 1 MiB, 1 MiB, 1 MiB and one block
  // (1000 bytes, zero-padded to 4096).
  const std::string data = pattern(5 * kMiB + 1000);
  const std::uint64_t p = first_free(0);
  const auto w = put(data, {.dirty_limit = 4 * kMiB, .chunk = kMiB}, p, 0);
  EXPECT_EQ(w.pass_bytes, (std::vector<std::uint64_t>{kMiB, kMiB, kMiB, kMiB, kMiB, 4096}));
  EXPECT_EQ(w.stats.blocks_committed, 1281u);
  ASSERT_EQ(w.extents.size(), 1u);
  EXPECT_EQ(w.extents[0].len, 1281u);
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").size, 5 * kMiB + 1000);
  expect_file(data);
}

TEST_F(Writeback, ZeroBlocksBecomeHolesWithSparse) {
  // 16 blocks, blocks 4-7 all zero: runs [0, 4) and [8, 16), the second
  // allocated right after the first.
  std::string data = pattern(16 * 4096);
  std::memset(data.data() + 4 * 4096, 0, 4 * 4096);
  const std::uint64_t p = first_free(0);
  const auto w = put(data, {.sparse = true}, p, 16 * 4096);
  EXPECT_EQ(w.stats.hole_blocks, 4u);
  EXPECT_EQ(w.stats.runs, 2u);
  EXPECT_EQ(w.stats.blocks_committed, 12u);
  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].logical_first, 0u);
  EXPECT_EQ(rows[0].logical_last, 3u);
  EXPECT_EQ(rows[0].physical_first, p);
  EXPECT_EQ(rows[1].logical_first, 8u);
  EXPECT_EQ(rows[1].logical_last, 15u);
  EXPECT_EQ(rows[1].physical_first, p + 4);
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, 12u * 8);
  expect_file(data);
}

TEST_F(Writeback, ZeroBlocksAreWrittenWithoutSparse) {
  std::string data = pattern(16 * 4096);
  std::memset(data.data() + 4 * 4096, 0, 4 * 4096);
  const auto w = put(data, {}, first_free(0), 16 * 4096);
  EXPECT_EQ(w.stats.hole_blocks, 0u);
  EXPECT_EQ(w.stats.runs, 1u);
  ASSERT_EQ(peers::debugfs_ex(img_, "/f").size(), 1u);
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").blockcount, 16u * 8);
  expect_file(data);
}

TEST_F(Writeback, TheLastBlockIsPaddedWithZeros) {
  // 10000 bytes: 3 blocks, the last holding 10000 - 8192 = 1808 bytes of
  // data. The free blocks hold old bytes first, so padding must be written.
  const std::uint64_t p = first_free(0);
  {
    std::fstream f(img_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(p * 4096));
    const std::string old(3 * 4096, '\xAA');
    f.write(old.data(), std::streamsize(old.size()));
  }
  const std::string data = pattern(10000);
  put(data, {}, p, 10000);
  const auto last = test::read_string(img_, (p + 2) * 4096, 4096);
  EXPECT_TRUE(last.substr(0, 1808) == data.substr(8192));
  EXPECT_TRUE(last.substr(1808) == std::string(4096 - 1808, '\0'));
  EXPECT_EQ(peers::debugfs_stat(img_, "/f").size, 10000u);
  expect_file(data);
}

TEST_F(Writeback, RunsMergeIntoExtentsOfAtMost32768Blocks) {
  // 33768 blocks from 32897, the first free block of group 1, in passes of
  // 16 MiB = 4096 blocks: passes 1-7 take 28672 blocks, pass 8 the last
  // 65535 - 61569 + 1 = 3967 of group 1 and then 129 from 65536 (group 2,
  // physically next), pass 9 the last 1000: 10 runs. They form one
  // contiguous range 32897..66664, cut into extents of 32768 and 1000.
  ASSERT_EQ(first_free(1), 32897u);
  ASSERT_EQ(groups_[2].free_block_ranges.at(0).first, 65536u);
  const std::string data = pattern(33768ull * 4096);
  const auto w = put(data, {.chunk = 16 * kMiB}, 32897, 4 << 20);
  EXPECT_EQ(w.stats.passes, 9u);
  EXPECT_EQ(w.stats.runs, 10u);
  const auto rows = peers::debugfs_ex(img_, "/f");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].logical_last, 32767u);
  EXPECT_EQ(rows[0].physical_first, 32897u);
  EXPECT_EQ(rows[0].physical_last, 32897u + 32767);
  EXPECT_EQ(rows[1].logical_first, 32768u);
  EXPECT_EQ(rows[1].physical_first, 32897u + 32768);
  EXPECT_EQ(rows[1].length, 1000u);
  // 132 MiB through debugfs dump takes long: the blocks at both ends of each
  // extent and every 997th between are read from where debugfs maps them.
  for (const auto& r : rows) {
    std::vector<std::uint64_t> sample{r.logical_last};
    for (std::uint64_t l = r.logical_first; l < r.logical_last; l += 997) sample.push_back(l);
    for (const std::uint64_t l : sample) {
      const std::uint64_t phys = r.physical_first + (l - r.logical_first);
      ASSERT_TRUE(test::read_string(img_, phys * 4096, 4096) == data.substr(l * 4096, 4096))
          << "logical block " << l << " at " << phys;
    }
  }
  expect_clean();
}

TEST_F(Writeback, AnEmptyFileWritesNothing) {
  const auto w = put("", {}, first_free(0), 4096);
  EXPECT_EQ(w.stats.passes, 0u);
  EXPECT_EQ(w.requests, 0u);
  EXPECT_TRUE(w.extents.empty());
  const auto st = peers::debugfs_stat(img_, "/f");
  EXPECT_EQ(st.size, 0u);
  EXPECT_EQ(st.blockcount, 0u);
  expect_clean();
}

}  // namespace ext::writeback_tests
