// The jbd2 journal superblock (journal.rst): big-endian, in the first block
// of the journal inode (s_journal_inum, normally 8). Only what the write
// gate needs: a journal whose s_start is not zero holds transactions the
// kernel will replay at the next mount, over anything we write.
#pragma once

#include <cstdint>
#include <span>

#include "libfsio/result.hpp"

namespace ext {

inline constexpr std::uint32_t kJbd2Magic = 0xC03B3998;  // h_magic
inline constexpr std::uint32_t kJbd2SuperblockV1 = 3;    // h_blocktype
inline constexpr std::uint32_t kJbd2SuperblockV2 = 4;
inline constexpr std::size_t kJbd2StartOffset = 0x1C;  // s_start: first block of the log, 0 = clean

// Reads a big-endian 32-bit field (jbd2 is the one big-endian structure).
inline std::uint32_t load_be32(std::span<const std::byte> b, std::size_t at) {
  return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 | std::uint32_t(b[at + 2]) << 8 |
         std::uint32_t(b[at + 3]);
}

// Errc::corrupt for a block that is not a jbd2 superblock; Errc::busy
// ("the journal holds transactions to replay (s_start N)") when dirty.
fsio::Status check_journal_clean(std::span<const std::byte> journal_block0);

}  // namespace ext
