// Reading a whole fsimg stream (cmd/img/stream.hpp) made of the records of
// tests/img/records.hpp, from a file descriptor as restore reads it: the
// records in order, then the same stream cut at every kind of place, with
// a record out of place, totals that disagree and bytes after the end, each
// giving the error that names the stream offset and what was being read.
// And zstd itself reading a stream of our records around a real frame.
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <variant>

#include "cmd/img/stream.hpp"
#include "tests/img/records.hpp"
#include "tests/support/support.hpp"

namespace img_stream_tests {

namespace test = fsio::test;
using img_records::Bytes;
using img_records::put;

// The example stream: header (140 bytes), frame index (74), 100 bytes of
// frame data, end (56): 370 bytes. Offsets: index at 140, data at 214, end at 314.
Bytes example_stream(const Bytes& data = Bytes(100, 0x5A)) {
  Bytes s = img_records::framed(img_records::header_record());
  for (const Bytes& part :
       {img_records::framed(img_records::frame_index_record()), data, img_records::framed(img_records::end_record())})
    s.insert(s.end(), part.begin(), part.end());
  return s;
}

class Stream : public ::testing::Test {
 protected:
  // Opens `bytes` as the stream "IN".
  void open(const Bytes& bytes) {
    path_ = dir_ / "stream";
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
    in_ = std::make_unique<img::StreamReader>(fd_, "IN");
  }
  void TearDown() override {
    in_.reset();
    if (fd_ >= 0) ::close(fd_);
  }
  // Reads the stream to its end; the first error's message, or "".
  std::string read_all_records() {
    auto r = img::ImageReader::open(*in_);
    if (!r) return r.error().message();
    for (;;) {
      auto next = r->next();
      if (!next) return next.error().message();
      if (std::holds_alternative<img::End>(*next)) return "";
    }
  }

  test::TempDir dir_;
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<img::StreamReader> in_;
};

TEST_F(Stream, ReadsEveryRecordInOrder) {
  Bytes data(100);
  for (int i = 0; i < 100; ++i) data[i] = std::uint8_t(i * 3);
  open(example_stream(data));
  auto r = img::ImageReader::open(*in_);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->header_bytes(), 140u);
  EXPECT_EQ(r->header().runs, (std::vector<img::Run>{{0, 2}, {5, 3}}));
  auto frame = r->next();
  ASSERT_TRUE(frame.has_value()) << frame.error().message();
  const auto& f = std::get<img::FrameRecord>(*frame);
  EXPECT_EQ(f.offset, 140u);
  EXPECT_EQ(f.index.covered_blocks, 5u);
  EXPECT_EQ(f.index.zero_runs, (std::vector<img::Run>{{1, 2}}));
  ASSERT_EQ(f.compressed.size(), 100u);
  EXPECT_EQ(std::memcmp(f.compressed.data(), data.data(), 100), 0);
  auto end = r->next();
  ASSERT_TRUE(end.has_value()) << end.error().message();
  EXPECT_EQ(std::get<img::End>(*end).stream_bytes, 314u);
  EXPECT_EQ(r->frames(), 1u);
  EXPECT_EQ(in_->offset(), 370u);
}

TEST_F(Stream, ACutAnywhereNamesWhereAndInWhat) {
  const Bytes full = example_stream();
  const struct {
    std::size_t cut;
    const char* message;
  } cases[] = {
      {0, "IN: truncated: the stream ends at byte 0, 0 bytes into the header of 8"},
      {50, "IN: truncated: the stream ends at byte 50, 42 bytes into the header of 128"},
      {138, "IN: truncated: the stream ends at byte 138, 2 bytes into the header's map of 4"},
      {144, "IN: truncated: the stream ends at byte 144, 4 bytes into frame 0 index record head of 8"},
      {170, "IN: truncated: the stream ends at byte 170, 22 bytes into frame 0 index of 66"},
      {254, "IN: truncated: the stream ends at byte 254, 40 bytes into frame 0 data of 100"},
      // Exactly between the last frame and the end record: still truncated (FORMAT.md).
      {314, "IN: truncated: the stream ends at byte 314, 0 bytes into end record head of 8"},
      {340, "IN: truncated: the stream ends at byte 340, 18 bytes into end record of 48"},
  };
  for (const auto& c : cases) {
    open(Bytes(full.begin(), full.begin() + std::ptrdiff_t(c.cut)));
    const std::string got = read_all_records();
    EXPECT_EQ(got, c.message) << "cut at " << c.cut;
  }
}

TEST_F(Stream, BytesAfterTheEndAreRefused) {
  Bytes s = example_stream();
  s.push_back(0);
  open(s);
  EXPECT_EQ(read_all_records(), "IN: byte 370 (0x172): data after the end record (two images concatenated?)");
}

TEST_F(Stream, EndTotalsMustMatchTheFrames) {
  const struct {
    std::size_t offset;
    std::uint64_t value;
    int width;
    const char* message;
  } cases[] = {
      {0x04, 2, 4, "IN: byte 314 (0x13a): end record: frames 2, the stream holds 1"},
      {0x08, 4, 8, "IN: byte 314 (0x13a): end record: covered_blocks 4, the stream holds 5"},
      {0x10, 8192, 8, "IN: byte 314 (0x13a): end record: stored_bytes 8192, the stream holds 12288"},
      {0x18, 99, 8, "IN: byte 314 (0x13a): end record: compressed_bytes 99, the stream holds 100"},
      {0x20, 300, 8, "IN: byte 314 (0x13a): end record: stream_bytes 300, the stream holds 314"},
  };
  for (const auto& c : cases) {
    Bytes end = img_records::end_record();
    put(end, c.offset, c.value, c.width);
    img_records::seal(end, 48, 0x2C);
    Bytes s = example_stream();
    s.resize(314);
    const Bytes framed = img_records::framed(end);
    s.insert(s.end(), framed.begin(), framed.end());
    open(s);
    EXPECT_EQ(read_all_records(), c.message);
  }
}

TEST_F(Stream, RecordsOutOfPlace) {
  const Bytes full = example_stream();
  const Bytes header(full.begin(), full.begin() + 140);
  const Bytes end = img_records::framed(img_records::end_record());
  // The end record where frame 0's index belongs.
  Bytes s = header;
  s.insert(s.end(), end.begin(), end.end());
  open(s);
  EXPECT_EQ(read_all_records(), "IN: byte 140 (0x8c): end record after 0 of 5 mapped blocks: frames are missing");
  // A zstd data frame there instead.
  s = header;
  s.insert(s.end(), {0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x00, 0x00, 0x00});
  s.resize(s.size() + 60);
  open(s);
  EXPECT_EQ(read_all_records(),
            "IN: byte 140 (0x8c): frame 0 index: magic 0xFD2FB528, expected 0x184D2A5F "
            "(a zstd data frame where a record belongs)");
  // A plain zstd stream, and something else entirely.
  open(Bytes{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
  EXPECT_EQ(read_all_records(), "IN: not an fsimg image (a plain zstd stream)");
  open(Bytes(200, 0x41));
  EXPECT_EQ(read_all_records(), "IN: not an fsimg image (no fsimg header at byte 0)");
}

TEST_F(Stream, HeaderErrorsNameTheirOffset) {
  Bytes s = example_stream();
  put(s, 8 + 0x04, 2, 2);  // version 2
  // (no CRC to fix: the version is checked first, before anything else is trusted)
  open(s);
  auto r = img::ImageReader::open(*in_);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, fsio::Errc::unsupported);
  EXPECT_EQ(r.error().message(),
            "IN: byte 8 (0x8): header: format version 2, but this fsimg reads version 1 "
            "(made by a newer fsimg, or a damaged header)");
  // The head's size disagrees with the fields: 133 where 128 + 4 are due.
  s = example_stream();
  put(s, 4, 133, 4);
  open(s);
  EXPECT_EQ(read_all_records(), "IN: byte 0 (0x0): header: record of 133 bytes, its fields say 132");
}

TEST_F(Stream, ZstdReadsTheRecordsAsSkippableFrames) {
  if (!test::have_tool("zstd")) GTEST_SKIP() << "zstd is not installed: the stream is not checked by the zstd tool";
  // A real frame of 3 stored blocks (12288 bytes) compressed by libzstd
  // with its checksum, between our header, index and end records.
  std::string stored(12288, '\0');
  for (std::size_t i = 0; i < stored.size(); ++i) stored[i] = char('a' + i % 23);
  Bytes frame(ZSTD_compressBound(stored.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const std::size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), stored.data(), stored.size());
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n));
  frame.resize(n);
  Bytes index = img_records::frame_index_record();
  put(index, 0x20, n, 8);
  img_records::seal(index, 64, 0x3C);
  Bytes end = img_records::end_record();
  put(end, 0x18, n, 8);
  put(end, 0x20, 140 + 74 + n, 8);
  img_records::seal(end, 48, 0x2C);
  Bytes s = img_records::framed(img_records::header_record());
  for (const Bytes& part : {img_records::framed(index), frame, img_records::framed(end)})
    s.insert(s.end(), part.begin(), part.end());
  open(s);
  EXPECT_EQ(read_all_records(), "");
  const auto t = test::run("zstd -q -t '" + path_ + "'");
  EXPECT_EQ(t.exit_code, 0) << t.output;
  const auto d = test::run("zstd -q -dc '" + path_ + "' > '" + (dir_ / "out") + "'");
  ASSERT_EQ(d.exit_code, 0) << d.output;
  EXPECT_TRUE(test::read_all(dir_ / "out") == stored);
  // A flipped byte in a record is invisible to zstd (it skips records) but not to us.
  s[8 + 0x40] ^= 1;
  open(s);
  EXPECT_EQ(test::run("zstd -q -t '" + path_ + "'").exit_code, 0);
  EXPECT_EQ(read_all_records().rfind("IN: byte 8 (0x8): header: checksum ", 0), 0u);
}

}  // namespace img_stream_tests
