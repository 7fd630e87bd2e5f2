// crc32c (Castagnoli), the checksum of ext4's metadata and of fsimg's
// stream records.
//
// The "raw" form: the register starts at the caller's seed and is returned
// without the final inversion (e2fsprogs' ext2fs_crc32c_le, the kernel's
// crc32c_le). The standard CRC-32C of RFC 3720 is ~crc32c_raw(~0, data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fsio {

// crc32c update without pre/post inversion; SSE4.2's crc32 instruction when
// the CPU has it (checked once at run time), else a slicing-by-8 table.
std::uint32_t crc32c_raw(std::uint32_t crc, std::span<const std::byte> data);
std::uint32_t crc32c_raw(std::uint32_t crc, const void* data, std::size_t len);
// The same over a little-endian 32-bit number (inode number, group, generation).
std::uint32_t crc32c_raw_le32(std::uint32_t crc, std::uint32_t value);

// The portable and the hardware path, for tests that compare them.
std::uint32_t crc32c_raw_table(std::uint32_t crc, const void* data, std::size_t len);
bool crc32c_hardware_available();
std::uint32_t crc32c_raw_hw(std::uint32_t crc, const void* data, std::size_t len);  // only if available

}  // namespace fsio
