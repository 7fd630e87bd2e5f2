// crc32c at hardware speed with a portable fallback.
//
// Polynomial 0x1EDC6F41, reflected 0x82F63B78 (RFC 3720 appendix B.4).
// The SSE4.2 crc32 instruction computes exactly one update step of this
// reflected CRC with no inversions, so it matches the "raw" convention ext4
// uses. The table path is slicing-by-8: eight 256-entry tables, one 64-bit
// load per step.
#include "libfsio/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace fsio {
namespace {

constexpr std::uint32_t kPoly32c = 0x82F63B78;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly32c : c >> 1;
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}

constexpr Tables kTables = make_tables();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t hw(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  std::uint64_t c = crc;
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(std::uint32_t(c), *p++);
    --n;
  }
  while (n >= 32) {
    std::uint64_t w[4];
    std::memcpy(w, p, 32);
    c = _mm_crc32_u64(c, w[0]);
    c = _mm_crc32_u64(c, w[1]);
    c = _mm_crc32_u64(c, w[2]);
    c = _mm_crc32_u64(c, w[3]);
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(std::uint32_t(c), *p++);
    --n;
  }
  return std::uint32_t(c);
}

bool detect() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#else
std::uint32_t hw(std::uint32_t crc, const unsigned char*, std::size_t) { return crc; }
bool detect() { return false; }
#endif

const bool kHaveHw = detect();

}  // namespace

std::uint32_t crc32c_raw_table(std::uint32_t crc, const void* data, std::size_t n) {
  auto* p = static_cast<const unsigned char*>(data);
  while (n >= 8) {
    std::uint32_t lo =
        crc ^ (std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24);
    crc = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^ kTables[4][lo >> 24] ^
          kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^ kTables[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFF];
  return crc;
}

bool crc32c_hardware_available() { return kHaveHw; }

std::uint32_t crc32c_raw_hw(std::uint32_t crc, const void* data, std::size_t len) {
  return hw(crc, static_cast<const unsigned char*>(data), len);
}

std::uint32_t crc32c_raw(std::uint32_t crc, const void* data, std::size_t len) {
  return kHaveHw ? hw(crc, static_cast<const unsigned char*>(data), len) : crc32c_raw_table(crc, data, len);
}

std::uint32_t crc32c_raw(std::uint32_t crc, std::span<const std::byte> data) {
  return crc32c_raw(crc, data.data(), data.size());
}

std::uint32_t crc32c_raw_le32(std::uint32_t crc, std::uint32_t value) {
  const unsigned char b[4] = {static_cast<unsigned char>(value), static_cast<unsigned char>(value >> 8),
                              static_cast<unsigned char>(value >> 16), static_cast<unsigned char>(value >> 24)};
  return crc32c_raw(crc, b, 4);
}

}  // namespace fsio
