// The htree name hash (directory.rst "Hash Tree Directories", the kernel's
// fs/ext4/hash.c): legacy, half-MD4 and TEA, each with signed or unsigned
// chars, seeded by s_hash_seed (the MD4 initial state when the seed is 0).
// The low bit of the major hash is always 0: dx entries use it to mark a
// run of equal hashes continued in the next block.
#pragma once

#include <cstdint>
#include <string_view>

#include "libfsio/result.hpp"

namespace ext {

enum DxHashVersion : std::uint8_t {
  DX_HASH_LEGACY = 0,
  DX_HASH_HALF_MD4 = 1,
  DX_HASH_TEA = 2,
  DX_HASH_LEGACY_UNSIGNED = 3,
  DX_HASH_HALF_MD4_UNSIGNED = 4,
  DX_HASH_TEA_UNSIGNED = 5,
  DX_HASH_SIPHASH = 6,
};

struct DxHash {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
};

// `version` as used (unsigned variants already applied); Errc::unsupported
// for siphash (casefolded/encrypted directories) and unknown versions.
fsio::Result<DxHash> dx_hash(std::string_view name, std::uint8_t version, const std::uint32_t (&seed)[4]);

// The version a directory's dx_root names, turned unsigned when the
// superblock says chars are unsigned (s_flags EXT2_FLAGS_UNSIGNED_HASH).
inline std::uint8_t effective_hash_version(std::uint8_t stored, bool unsigned_hash) {
  return stored <= DX_HASH_TEA && unsigned_hash ? std::uint8_t(stored + 3) : stored;
}

}  // namespace ext
