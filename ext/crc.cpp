// crc16 for gdt_csum descriptors: reflected 0x8005 (0xA001), one table.
#include "ext/crc.hpp"

#include <array>

namespace ext {
namespace {

constexpr std::uint16_t kPoly16 = 0xA001;

constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly16 : c >> 1;
    t[i] = std::uint16_t(c);
  }
  return t;
}

constexpr auto kCrc16 = make_crc16_table();

}  // namespace

std::uint16_t crc16(std::uint16_t crc, std::span<const std::byte> data) {
  for (std::byte b : data) crc = std::uint16_t((crc >> 8) ^ kCrc16[(crc ^ std::uint8_t(b)) & 0xFF]);
  return crc;
}

}  // namespace ext
