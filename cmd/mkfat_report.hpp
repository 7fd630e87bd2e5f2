// What mkfat prints: mkfs.fat -v's lines, the one-line summary, the result
// and the --json document. All of it comes from fat::Layout (fat_common.hpp)
// and the format's report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/mkfat_args.hpp"
#include "fat/format.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/signatures.hpp"

namespace fsio::cli {

// mkfs.fat 4.2 -v's lines after its version line, in its order and words:
// "Auto-selecting FAT32 for large filesystem", "Adding MBR table", then
// "TARGET has 8 heads and 32 sectors per track," ... "Volume ID is 1234abcd,
// no volume label."
std::string verbose_text(const MkfatArgs& a, const fat::Geometry& g, std::uint32_t volume_id);

// "would format TARGET: FAT16, ..." / "TARGET: FAT16, ..."
void print_summary(const std::string& target, const fat::Layout& layout, bool dry_run);

// After a format: summary, volume id and label, wipes, bad clusters, --stats.
void print_result(const MkfatArgs& a, const fat::Layout& layout, const fat::FormatReport& rep, IoQueue& queue);

// The --json document's fields for the plan (target, dry_run, geometry,
// warnings, would_overwrite / overwritten).
nlohmann::json plan_json(const MkfatArgs& a, const fat::Geometry& g, const std::vector<Signature>& sigs);

// Adds what the format did.
void add_result_json(nlohmann::json& out, const fat::FormatReport& rep, IoQueue& queue);

}  // namespace fsio::cli
