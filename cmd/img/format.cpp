// Record codecs (format.hpp, FORMAT.md).
#include "cmd/img/format.hpp"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "libfsio/crc32c.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr char kHeaderTag[4] = {'F', 'S', 'I', 'H'};
constexpr char kFrameTag[4] = {'F', 'S', 'I', 'F'};
constexpr char kEndTag[4] = {'F', 'S', 'I', 'E'};

template <class T>
std::span<const std::byte> bytes_of(const T& v) {
  return {reinterpret_cast<const std::byte*>(&v), sizeof(T)};
}

// A record: skippable head, fixed struct, then `tail` bytes.
template <class T>
std::vector<std::byte> record(const T& fixed, std::span<const std::byte> tail) {
  RecordHead head;
  head.magic = kSkippableMagic;
  head.size = std::uint32_t(sizeof(T) + tail.size());
  std::vector<std::byte> out;
  out.reserve(sizeof head + sizeof(T) + tail.size());
  for (auto part : {bytes_of(head), bytes_of(fixed), tail}) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// CRC-32C of a fixed struct whose crc field (at `crc_offset`) counts as 0,
// continued over `tail`.
template <class T>
std::uint32_t record_crc(T fixed, std::size_t crc_offset, std::span<const std::byte> tail) {
  std::memset(reinterpret_cast<std::byte*>(&fixed) + crc_offset, 0, 4);
  return crc32c(tail, crc32c(bytes_of(fixed)));
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

fsio::Error bad(const std::string& what, const std::string& why) {
  return make_error(Errc::corrupt, what + ": " + why);
}

fsio::Status check_tag(std::span<const std::byte> rec, const char (&tag)[4], const std::string& what) {
  if (rec.size() < 4 || std::memcmp(rec.data(), tag, 4) != 0)
    return bad(what, "tag '" + record_tag(rec) + "', expected '" + std::string(tag, 4) + "'");
  return {};
}

}  // namespace

const char* fs_type_name(FsType t) {
  switch (t) {
    case FsType::raw: return "raw";
    case FsType::fat: return "fat";
    case FsType::ext: return "ext4";
  }
  return "?";
}

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc) { return ~fsio::crc32c_raw(~crc, data); }

std::string record_tag(std::span<const std::byte> rec) {
  if (rec.size() < 4) return "";
  std::string tag;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto c = std::to_integer<unsigned char>(rec[i]);
    tag += (c >= 0x20 && c < 0x7F) ? char(c) : '?';
  }
  return tag;
}

std::uint64_t max_compressed_bytes(const Header& h) { return ZSTD_compressBound(h.frame_bytes); }

std::vector<std::byte> encode_header(const Header& h) {
  const std::vector<std::byte> map = encode_runs(h.runs);
  HeaderFixed f{};
  std::memcpy(f.tag, kHeaderTag, 4);
  f.version = kVersion;
  f.fixed_bytes = sizeof(HeaderFixed);
  f.fs_type = std::uint32_t(h.fs_type);
  f.block_size = h.block_size;
  f.source_bytes = h.source_bytes;
  f.image_bytes = h.image_bytes;
  f.block_count = h.block_count;
  f.mapped_blocks = h.mapped_blocks;
  f.run_count = h.runs.size();
  f.map_bytes = map.size();
  f.frame_bytes = h.frame_bytes;
  f.level = std::uint32_t(h.level);
  f.created = h.created;
  std::memcpy(f.tool, h.tool.data(), std::min(h.tool.size(), sizeof f.tool - 1));
  f.header_crc = record_crc(f, offsetof(HeaderFixed, header_crc), map);
  return record(f, map);
}

std::vector<std::byte> encode_frame_index(const FrameIndex& x) {
  const std::vector<std::byte> zeros = encode_runs(x.zero_runs);
  FrameIndexFixed f{};
  std::memcpy(f.tag, kFrameTag, 4);
  f.sequence = x.sequence;
  f.first_block = x.first_block;
  f.covered_blocks = x.covered_blocks;
  f.stored_bytes = x.stored_bytes;
  f.compressed_bytes = x.compressed_bytes;
  f.zero_runs = x.zero_runs.size();
  f.zero_map_bytes = zeros.size();
  f.index_crc = record_crc(f, offsetof(FrameIndexFixed, index_crc), zeros);
  return record(f, zeros);
}

std::vector<std::byte> encode_end(const End& e) {
  EndFixed f{};
  std::memcpy(f.tag, kEndTag, 4);
  f.frames = e.frames;
  f.covered_blocks = e.covered_blocks;
  f.stored_bytes = e.stored_bytes;
  f.compressed_bytes = e.compressed_bytes;
  f.stream_bytes = e.stream_bytes;
  f.end_crc = record_crc(f, offsetof(EndFixed, end_crc), {});
  return record(f, {});
}

fsio::Result<std::uint32_t> check_record_head(std::span<const std::byte> head8, std::uint32_t min, std::uint32_t max,
                                              const std::string& what) {
  const auto head = fsio::load<RecordHead>(head8);
  if (head.magic != kSkippableMagic)
    return bad(what, "magic " + hex32(head.magic) + ", expected " + hex32(kSkippableMagic) +
                         (head.magic == 0xFD2FB528 ? " (a zstd data frame where a record belongs)" : ""));
  if (head.size < min || head.size > max)
    return bad(what,
               "size " + std::to_string(head.size) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
  return std::uint32_t(head.size);
}

fsio::Result<std::uint64_t> header_record_bytes(std::span<const std::byte> fixed) {
  const std::string what = "header";
  if (fixed.size() < sizeof(HeaderFixed)) return bad(what, "shorter than its 128 fixed bytes");
  if (std::memcmp(fixed.data(), kHeaderTag, 4) != 0)
    return bad(what, "tag '" + record_tag(fixed) + "', expected 'FSIH': not an fsimg image");
  const auto f = fsio::load<HeaderFixed>(fixed);
  if (f.version != kVersion)
    return make_error(Errc::unsupported, "header: format version " + std::to_string(f.version) +
                                             ", but this fsimg reads version " + std::to_string(kVersion) +
                                             (f.version > kVersion ? " (made by a newer fsimg, or a damaged header)"
                                                                   : " (a damaged header)"));
  if (f.fixed_bytes != sizeof(HeaderFixed))
    return bad(what, "fixed_bytes " + std::to_string(f.fixed_bytes) + ", expected 128");
  if (f.map_bytes > kMaxMapBytes) return bad(what, "map_bytes " + std::to_string(f.map_bytes) + " is more than 1 GiB");
  return sizeof(HeaderFixed) + std::uint64_t(f.map_bytes);
}

// The fixed fields' own rules, apart from the map.
static fsio::Status check_header_fields(const HeaderFixed& f) {
  const std::string what = "header";
  if (f.fs_type > std::uint32_t(FsType::ext)) return bad(what, "fs_type " + std::to_string(f.fs_type) + " is unknown");
  const std::uint32_t bs = f.block_size;
  if (!std::has_single_bit(bs) || bs < kMinBlock || bs > kMaxBlock)
    return bad(what, "block_size " + std::to_string(bs) + " is not a power of two in 512..65536");
  if (f.image_bytes == 0) return bad(what, "image_bytes 0");
  if (f.source_bytes < f.image_bytes)
    return bad(what, "image_bytes " + std::to_string(f.image_bytes) + " exceed source_bytes " +
                         std::to_string(f.source_bytes));
  if (f.block_count != (f.image_bytes - 1) / bs + 1)
    return bad(what, "block_count " + std::to_string(f.block_count) + " does not match image_bytes " +
                         std::to_string(f.image_bytes) + " in blocks of " + std::to_string(bs));
  if (f.frame_bytes < bs || f.frame_bytes > kMaxFrameBytes || f.frame_bytes % bs)
    return bad(what,
               "frame_bytes " + std::to_string(f.frame_bytes) + " is not a multiple of the block size up to 64 MiB");
  if (f.mapped_blocks > f.block_count)
    return bad(what, "mapped_blocks " + std::to_string(f.mapped_blocks) + " exceed block_count " +
                         std::to_string(f.block_count));
  if (f.flags != 0) return make_error(Errc::unsupported, "header: flags " + hex32(f.flags) + " are unknown");
  if (f.tool[sizeof f.tool - 1] != 0) return bad(what, "tool name is not NUL-terminated");
  return {};
}

fsio::Result<Header> decode_header(std::span<const std::byte> rec) {
  const std::uint64_t need = FSIO_TRY(header_record_bytes(rec));
  if (rec.size() != need)
    return bad("header", "record of " + std::to_string(rec.size()) + " bytes, its fields say " + std::to_string(need));
  const auto f = fsio::load<HeaderFixed>(rec);
  const auto map = rec.subspan(sizeof(HeaderFixed));
  const std::uint32_t crc = record_crc(f, offsetof(HeaderFixed, header_crc), map);
  if (crc != f.header_crc)
    return bad("header", "checksum " + hex32(f.header_crc) + " does not match its contents (" + hex32(crc) + ")");
  FSIO_TRY(check_header_fields(f));
  Header h;
  h.fs_type = FsType(std::uint32_t(f.fs_type));
  h.block_size = f.block_size;
  h.source_bytes = f.source_bytes;
  h.image_bytes = f.image_bytes;
  h.block_count = f.block_count;
  h.frame_bytes = f.frame_bytes;
  h.level = std::int32_t(std::uint32_t(f.level));
  h.created = f.created;
  h.tool = std::string(f.tool, strnlen(f.tool, sizeof f.tool));
  h.mapped_blocks = f.mapped_blocks;
  h.runs = FSIO_TRY(decode_runs(map, f.run_count, h.block_count, h.mapped_blocks, "header map"));
  return h;
}

fsio::Result<FrameIndex> decode_frame_index(std::span<const std::byte> rec, const Header& h, std::uint32_t sequence,
                                            std::uint64_t next_block) {
  const std::string what = "frame " + std::to_string(sequence) + " index";
  FSIO_TRY(check_tag(rec, kFrameTag, what));
  if (rec.size() < sizeof(FrameIndexFixed)) return bad(what, "shorter than its 64 fixed bytes");
  const auto f = fsio::load<FrameIndexFixed>(rec);
  const auto zeros = rec.subspan(sizeof(FrameIndexFixed));
  const std::uint32_t crc = record_crc(f, offsetof(FrameIndexFixed, index_crc), zeros);
  if (crc != f.index_crc)
    return bad(what, "checksum " + hex32(f.index_crc) + " does not match its contents (" + hex32(crc) + ")");
  if (f.sequence != sequence)
    return bad(what, "sequence number " + std::to_string(f.sequence) + " (frames missing or out of order)");
  if (f.first_block != next_block)
    return bad(what, "first block " + std::to_string(f.first_block) + ", expected " + std::to_string(next_block));
  const std::uint64_t left = h.mapped_blocks - next_block;
  if (f.covered_blocks == 0 || f.covered_blocks > left || f.covered_blocks > kMaxFrameCover / h.block_size)
    return bad(what, "covers " + std::to_string(f.covered_blocks) + " blocks; " + std::to_string(left) +
                         " of the map are left, at most " + std::to_string(kMaxFrameCover / h.block_size) + " a frame");
  if (f.stored_bytes > h.frame_bytes || f.stored_bytes % h.block_size ||
      f.stored_bytes / h.block_size > f.covered_blocks)
    return bad(what, "stored_bytes " + std::to_string(f.stored_bytes) + " do not fit its " +
                         std::to_string(f.covered_blocks) + " blocks (frame_bytes " + std::to_string(h.frame_bytes) +
                         ")");
  if (f.compressed_bytes == 0 || f.compressed_bytes > max_compressed_bytes(h))
    return bad(what, "compressed_bytes " + std::to_string(f.compressed_bytes) + " is outside 1.." +
                         std::to_string(max_compressed_bytes(h)));
  if (f.zero_map_bytes != zeros.size())
    return bad(what, "zero_map_bytes " + std::to_string(f.zero_map_bytes) + ", the record holds " +
                         std::to_string(zeros.size()));
  FrameIndex x;
  x.sequence = sequence;
  x.first_block = next_block;
  x.covered_blocks = f.covered_blocks;
  x.stored_bytes = f.stored_bytes;
  x.compressed_bytes = f.compressed_bytes;
  const std::uint64_t zero_blocks = f.covered_blocks - f.stored_bytes / h.block_size;
  x.zero_runs = FSIO_TRY(decode_runs(zeros, f.zero_runs, f.covered_blocks, zero_blocks, what + " zero runs"));
  return x;
}

fsio::Result<End> decode_end(std::span<const std::byte> rec) {
  const std::string what = "end record";
  FSIO_TRY(check_tag(rec, kEndTag, what));
  if (rec.size() != sizeof(EndFixed)) return bad(what, "size " + std::to_string(rec.size()) + ", expected 48");
  const auto f = fsio::load<EndFixed>(rec);
  const std::uint32_t crc = record_crc(f, offsetof(EndFixed, end_crc), {});
  if (crc != f.end_crc)
    return bad(what, "checksum " + hex32(f.end_crc) + " does not match its contents (" + hex32(crc) + ")");
  return End{f.frames, f.covered_blocks, f.stored_bytes, f.compressed_bytes, f.stream_bytes};
}

}  // namespace img
