// What the FAT tools (mkfat, and the tools that read a volume) print about a
// volume's layout. Both views come from fat::layout_fields(), so text, --json
// and the man pages cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fat/layout.hpp"

namespace fsio::cli {

// {"fat_type": "FAT32", "sector_size": 512, ...}: every layout field, in order.
nlohmann::json layout_json(const fat::Layout& layout);

// "FAT32, 600 MiB in 153280 clusters of 4 KiB, 2 FATs of 1200 sectors, 32
// reserved sectors, 512-byte sectors" (root entries only on FAT12/16).
std::string layout_summary(const fat::Layout& layout);

}  // namespace fsio::cli
