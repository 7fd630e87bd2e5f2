// fsimg's record codecs (cmd/img/format.hpp) against records written byte
// by byte from cmd/img/FORMAT.md (tests/img/records.hpp): the encoders
// must produce those bytes, the decoders must read them back field by
// field, and every field the format constrains, changed (and the record's
// CRC recomputed, so the field's own check is the one that speaks), must
// give its own error.
#include <gtest/gtest.h>

#include <cstdio>

#include "cmd/img/format.hpp"
#include "tests/img/records.hpp"

namespace img_format_tests {

using img_records::Bytes;
using img_records::put;

Bytes to_bytes(const std::vector<std::byte>& v) {
  Bytes out(v.size());
  std::memcpy(out.data(), v.data(), v.size());
  return out;
}
std::span<const std::byte> span_of(const Bytes& b) { return std::as_bytes(std::span(b)); }

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

img::Header example_header() {
  img::Header h;
  h.fs_type = img::FsType::ext;
  h.block_size = 4096;
  h.source_bytes = 1 << 20;
  h.image_bytes = 41060;
  h.block_count = 11;
  h.frame_bytes = 65536;
  h.level = 3;
  h.created = 1700000000;
  h.tool = "fsimg 0.1.0";
  h.runs = {{0, 2}, {5, 3}};
  h.mapped_blocks = 5;
  return h;
}

TEST(ReferenceCrc32c, MatchesRfc3720) {
  // The check value of "123456789", and RFC 3720 B.4's 32 bytes of zeros,
  // of 0xFF, and of 0x00..0x1F.
  const std::string digits = "123456789";
  EXPECT_EQ(img_records::crc32c_bitwise(reinterpret_cast<const std::uint8_t*>(digits.data()), 9), 0xE3069283u);
  Bytes b(32, 0);
  EXPECT_EQ(img_records::crc32c_bitwise(b.data(), 32), 0x8A9136AAu);
  std::fill(b.begin(), b.end(), 0xFF);
  EXPECT_EQ(img_records::crc32c_bitwise(b.data(), 32), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) b[i] = std::uint8_t(i);
  EXPECT_EQ(img_records::crc32c_bitwise(b.data(), 32), 0x46DD794Eu);
  // The codec's CRC is the same function.
  EXPECT_EQ(img::crc32c(std::as_bytes(std::span(digits))), 0xE3069283u);
}

// --- the bytes each encoder writes ---

TEST(Records, HeaderEncodesAsFormatMdSays) {
  const Bytes want = img_records::framed(img_records::header_record());
  ASSERT_EQ(want.size(), 8u + 128 + 4);
  // The head: 5F 2A 4D 18 (0x184D2A5F little-endian), size 132 = 0x84.
  EXPECT_EQ(Bytes(want.begin(), want.begin() + 8), (Bytes{0x5F, 0x2A, 0x4D, 0x18, 0x84, 0x00, 0x00, 0x00}));
  EXPECT_EQ(to_bytes(img::encode_header(example_header())), want);
}

TEST(Records, FrameIndexEncodesAsFormatMdSays) {
  img::FrameIndex f;
  f.sequence = 0;
  f.first_block = 0;
  f.covered_blocks = 5;
  f.stored_bytes = 12288;
  f.compressed_bytes = 100;
  f.zero_runs = {{1, 2}};
  const Bytes want = img_records::framed(img_records::frame_index_record());
  EXPECT_EQ(want.size(), 8u + 64 + 2);
  EXPECT_EQ(to_bytes(img::encode_frame_index(f)), want);
}

TEST(Records, EndEncodesAsFormatMdSays) {
  const img::End e{1, 5, 12288, 100, 314};
  const Bytes want = img_records::framed(img_records::end_record());
  EXPECT_EQ(want.size(), 8u + 48);
  EXPECT_EQ(to_bytes(img::encode_end(e)), want);
}

// --- the decoders on those bytes ---

TEST(Records, HeaderDecodesFieldByField) {
  const Bytes rec = img_records::header_record();
  auto need = img::header_record_bytes(span_of(rec));
  ASSERT_TRUE(need.has_value()) << need.error().message();
  EXPECT_EQ(*need, 132u);  // 128 fixed + 4 of map
  auto h = img::decode_header(span_of(rec));
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_EQ(h->fs_type, img::FsType::ext);
  EXPECT_EQ(h->block_size, 4096u);
  EXPECT_EQ(h->source_bytes, 1u << 20);
  EXPECT_EQ(h->image_bytes, 41060u);
  EXPECT_EQ(h->block_count, 11u);
  EXPECT_EQ(h->frame_bytes, 65536u);
  EXPECT_EQ(h->level, 3);
  EXPECT_EQ(h->created, 1700000000u);
  EXPECT_EQ(h->tool, "fsimg 0.1.0");
  EXPECT_EQ(h->mapped_blocks, 5u);
  EXPECT_EQ(h->runs, (std::vector<img::Run>{{0, 2}, {5, 3}}));
}

TEST(Records, NegativeLevelsRoundTripTheirTwosComplement) {
  // zstd's fast levels are negative: level -5 is stored as 0xFFFFFFFB.
  Bytes rec = img_records::header_record();
  put(rec, 0x44, 0xFFFFFFFB, 4);
  img_records::seal(rec, 128, 0x7C);
  auto h = img::decode_header(span_of(rec));
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_EQ(h->level, -5);
  auto eh = example_header();
  eh.level = -5;
  EXPECT_EQ(to_bytes(img::encode_header(eh)), img_records::framed(rec));
}

TEST(Records, FrameIndexDecodesFieldByField) {
  const auto h = img::decode_header(span_of(img_records::header_record()));
  ASSERT_TRUE(h.has_value());
  auto f = img::decode_frame_index(span_of(img_records::frame_index_record()), *h, 0, 0);
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(f->sequence, 0u);
  EXPECT_EQ(f->first_block, 0u);
  EXPECT_EQ(f->covered_blocks, 5u);
  EXPECT_EQ(f->stored_bytes, 12288u);
  EXPECT_EQ(f->compressed_bytes, 100u);
  EXPECT_EQ(f->zero_runs, (std::vector<img::Run>{{1, 2}}));
}

TEST(Records, EndDecodesFieldByField) {
  auto e = img::decode_end(span_of(img_records::end_record()));
  ASSERT_TRUE(e.has_value()) << e.error().message();
  EXPECT_EQ(e->frames, 1u);
  EXPECT_EQ(e->covered_blocks, 5u);
  EXPECT_EQ(e->stored_bytes, 12288u);
  EXPECT_EQ(e->compressed_bytes, 100u);
  EXPECT_EQ(e->stream_bytes, 314u);
}

TEST(Records, MaxCompressedBytesIsZstdsBound) {
  // ZSTD_COMPRESSBOUND(n) = n + n / 256 + (n < 128 KiB ? (128 KiB - n) / 2048 : 0):
  // 65536 + 256 + 32 = 65824; 16 MiB: 16777216 + 65536 = 16842752.
  img::Header h;
  h.frame_bytes = 65536;
  EXPECT_EQ(img::max_compressed_bytes(h), 65824u);
  h.frame_bytes = 16u << 20;
  EXPECT_EQ(img::max_compressed_bytes(h), 16842752u);
}

// --- each constrained field, changed ---

struct Damage {
  const char* what;
  std::size_t offset;
  std::uint64_t value;
  int width;
  fsio::Errc code;
  std::string message;
};

void PrintTo(const Damage& d, std::ostream* os) { *os << d.what; }

class HeaderDamage : public ::testing::TestWithParam<Damage> {};

TEST_P(HeaderDamage, GivesItsOwnError) {
  const Damage& d = GetParam();
  Bytes rec = img_records::header_record();
  put(rec, d.offset, d.value, d.width);
  img_records::seal(rec, 128, 0x7C);
  auto h = img::decode_header(span_of(rec));
  ASSERT_FALSE(h.has_value()) << d.what;
  EXPECT_EQ(h.error().code, d.code) << h.error().message();
  EXPECT_EQ(h.error().message(), d.message);
}

using fsio::Errc;
INSTANTIATE_TEST_SUITE_P(
    Fields, HeaderDamage,
    ::testing::Values(
        Damage{"tag", 0x00, 0x58495346, 4, Errc::corrupt, "header: tag 'FSIX', expected 'FSIH': not an fsimg image"},
        Damage{"newer version", 0x04, 2, 2, Errc::unsupported,
               "header: format version 2, but this fsimg reads version 1 (made by a newer fsimg, or a damaged header)"},
        Damage{"version 0", 0x04, 0, 2, Errc::unsupported,
               "header: format version 0, but this fsimg reads version 1 (a damaged header)"},
        Damage{"fixed_bytes", 0x06, 127, 2, Errc::corrupt, "header: fixed_bytes 127, expected 128"},
        Damage{"map_bytes", 0x38, (1ull << 30) + 1, 8, Errc::corrupt,
               "header: map_bytes 1073741825 is more than 1 GiB"},
        Damage{"fs_type", 0x08, 3, 4, Errc::corrupt, "header: fs_type 3 is unknown"},
        Damage{"block_size not a power of two", 0x0C, 1000, 4, Errc::corrupt,
               "header: block_size 1000 is not a power of two in 512..65536"},
        Damage{"block_size below 512", 0x0C, 256, 4, Errc::corrupt,
               "header: block_size 256 is not a power of two in 512..65536"},
        Damage{"block_size above 64 KiB", 0x0C, 131072, 4, Errc::corrupt,
               "header: block_size 131072 is not a power of two in 512..65536"},
        Damage{"image_bytes 0", 0x18, 0, 8, Errc::corrupt, "header: image_bytes 0"},
        Damage{"source smaller than the image", 0x10, 40000, 8, Errc::corrupt,
               "header: image_bytes 41060 exceed source_bytes 40000"},
        Damage{"block_count", 0x20, 12, 8, Errc::corrupt,
               "header: block_count 12 does not match image_bytes 41060 in blocks of 4096"},
        Damage{"frame_bytes not a multiple", 0x40, 6000, 4, Errc::corrupt,
               "header: frame_bytes 6000 is not a multiple of the block size up to 64 MiB"},
        Damage{"frame_bytes below a block", 0x40, 2048, 4, Errc::corrupt,
               "header: frame_bytes 2048 is not a multiple of the block size up to 64 MiB"},
        Damage{"frame_bytes above 64 MiB", 0x40, (64u << 20) + 4096, 4, Errc::corrupt,
               "header: frame_bytes 67112960 is not a multiple of the block size up to 64 MiB"},
        Damage{"mapped_blocks above block_count", 0x28, 12, 8, Errc::corrupt,
               "header: mapped_blocks 12 exceed block_count 11"},
        Damage{"flags", 0x78, 1, 4, Errc::unsupported, "header: flags 0x00000001 are unknown"},
        Damage{"tool without its NUL", 0x77, 'x', 1, Errc::corrupt, "header: tool name is not NUL-terminated"},
        Damage{"mapped_blocks against the map", 0x28, 4, 8, Errc::corrupt,
               "header map: runs hold 5 blocks, the header says 4"},
        Damage{"run_count", 0x30, 3, 8, Errc::corrupt, "header map: 3 runs cannot fit in 4 bytes"},
        // The second run's length 3 -> 9: blocks 5..13, past block_count 11.
        Damage{"a run past the end", 128 + 3, 9, 1, Errc::corrupt, "header map run 1: ends beyond block 11"},
        // The second run's gap 3 -> 0: it would touch the first.
        Damage{"touching runs", 128 + 2, 0, 1, Errc::corrupt, "header map run 1: touches the run before it (gap 0)"}));

TEST(Records, HeaderChecksumAndLength) {
  Bytes rec = img_records::header_record();
  const std::uint32_t good = std::uint32_t(rec[0x7C] | rec[0x7D] << 8 | rec[0x7E] << 16 | rec[0x7F] << 24);
  rec[0x7C] ^= 1;
  auto h = img::decode_header(span_of(rec));
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code, fsio::Errc::corrupt);
  EXPECT_EQ(h.error().message(),
            "header: checksum " + hex32(good ^ 1) + " does not match its contents (" + hex32(good) + ")");
  // A map byte flipped is covered by the same CRC.
  rec = img_records::header_record();
  rec[128 + 1] = 0x01;
  h = img::decode_header(span_of(rec));
  ASSERT_FALSE(h.has_value());
  EXPECT_NE(h.error().message().find("header: checksum"), std::string::npos) << h.error().message();
  // One byte more than the fields say, and a fixed part cut short.
  rec = img_records::header_record();
  rec.push_back(0);
  EXPECT_EQ(img::decode_header(span_of(rec)).error().message(), "header: record of 133 bytes, its fields say 132");
  rec.resize(100);
  EXPECT_EQ(img::header_record_bytes(span_of(rec)).error().message(), "header: shorter than its 128 fixed bytes");
}

class FrameIndexDamage : public ::testing::TestWithParam<Damage> {};

TEST_P(FrameIndexDamage, GivesItsOwnError) {
  const Damage& d = GetParam();
  const auto h = img::decode_header(span_of(img_records::header_record()));
  ASSERT_TRUE(h.has_value());
  Bytes rec = img_records::frame_index_record();
  put(rec, d.offset, d.value, d.width);
  img_records::seal(rec, 64, 0x3C);
  auto f = img::decode_frame_index(span_of(rec), *h, 0, 0);
  ASSERT_FALSE(f.has_value()) << d.what;
  EXPECT_EQ(f.error().code, d.code) << f.error().message();
  EXPECT_EQ(f.error().message(), d.message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, FrameIndexDamage,
    ::testing::Values(Damage{"tag", 0x00, 0x58495346, 4, Errc::corrupt, "frame 0 index: tag 'FSIX', expected 'FSIF'"},
                      Damage{"sequence", 0x04, 1, 4, Errc::corrupt,
                             "frame 0 index: sequence number 1 (frames missing or out of order)"},
                      Damage{"first_block", 0x08, 3, 8, Errc::corrupt, "frame 0 index: first block 3, expected 0"},
                      // At most 2^30 bytes of map a frame: 262144 blocks of 4096.
                      Damage{"covers nothing", 0x10, 0, 8, Errc::corrupt,
                             "frame 0 index: covers 0 blocks; 5 of the map are left, at most 262144 a frame"},
                      Damage{"covers past the map", 0x10, 6, 8, Errc::corrupt,
                             "frame 0 index: covers 6 blocks; 5 of the map are left, at most 262144 a frame"},
                      Damage{"stored_bytes not whole blocks", 0x18, 12289, 8, Errc::corrupt,
                             "frame 0 index: stored_bytes 12289 do not fit its 5 blocks (frame_bytes 65536)"},
                      Damage{"stored_bytes past what it covers", 0x18, 6 * 4096, 8, Errc::corrupt,
                             "frame 0 index: stored_bytes 24576 do not fit its 5 blocks (frame_bytes 65536)"},
                      Damage{"compressed_bytes 0", 0x20, 0, 8, Errc::corrupt,
                             "frame 0 index: compressed_bytes 0 is outside 1..65824"},
                      Damage{"compressed_bytes past zstd's bound", 0x20, 65825, 8, Errc::corrupt,
                             "frame 0 index: compressed_bytes 65825 is outside 1..65824"},
                      Damage{"zero_map_bytes", 0x30, 3, 8, Errc::corrupt,
                             "frame 0 index: zero_map_bytes 3, the record holds 2"},
                      // 4 blocks stored leave 1 zero block, but the zero run holds 2.
                      Damage{"zero runs against stored_bytes", 0x18, 4 * 4096, 8, Errc::corrupt,
                             "frame 0 index zero runs: runs hold 2 blocks, the header says 1"}));

TEST(Records, FrameIndexChecksumLengthAndPlace) {
  const auto h = img::decode_header(span_of(img_records::header_record()));
  ASSERT_TRUE(h.has_value());
  Bytes rec = img_records::frame_index_record();
  const std::uint32_t good = std::uint32_t(rec[0x3C] | rec[0x3D] << 8 | rec[0x3E] << 16 | rec[0x3F] << 24);
  rec[0x3F] ^= 0x80;
  auto f = img::decode_frame_index(span_of(rec), *h, 0, 0);
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().message(), "frame 0 index: checksum " + hex32(good ^ 0x80000000u) +
                                     " does not match its contents (" + hex32(good) + ")");
  rec = img_records::frame_index_record();
  rec.resize(63);
  EXPECT_EQ(img::decode_frame_index(span_of(rec), *h, 0, 0).error().message(),
            "frame 0 index: shorter than its 64 fixed bytes");
  // The same record where frame 1 is expected.
  rec = img_records::frame_index_record();
  EXPECT_EQ(img::decode_frame_index(span_of(rec), *h, 1, 5).error().message(),
            "frame 1 index: sequence number 0 (frames missing or out of order)");
}

TEST(Records, EndRecordDamage) {
  Bytes rec = img_records::end_record();
  put(rec, 0, 0x58495346, 4);
  img_records::seal(rec, 48, 0x2C);
  EXPECT_EQ(img::decode_end(span_of(rec)).error().message(), "end record: tag 'FSIX', expected 'FSIE'");
  rec = img_records::end_record();
  rec.push_back(0);
  EXPECT_EQ(img::decode_end(span_of(rec)).error().message(), "end record: size 49, expected 48");
  rec = img_records::end_record();
  const std::uint32_t good = std::uint32_t(rec[0x2C] | rec[0x2D] << 8 | rec[0x2E] << 16 | rec[0x2F] << 24);
  rec[0x20] ^= 1;  // stream_bytes 314 -> 315
  auto e = img::decode_end(span_of(rec));
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, fsio::Errc::corrupt);
  img_records::seal(rec, 48, 0x2C);
  const std::uint32_t want = std::uint32_t(rec[0x2C] | rec[0x2D] << 8 | rec[0x2E] << 16 | rec[0x2F] << 24);
  EXPECT_EQ(e.error().message(),
            "end record: checksum " + hex32(good) + " does not match its contents (" + hex32(want) + ")");
}

TEST(Records, RecordHeads) {
  // A zstd data frame (magic 0xFD2FB528: 28 B5 2F FD) where a record belongs, a
  // head with the skippable magic but a size out of range.
  const Bytes zstd{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(img::check_record_head(span_of(zstd), 48, 1000, "frame 3 index").error().message(),
            "frame 3 index: magic 0xFD2FB528, expected 0x184D2A5F (a zstd data frame where a record belongs)");
  Bytes head(8);
  put(head, 0, 0x184D2A5F, 4);
  put(head, 4, 47, 4);
  EXPECT_EQ(img::check_record_head(span_of(head), 48, 1000, "end record").error().message(),
            "end record: size 47 is outside 48..1000");
  put(head, 4, 48, 4);
  auto ok = img::check_record_head(span_of(head), 48, 1000, "end record");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 48u);
}

}  // namespace img_format_tests
