// The --verify pattern: every 512-byte sector carries its own address.
//
// A sector at absolute byte offset `off` (a multiple of 512) holds
//
//   bytes 0..7     le64  off              where this sector belongs
//   bytes 8..15    le64  seed             which run wrote it
//   bytes 16..511  62 x le64              PRNG words, seeded from (seed, off)
//
// so a block written to the wrong place, a stale block from an earlier run
// and a flipped bit all read back as something the checker can name. Buffers
// may start and end anywhere: a partial sector gets the matching bytes of its
// full-sector pattern. Pure functions, thread-safe, no allocation.
//
// With a `fill` (fio's verify_pattern), bytes 16..511 repeat its bytes
// instead of the PRNG words (byte 16 + i holds fill[i % fill.size()]), as
// fio fills what its verify header leaves of a block with the pattern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace bench {

inline constexpr std::uint32_t pattern_sector = 512;

// Fill buf with the pattern of the bytes at absolute offsets [offset, offset + size).
void stamp_pattern(std::span<std::byte> buf, std::uint64_t offset, std::uint64_t seed,
                   std::span<const std::byte> fill = {});

// What the mismatching sector holds, as far as the checked buffer shows it.
enum class SectorStamp : std::uint8_t {
  unknown,  // the buffer does not hold the sector's first 16 bytes
  valid,    // a whole pattern: the one its header names (another place, another seed, or its own with bits flipped)
  zeros,    // all zero bytes: no stamp at all (never written, trimmed, zeroed)
  none,     // neither: its first 16 bytes name no pattern the rest follows
};

struct PatternMismatch {
  std::uint64_t offset = 0;          // absolute offset of the first byte that differs
  std::uint64_t word_offset = 0;     // the 8-byte-aligned word holding it
  std::uint64_t expected = 0;        // that word as written (little-endian value)
  std::uint64_t actual = 0;          // and as read back
  std::uint64_t stamped_offset = 0;  // what the sector's header claims (bytes 0..7)
  std::uint64_t stamped_seed = 0;    // bytes 8..15
  bool header_read = false;          // the header lies inside the checked buffer
  SectorStamp stamp = SectorStamp::unknown;
};

// The first byte of buf (holding absolute offsets [offset, offset + size))
// that differs from the pattern, or nullopt when all match.
std::optional<PatternMismatch> check_pattern(std::span<const std::byte> buf, std::uint64_t offset, std::uint64_t seed,
                                             std::span<const std::byte> fill = {});

// "first mismatch at 0x1200: expected 0x... read 0x...; the sector at 0x1200
// holds the stamp of offset 0x3000, seed 7", or "... holds no stamp (all
// zeros)", or "... holds no valid stamp (...)"; nothing is added for a
// sector of its own offset and seed whose bits have flipped.
std::string describe(const PatternMismatch& m, std::uint64_t seed);

}  // namespace bench
