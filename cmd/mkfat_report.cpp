// What mkfat prints (see mkfat_report.hpp).
#include "cmd/mkfat_report.hpp"

#include <cinttypes>
#include <cstdio>

#include "cmd/common.hpp"
#include "cmd/fat_common.hpp"
#include "fat/label.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

const char* s(std::uint64_t n) { return n == 1 ? "" : "s"; }

}  // namespace

std::string verbose_text(const MkfatArgs& a, const fat::Geometry& g, std::uint32_t volume_id) {
  std::string out;
  char line[256];
  auto add = [&](int) { out += line; };
  if (g.auto_fat32) out += "Auto-selecting FAT32 for large filesystem\n";
  if (g.write_mbr) out += "Adding MBR table\n";
  add(std::snprintf(line, sizeof line, "%s has %u head%s and %u sector%s per track,\n", a.target.c_str(), g.heads,
                    s(g.heads), g.sectors_per_track, s(g.sectors_per_track)));
  add(std::snprintf(line, sizeof line, "hidden sectors 0x%04x;\n", g.hidden_sectors));
  add(std::snprintf(line, sizeof line, "logical sector size is %u,\n", g.sector_size));
  add(std::snprintf(line, sizeof line, "using 0x%02x media descriptor, with %u sectors;\n", g.media, g.total_sectors));
  add(std::snprintf(line, sizeof line, "drive number 0x%02x;\n", g.drive_number));
  const unsigned bits = unsigned(g.type);
  add(std::snprintf(line, sizeof line, "filesystem has %u %u-bit FAT%s and %u sector%s per cluster.\n", g.num_fats,
                    bits, s(g.num_fats), g.sectors_per_cluster, s(g.sectors_per_cluster)));
  add(std::snprintf(line, sizeof line, "FAT size is %u sector%s, and provides %u cluster%s.\n", g.fat_sectors,
                    s(g.fat_sectors), g.cluster_count, s(g.cluster_count)));
  add(std::snprintf(line, sizeof line, "There %s %u reserved sector%s.\n", g.reserved_sectors == 1 ? "is" : "are",
                    g.reserved_sectors, s(g.reserved_sectors)));
  if (g.type != fat::FatType::fat32)
    add(std::snprintf(line, sizeof line, "Root directory contains %u slots and uses %u sectors.\n", g.root_entries,
                      g.root_dir_sectors()));
  add(std::snprintf(line, sizeof line, "Volume ID is %08x, ", g.atari ? volume_id & 0xFFFFFF : volume_id));
  const bool named = a.label.find_first_not_of(' ') != std::string::npos && a.label != "NO NAME";
  out += named ? "volume label " + a.label + ".\n" : "no volume label.\n";
  return out;
}

void print_summary(const std::string& target, const fat::Layout& layout, bool dry_run) {
  std::printf("%s%s: %s\n", dry_run ? "would format " : "", target.c_str(), layout_summary(layout).c_str());
}

void print_result(const MkfatArgs& a, const fat::Layout& layout, const fat::FormatReport& rep, IoQueue& queue) {
  print_summary(a.target, layout, false);
  std::printf("volume id %s%s%s\n", fat::format_volume_id(rep.volume_id).c_str(), rep.label.empty() ? "" : ", label ",
              rep.label.c_str());
  if (rep.bytes_wiped) std::printf("wiped %" PRIu64 " bytes of foreign signatures\n", rep.bytes_wiped);
  if (rep.bad_clusters) std::printf("marked %" PRIu64 " bad cluster%s\n", rep.bad_clusters, s(rep.bad_clusters));
  if (!a.stats) return;
  const auto& st = queue.stats();
  std::printf("stats: %" PRIu64 " requests queued, %" PRIu64 " submitted after merging, %" PRIu64
              " syscalls, %s written, %s read, %" PRIu64 " flushes, %.3f s (%s engine, %s)\n",
              st.requests_queued, st.requests_submitted, st.syscalls, format_size(st.bytes_written).c_str(),
              format_size(st.bytes_read).c_str(), st.flushes, st.elapsed_seconds, queue.engine().name(),
              queue.device().direct() ? "direct" : "buffered");
}

nlohmann::json plan_json(const MkfatArgs& a, const fat::Geometry& g, const std::vector<Signature>& sigs) {
  nlohmann::json found = nlohmann::json::array();
  for (const auto& sig : sigs)
    found.push_back({{"type", sig.type}, {"usage", sig.usage}, {"offset", sig.offset}, {"label", sig.label}});
  return {{"target", a.target},
          {"dry_run", a.dry_run},
          {"geometry", layout_json(g)},
          {"warnings", g.warnings},
          {"variant", g.atari ? "atari" : "standard"},
          {"mbr", g.write_mbr},
          {a.dry_run ? "would_overwrite" : "overwritten", found}};
}

void add_result_json(nlohmann::json& out, const fat::FormatReport& rep, IoQueue& queue) {
  out["volume_id"] = fat::format_volume_id(rep.volume_id);
  out["label"] = rep.label;
  out["bytes_written"] = rep.bytes_written;
  out["bytes_wiped"] = rep.bytes_wiped;
  out["bad_clusters"] = rep.bad_clusters;
  out["stats"] = to_json(queue.stats());
  out["engine"] = queue.engine().name();
  out["direct"] = queue.device().direct();
}

}  // namespace fsio::cli
