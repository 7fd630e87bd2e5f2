#include "cmd/fat_common.hpp"

#include "libfsio/size.hpp"

namespace fsio::cli {

nlohmann::json layout_json(const fat::Layout& layout) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : fat::layout_fields(layout)) std::visit([&](const auto& v) { out[f.name] = v; }, f.value);
  return out;
}

std::string layout_summary(const fat::Layout& l) {
  const std::uint32_t n = l.num_fats;
  std::string s = std::string(fat::fat_type_name(l.type)) + ", " + fsio::format_size(l.filesystem_bytes()) + " in " +
                  std::to_string(l.cluster_count) + " clusters of " + fsio::format_size(l.cluster_bytes()) + ", " +
                  std::to_string(n) + " FAT" + (n == 1 ? "" : "s") + " of " + std::to_string(l.fat_sectors) +
                  " sectors, " + std::to_string(l.reserved_sectors) + " reserved sectors";
  if (l.root_entries) s += ", " + std::to_string(l.root_entries) + " root entries";
  return s + ", " + std::to_string(l.sector_size) + "-byte sectors";
}

}  // namespace fsio::cli
