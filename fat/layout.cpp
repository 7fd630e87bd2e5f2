// The layout's one field list (see layout.hpp).
#include "fat/layout.hpp"

namespace fat {

std::vector<LayoutField> layout_fields(const Layout& l) {
  return {
      {"fat_type", std::string(fat_type_name(l.type))},
      {"sector_size", l.sector_size},
      {"cluster_bytes", l.cluster_bytes()},
      {"sectors_per_cluster", l.sectors_per_cluster},
      {"cluster_count", l.cluster_count},
      {"total_sectors", l.total_sectors},
      {"filesystem_bytes", l.filesystem_bytes()},
      {"data_bytes", l.data_bytes()},
      {"reserved_sectors", l.reserved_sectors},
      {"num_fats", l.num_fats},
      {"fat_sectors", l.fat_sectors},
      {"root_entries", l.root_entries},
      {"data_start_sector", l.data_start_sector()},
      {"hidden_sectors", l.hidden_sectors},
      {"heads", l.heads},
      {"sectors_per_track", l.sectors_per_track},
      {"media", l.media},
      {"fsinfo_sector", l.fsinfo_sector},
      {"backup_boot_sector", l.backup_boot_sector},
      {"offset_bytes", l.offset_bytes},
  };
}

}  // namespace fat
