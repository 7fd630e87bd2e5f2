// crc16 (gdt_csum) against its published check value.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "ext/crc.hpp"

namespace ext {
namespace {

TEST(Crc16, ModbusCheckValue) {
  // Reflected 0x8005 from 0xFFFF without final xor is CRC-16/MODBUS: check 0x4B37.
  const std::string s = "123456789";
  EXPECT_EQ(crc16(0xFFFF, std::as_bytes(std::span(s.data(), s.size()))), 0x4B37);
}

}  // namespace
}  // namespace ext
