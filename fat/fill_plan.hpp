// The plan fill() makes before writing, and the two steps that make and
// carry it out (fill_plan.cpp, fill_write.cpp). Internal to fill: tools use
// fill.hpp.
//
// A plan is a list of items, new directories first (outermost first), then
// the files in the order given. Each item says where its name goes (slot
// index and the clusters its directory grows by first) and which clusters
// it gets. Planning edits copies of the directories in memory to find
// slots; writing opens the directories afresh and repeats the same edits,
// which land on the same slots because they start from the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fat/alloc.hpp"
#include "fat/directory.hpp"
#include "fat/fill.hpp"

namespace fat::fill_detail {

struct DirRef {
  std::string path;           // "/" for the root
  std::uint32_t cluster = 0;  // first cluster; 0 for the FAT12/16 root region
  bool root = false;
  bool created = false;  // made by this run
};

struct Item {
  enum class Kind { directory, file };
  Kind kind = Kind::file;
  std::size_t parent = 0;  // DirRef whose directory gets the name
  std::string name;
  std::uint32_t slot = 0;             // first slot of the name (replacing: the 8.3 entry's)
  ShortName short_name{};             // as planned; writing checks it comes out the same
  std::vector<std::uint32_t> growth;  // clusters the parent grows by before the name fits
  std::vector<Extent> extents;        // a file's clusters, or a new directory's one cluster
  std::uint32_t size = 0;
  std::size_t self = 0;             // directory items: their DirRef
  std::size_t file = 0;             // file items: index into FillReport::files
  bool replace = false;             // an existing file's entry is rewritten in place
  std::vector<Extent> old_extents;  // its old chain, freed once the new entry is durable
};

struct Plan {
  std::vector<DirRef> dirs;
  std::vector<Item> items;
};

// Checks the volume, resolves the directory path, places every name and
// allocates every cluster, filling the plan parts of the report. Writes
// nothing.
fsio::Result<Plan> make_plan(Volume& volume, const FillOptions& options, FillReport& report);

// Refuses (Errc::corrupt, naming both files) when another entry's chain
// reaches a cluster a replaced file's old chain would free (fill_shared.cpp).
fsio::Status check_unshared(Volume& volume, const Plan& plan);

// Carries the plan out in the order fill.hpp describes.
fsio::Status write_plan(Volume& volume, const FillOptions& options, const Plan& plan, FillReport& report,
                        fsio::Progress* progress);

// Shared by both: the slots `name` gets in `dir` as it stands (make_name
// against the short names in use), and the clusters a file of `size` needs.
fsio::Result<NameSlots> name_slots(Directory& dir, const std::string& name);
// "/DIR" + "NAME" -> "/DIR/NAME"; "/" + "NAME" -> "/NAME".
inline std::string join(const std::string& dir, const std::string& name) {
  return (dir == "/" ? "" : dir) + "/" + name;
}
std::uint32_t clusters_for(const Layout& layout, std::uint64_t size);

}  // namespace fat::fill_detail
