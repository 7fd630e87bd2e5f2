// Checksums of ext4 metadata: crc32c (libfsio's, seeded as ext4 does) and
// crc16 (gdt_csum).
//
// The superblock seeds crc32c with ~0; every other object starts from the
// filesystem seed (see Superblock::csum_seed).
#pragma once

#include <cstdint>
#include <span>

#include "libfsio/crc32c.hpp"

namespace ext {

using fsio::crc32c_raw;
using fsio::crc32c_raw_le32;

// CRC-16 with the reflected polynomial 0x8005 (0xA001), no final xor:
// e2fsprogs' ext2fs_crc16, used by gdt_csum (uninit_bg) descriptors.
std::uint16_t crc16(std::uint16_t crc, std::span<const std::byte> data);

}  // namespace ext
