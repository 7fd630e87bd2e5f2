#include "cmd/bench/pattern.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace bench {
namespace {

constexpr std::size_t words_per_sector = pattern_sector / 8;
using Sector = std::array<std::uint64_t, words_per_sector>;

// splitmix64 (Steele, Lea, Flood 2014): one add and a mix per word, and any
// seed, zero included, gives a full-period stream.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t to_le(std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) return v;
  else return __builtin_bswap64(v);
}

// The sector starting at absolute offset `sector_off`, as little-endian words.
void make_sector(std::uint64_t sector_off, std::uint64_t seed, std::uint64_t* out,
                 std::span<const std::byte> fill = {}) {
  out[0] = to_le(sector_off);
  out[1] = to_le(seed);
  if (!fill.empty()) {
    auto* bytes = reinterpret_cast<std::byte*>(out + 2);
    for (std::size_t i = 0; i < pattern_sector - 16; ++i) bytes[i] = fill[i % fill.size()];
    return;
  }
  std::uint64_t state = mix(seed ^ mix(sector_off + 0x9e3779b97f4a7c15ULL));
  for (std::size_t i = 2; i < words_per_sector; ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    out[i] = to_le(mix(state));
  }
}

std::uint64_t load_word(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return to_le(v);
}

// Cuts [offset, offset + size) at pattern-sector boundaries and calls
// fn(done, sector_off, skip, n) for each piece: `done` bytes into the range,
// the piece's sector starts at absolute `sector_off`, the piece begins
// `skip` bytes into it and is `n` bytes long. Stops when fn returns false.
template <class Fn>
void for_each_piece(std::uint64_t offset, std::size_t size, Fn fn) {
  std::size_t done = 0;
  while (done < size) {
    const std::uint64_t pos = offset + done;
    const std::uint64_t sector_off = pos - pos % pattern_sector;
    const std::size_t skip = pos - sector_off;
    const std::size_t n = std::min<std::size_t>(pattern_sector - skip, size - done);
    if (!fn(done, sector_off, skip, n)) return;
    done += n;
  }
}

// What the piece of a sector that starts at its first byte holds (the
// piece is `n` >= 16 bytes of it): zeros, the pattern its header names, or
// neither.
SectorStamp classify(const std::byte* got, std::size_t n, std::span<const std::byte> fill) {
  if (std::all_of(got, got + n, [](std::byte b) { return b == std::byte{0}; })) return SectorStamp::zeros;
  Sector s;
  make_sector(load_word(got), load_word(got + 8), s.data(), fill);
  return std::memcmp(s.data(), got, n) == 0 ? SectorStamp::valid : SectorStamp::none;
}

}  // namespace

void stamp_pattern(std::span<std::byte> buf, std::uint64_t offset, std::uint64_t seed,
                   std::span<const std::byte> fill) {
  for_each_piece(offset, buf.size(), [&](std::size_t done, std::uint64_t sector_off, std::size_t skip, std::size_t n) {
    if (skip == 0 && n == pattern_sector && reinterpret_cast<std::uintptr_t>(buf.data() + done) % 8 == 0) {
      make_sector(sector_off, seed, reinterpret_cast<std::uint64_t*>(buf.data() + done), fill);
    } else {
      Sector s;
      make_sector(sector_off, seed, s.data(), fill);
      std::memcpy(buf.data() + done, reinterpret_cast<const std::byte*>(s.data()) + skip, n);
    }
    return true;
  });
}

std::optional<PatternMismatch> check_pattern(std::span<const std::byte> buf, std::uint64_t offset, std::uint64_t seed,
                                             std::span<const std::byte> fill) {
  std::optional<PatternMismatch> found;
  for_each_piece(offset, buf.size(), [&](std::size_t done, std::uint64_t sector_off, std::size_t skip, std::size_t n) {
    const std::uint64_t pos = offset + done;
    Sector s;
    make_sector(sector_off, seed, s.data(), fill);
    const auto* want = reinterpret_cast<const std::byte*>(s.data());
    const std::byte* got = buf.data() + done;
    if (std::memcmp(want + skip, got, n) != 0) {
      std::size_t i = 0;
      while (want[skip + i] == got[i]) ++i;
      PatternMismatch m;
      m.offset = pos + i;
      m.word_offset = m.offset - m.offset % 8;
      // The whole word when the buffer holds it; the missing bytes count as expected.
      std::byte word[8];
      const std::size_t in_sector = m.word_offset - sector_off;
      std::memcpy(word, want + in_sector, 8);
      for (std::size_t k = 0; k < 8; ++k) {
        const std::uint64_t at = m.word_offset + k;
        if (at >= offset && at < offset + buf.size()) word[k] = buf[at - offset];
      }
      m.expected = load_word(want + in_sector);
      m.actual = load_word(word);
      if (skip == 0 && n >= 16) {
        m.header_read = true;
        m.stamped_offset = load_word(got);
        m.stamped_seed = load_word(got + 8);
        m.stamp = classify(got, n, fill);
      }
      found = m;
      return false;
    }
    return true;
  });
  return found;
}

std::string describe(const PatternMismatch& m, std::uint64_t seed) {
  char text[256];
  std::snprintf(text, sizeof text,
                "first mismatch at byte 0x%" PRIx64 ": expected 0x%016" PRIx64 ", read 0x%016" PRIx64
                " (8-byte word at 0x%" PRIx64 ")",
                m.offset, m.expected, m.actual, m.word_offset);
  std::string out = text;
  if (!m.header_read) return out;
  const std::uint64_t sector = m.offset - m.offset % pattern_sector;
  if (m.stamp == SectorStamp::zeros) {
    std::snprintf(text, sizeof text, "; the sector at 0x%" PRIx64 " holds no stamp (all zeros)", sector);
    out += text;
  } else if (m.stamped_offset == sector && m.stamped_seed == seed) {
    // Its own header: bits flipped in this sector, said by the offsets above.
  } else if (m.stamp == SectorStamp::valid) {
    std::snprintf(text, sizeof text,
                  "; the sector at 0x%" PRIx64 " holds the stamp of offset 0x%" PRIx64 ", seed %" PRIu64, sector,
                  m.stamped_offset, m.stamped_seed);
    out += text;
  } else {
    std::snprintf(text, sizeof text,
                  "; the sector at 0x%" PRIx64 " holds no valid stamp (its first 16 bytes read as offset 0x%" PRIx64
                  ", seed %" PRIu64 ", and the rest is not that pattern)",
                  sector, m.stamped_offset, m.stamped_seed);
    out += text;
  }
  return out;
}

}  // namespace bench
