#include "ext/journal.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>

namespace ext {

fsio::Status check_journal_clean(std::span<const std::byte> b) {
  if (b.size() < 1024) return fsio::make_error(fsio::Errc::corrupt, "ext journal: superblock block too small");
  const std::uint32_t magic = load_be32(b, 0);
  const std::uint32_t type = load_be32(b, 4);
  if (magic != kJbd2Magic) {
    char m[16];
    std::snprintf(m, sizeof m, "0x%08" PRIX32, magic);
    return fsio::make_error(fsio::Errc::corrupt,
                            std::string("ext journal: bad h_magic ") + m + " in its first block (expected 0xC03B3998)");
  }
  if (type != kJbd2SuperblockV1 && type != kJbd2SuperblockV2)
    return fsio::make_error(fsio::Errc::corrupt, "ext journal: h_blocktype " + std::to_string(type) +
                                                     " is not a journal superblock (3 or 4)");
  if (const std::uint32_t start = load_be32(b, kJbd2StartOffset); start != 0)
    return fsio::make_error(fsio::Errc::busy,
                            "ext: refusing to write: the journal holds transactions to replay (s_start " +
                                std::to_string(start) + "); mount it once or run e2fsck");
  return {};
}

}  // namespace ext
