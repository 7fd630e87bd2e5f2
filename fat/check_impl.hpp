// The checker behind check_volume (check.hpp), shared by its files:
// check.cpp (the steps, boot area, FSInfo, label), check_fat.cpp (copies
// and the closing FAT pass), check_tree.cpp (the directory walk),
// check_entry.cpp (one entry's chain and the slot edits). Internal to fat/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fat/bitmap.hpp"
#include "fat/check.hpp"
#include "fat/directory.hpp"

namespace fat::detail {

// DIR_NTRes bit a patched Linux sets on an entry whose 8.3 name is only a
// placeholder for its long name (fsck.fat FAT_NO_83NAME).
inline constexpr std::uint8_t kNoShortName = 0x20;

// A directory waiting to be checked.
struct DirVisit {
  std::string path;                 // "" for the root, "/DIR/SUB"
  std::uint32_t cluster = 0;        // first cluster; 0 for the FAT12/16 root region
  std::uint32_t parent = 0;         // what ".." must hold (0 when the parent is the root)
  std::uint32_t keep_clusters = 0;  // only this many clusters are its own (cut); 0: all
  bool root = false;
};

class Checker {
 public:
  Checker(Volume& volume, const CheckOptions& options, CheckResult& result);
  fsio::Status run();

  // ---- check.cpp ----
  void add(CheckKind kind, Severity severity, std::string where, std::string message, std::string action = {},
           bool fixable = false);
  void error(CheckKind kind, std::string where, std::string message, std::string action) {
    add(kind, Severity::error, std::move(where), std::move(message), std::move(action), true);
  }
  void checked(std::string line) { result_.checked.push_back(std::move(line)); }
  fsio::Status poll() const;          // Errc::interrupted when Ctrl-C came
  void advance(std::uint64_t bytes);  // progress, in FAT bytes

 private:
  void boot_area();
  void volume_findings();
  void dirty_finding();
  void reserved_entries();
  void fsinfo();
  void label();

  // ---- check_fat.cpp ----
  void copy_findings(const std::vector<CopyMismatch>& diffs);
  // What the closing pass counts of the FAT as it is on disk.
  struct FreeTally {
    std::uint64_t free_disk = 0;
    std::uint32_t first_free = 0, first_unowned = 0;
  };
  fsio::Status closing_pass();
  void closing_entry(std::uint32_t n, std::uint32_t v, FreeTally& t);
  void settle_counts(const FreeTally& t);
  void lost_finding();
  void count_lost_chains();

  // ---- check_salvage.cpp ----
  void salvage_lost();
  void claim_heads(const std::vector<std::uint32_t>& cluster, std::vector<std::uint32_t>& next,
                   std::vector<std::uint32_t>& refs, std::vector<bool>& claimed, std::uint32_t from);
  void recover_files(const std::vector<std::uint32_t>& cluster, const std::vector<std::uint32_t>& next,
                     const std::vector<std::uint32_t>& refs);
  std::optional<std::uint32_t> free_root_slot(Directory& root, std::uint32_t from);
  ShortName rec_name(Directory& root, std::uint32_t& number);
  SlotBytes planned_slot(const Directory& dir, std::uint32_t index) const;

  // ---- check_tree.cpp ----
  fsio::Status walk_tree();
  fsio::Status own_root(DirVisit& root);
  fsio::Status check_directory(const DirVisit& visit, std::vector<DirVisit>& subdirs);
  void check_dots(Directory& dir, const DirVisit& visit);
  void move_down(Directory& dir, const DirVisit& visit, std::uint32_t k, const ShortName& want, std::uint32_t start);
  void check_lfn(Directory& dir, const DirVisit& visit, std::uint32_t limit);
  void check_names(Directory& dir, const DirVisit& visit, std::uint32_t limit);
  fsio::Status check_after_end(Directory& dir, const DirVisit& visit, std::uint32_t limit);
  fsio::Status name_first_owners();

  // ---- check_entry.cpp ----
  // Checks an entry's first cluster and chain, owns its clusters; a
  // directory to descend into comes back.
  fsio::Result<std::optional<DirVisit>> check_entry(Directory& dir, const DirVisit& in, const Entry& entry);
  struct Walk {
    std::uint32_t kept = 0;     // clusters the entry keeps
    std::uint32_t last = 0;     // the last of them
    bool cut = false;           // cut while visiting (too long, or crossed)
    std::uint32_t crossed = 0;  // the first cluster another chain owned
    Chain chain;
  };
  fsio::Result<Walk> own_chain(std::uint32_t first, std::uint64_t needed);
  bool chain_findings(const std::string& where, const Walk& walk);
  std::optional<std::uint32_t> first_cluster(const Directory& dir, const DirVisit& in, const Entry& entry,
                                             const std::string& path, bool is_dir);
  void cut_findings(const std::string& path, const Entry& entry, const Walk& walk, bool is_dir);
  void cut(std::uint32_t entry);
  void delete_entry(const Directory& dir, const Entry& entry);
  SlotBytes& slot(const Directory& dir, std::uint32_t index);
  void set_size(const Directory& dir, const Entry& entry, std::uint32_t size);
  void set_start(const Directory& dir, std::uint32_t index, std::uint32_t cluster);

  Volume& vol_;
  const Layout& l_;
  FatTable& fat_;
  const CheckOptions& opt_;
  CheckResult& result_;
  RepairPlan& plan_;
  ClusterBitmap& owned_;             // plan_.owned
  ClusterBitmap tail_;               // cut off files that outgrew their size
  ClusterBitmap lost_, referenced_;  // the closing pass's lost clusters and their targets
  // With CheckOptions::salvage: each lost cluster and its FAT entry, ascending.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> lost_links_;
  std::uint64_t recovered_files_ = 0;
  std::uint64_t bad_ = 0;
  std::uint32_t first_free_after_ = 0;  // first cluster free once the plan is done
  bool tree_whole_ = true;              // every directory read whole: reclaim is safe
  std::optional<std::array<std::uint8_t, 11>> root_label_;
  std::uint64_t root_label_offset_ = 0;
  // Clusters where a second file crossed into an earlier one's chain, with
  // the second's path: the first is named by a second walk (no owner map).
  struct Crossing {
    std::uint32_t cluster;
    std::string second;
    std::size_t finding;  // index in result_.findings
  };
  std::vector<Crossing> crossings_;
  std::array<std::size_t, kCheckKinds> kept_{};  // findings kept, by kind
  std::size_t after_boot_ = 0;                   // where the FAT's findings go
  std::uint64_t done_ = 0;
};

// "1 cluster", "3 clusters"; `many` for irregular plurals ("copies").
std::string plural(std::uint64_t n, const char* word, const char* many = nullptr);

}  // namespace fat::detail
