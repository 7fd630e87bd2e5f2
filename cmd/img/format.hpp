// The fsimg stream: records and their codecs (FORMAT.md has the diagram).
//
//   [header record: fixed fields + block map]
//   [frame index record 0][zstd frame 0] [frame index record 1][zstd frame 1] ...
//   [end record]
//
// Every record is a zstd skippable frame (magic 0x184D2A5F, le32 size, then
// the record), so the whole stream is also a valid zstd stream: `zstd -t`
// checks every frame's checksum and `zstd -dc` prints the stored blocks.
// Each data frame is an independent zstd frame with its content size and
// checksum, preceded by an index naming the map blocks it carries, so a
// reader can check a frame completely before it writes a byte of it.
//
// Decoders take bytes read from a stream, which is input: every field is
// range-checked and a bad one is Errc::corrupt naming the record and field;
// a version this code does not read is Errc::unsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cmd/img/map.hpp"
#include "libfsio/endian.hpp"
#include "libfsio/result.hpp"

namespace img {

using fsio::le16;
using fsio::le32;
using fsio::le64;

inline constexpr std::uint32_t kSkippableMagic = 0x184D2A5F;  // zstd_compression_format.md, skippable frames
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::uint32_t kMinBlock = 512, kMaxBlock = 65536;
inline constexpr std::uint32_t kMaxFrameBytes = 64u << 20;   // stored bytes per frame
inline constexpr std::uint64_t kMaxFrameCover = 1ull << 30;  // bytes of map one frame may cover
inline constexpr std::uint64_t kMaxMapBytes = 1ull << 30;

enum class FsType : std::uint32_t { raw = 0, fat = 1, ext = 2 };
const char* fs_type_name(FsType t);  // "raw", "fat", "ext4"

// The zstd skippable frame around every record.
struct RecordHead {
  le32 magic;  // 0x00: kSkippableMagic
  le32 size;   // 0x04: bytes of the record that follow
};
static_assert(sizeof(RecordHead) == 8);

struct HeaderFixed {
  char tag[4];         // 0x00 "FSIH"
  le16 version;        // 0x04 kVersion
  le16 fixed_bytes;    // 0x06 sizeof(HeaderFixed)
  le32 fs_type;        // 0x08 FsType
  le32 block_size;     // 0x0C bytes per map block, a power of two 512..65536
  le64 source_bytes;   // 0x10 size of the source (device window) that was saved
  le64 image_bytes;    // 0x18 bytes the image describes: restore covers [0, image_bytes)
  le64 block_count;    // 0x20 ceil(image_bytes / block_size)
  le64 mapped_blocks;  // 0x28 blocks in the map
  le64 run_count;      // 0x30 runs in the map
  le64 map_bytes;      // 0x38 encoded map, right after this struct
  le32 frame_bytes;    // 0x40 most stored bytes in one frame
  le32 level;          // 0x44 zstd level (two's complement), for info only
  le64 created;        // 0x48 seconds since 1970 (SOURCE_DATE_EPOCH when set)
  char tool[40];       // 0x50 "fsimg 0.1.0", NUL-padded
  le32 flags;          // 0x78 0 (none defined)
  le32 header_crc;     // 0x7C CRC-32C of this struct (field as 0) and the map
};
static_assert(sizeof(HeaderFixed) == 128 && alignof(HeaderFixed) == 1);
static_assert(offsetof(HeaderFixed, image_bytes) == 0x18 && offsetof(HeaderFixed, frame_bytes) == 0x40);
static_assert(offsetof(HeaderFixed, tool) == 0x50 && offsetof(HeaderFixed, header_crc) == 0x7C);

struct FrameIndexFixed {
  char tag[4];            // 0x00 "FSIF"
  le32 sequence;          // 0x04 0, 1, 2, ...
  le64 first_block;       // 0x08 map ordinal of the first block covered
  le64 covered_blocks;    // 0x10 map blocks covered: stored ones and elided zero ones
  le64 stored_bytes;      // 0x18 content size of the zstd frame that follows
  le64 compressed_bytes;  // 0x20 size of that zstd frame
  le64 zero_runs;         // 0x28 runs of elided all-zero blocks (ordinals relative to first_block)
  le64 zero_map_bytes;    // 0x30 their encoding, right after this struct
  le32 reserved;          // 0x38 0
  le32 index_crc;         // 0x3C CRC-32C of this struct (field as 0) and the zero runs
};
static_assert(sizeof(FrameIndexFixed) == 64 && offsetof(FrameIndexFixed, index_crc) == 0x3C);

struct EndFixed {
  char tag[4];            // 0x00 "FSIE"
  le32 frames;            // 0x04 frames in the stream
  le64 covered_blocks;    // 0x08 == the header's mapped_blocks
  le64 stored_bytes;      // 0x10 sum of the frames' stored_bytes
  le64 compressed_bytes;  // 0x18 sum of the zstd frames' sizes
  le64 stream_bytes;      // 0x20 bytes of the stream before this record
  le32 reserved;          // 0x28 0
  le32 end_crc;           // 0x2C CRC-32C of this struct (field as 0)
};
static_assert(sizeof(EndFixed) == 48 && offsetof(EndFixed, end_crc) == 0x2C);

// The header, decoded.
struct Header {
  FsType fs_type = FsType::raw;
  std::uint32_t block_size = 4096;
  std::uint64_t source_bytes = 0;
  std::uint64_t image_bytes = 0;
  std::uint64_t block_count = 0;
  std::uint32_t frame_bytes = 16u << 20;
  std::int32_t level = 3;
  std::uint64_t created = 0;
  std::string tool;
  std::vector<Run> runs;  // the map
  std::uint64_t mapped_blocks = 0;
};

struct FrameIndex {
  std::uint32_t sequence = 0;
  std::uint64_t first_block = 0;
  std::uint64_t covered_blocks = 0;
  std::uint64_t stored_bytes = 0;
  std::uint64_t compressed_bytes = 0;
  std::vector<Run> zero_runs;  // relative to first_block
};

struct End {
  std::uint32_t frames = 0;
  std::uint64_t covered_blocks = 0;
  std::uint64_t stored_bytes = 0;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t stream_bytes = 0;
};

// Standard CRC-32C (RFC 3720), as the records use it.
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0);

// Whole records, skippable-frame head included.
std::vector<std::byte> encode_header(const Header& h);
std::vector<std::byte> encode_frame_index(const FrameIndex& f);
std::vector<std::byte> encode_end(const End& e);

// Checks a record head read from the stream: the skippable magic, and a
// size from `min` to `max`. `what` names the record for errors.
fsio::Result<std::uint32_t> check_record_head(std::span<const std::byte> head8, std::uint32_t min, std::uint32_t max,
                                              const std::string& what);
// What the fixed part of the header says the whole record needs (fixed
// part + map), checked before the map is read: tag, version, sizes.
fsio::Result<std::uint64_t> header_record_bytes(std::span<const std::byte> fixed);
// The record (without its 8-byte head) fully decoded and checked.
fsio::Result<Header> decode_header(std::span<const std::byte> record);
// A frame index record for a stream with header h, expected at `sequence`
// and map ordinal `next_block`.
fsio::Result<FrameIndex> decode_frame_index(std::span<const std::byte> record, const Header& h, std::uint32_t sequence,
                                            std::uint64_t next_block);
fsio::Result<End> decode_end(std::span<const std::byte> record);

// The tag of a record ("FSIF", "FSIE", ...), or "" when shorter than 4.
std::string record_tag(std::span<const std::byte> record);

// Largest zstd frame a frame of h.frame_bytes stored bytes may compress to.
std::uint64_t max_compressed_bytes(const Header& h);

}  // namespace img
