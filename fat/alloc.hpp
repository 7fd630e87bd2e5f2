// Cluster allocation for writers: where new files go on a volume that may
// already hold files, decided in memory before anything is written.
//
// One pass over the FAT (FatTable::scan) finds every free cluster. Two
// structures come out of it:
//   - a ClusterBitmap of the clusters in use (one bit per cluster, the only
//     per-cluster memory), which is the truth about what is free;
//   - an index of free runs (first cluster, length), ordered by length, for
//     best fit. It is bounded (max_indexed_runs): on a volume whose free
//     space is shattered into more runs than that, the shortest runs are
//     left out of the index. The bitmap still knows them, and the fragment
//     path falls back to it once the indexed runs are used up.
//
// Policy (what fatfill's man page promises):
//   - contiguous first: the shortest free run that holds the request (best
//     fit, so large runs stay whole for large files); among runs of that
//     length, the first at or after the hint (the FSInfo next-free cluster,
//     moving past each allocation, wrapping at the end of the volume);
//   - otherwise fragments: the longest runs first, so the file has as few
//     fragments as the free space allows, the last piece again by best fit;
//     the pieces are handed out in cluster order, so the chain runs forward.
// The index never misleads a contiguity decision: a run left out is shorter
// than every run kept, so if no indexed run holds a request, no run does.
//
// Clusters handed out are never handed back: a writer frees clusters (a
// file it replaces) only after nothing on disk points at them, and does not
// reuse them in the same run. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fat/bitmap.hpp"
#include "fat/table.hpp"
#include "libfsio/result.hpp"

namespace fat {

// "1 cluster", "5 clusters": for messages.
std::string clusters_text(std::uint64_t n);

// Clusters first .. first + count - 1.
struct Extent {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::uint32_t end() const { return first + count; }
  bool operator==(const Extent&) const = default;
};

struct AllocatorOptions {
  std::size_t max_indexed_runs = std::size_t(1) << 20;  // ~48 MB of index at most
};

class Allocator {
 public:
  // Reads the FAT once. `hint` is where searches start (Volume::allocation_hint).
  static fsio::Result<Allocator> scan(FatTable& fat, std::uint32_t hint, const AllocatorOptions& options = {});
  // For tests and planners that know the free space already: `free_runs` in
  // any order, inside 2..cluster_count+1 and not overlapping (asserted).
  static Allocator from_runs(std::uint32_t cluster_count, const std::vector<Extent>& free_runs, std::uint32_t hint,
                             const AllocatorOptions& options = {});

  std::uint32_t free_clusters() const { return free_; }
  std::uint32_t longest_run() const;                 // 0 when the volume is full
  std::uint64_t free_runs() const { return runs_; }  // counted by the scan, before any allocation
  bool index_complete() const { return complete_; }
  bool is_free(std::uint32_t cluster) const { return !used_.test(cluster); }
  // The last cluster handed out (Linux keeps the same in FSI_Nxt_Free); the
  // starting hint when nothing was.
  std::uint32_t last_allocated() const { return last_; }

  // `count` consecutive clusters by best fit, or nullopt (nothing taken)
  // when no free run is that long. count must be at least 1.
  std::optional<Extent> take_contiguous(std::uint32_t count);
  // `count` clusters: one extent when a run holds them, else fragments as
  // described above, in cluster order. Errc::busy (nothing taken) when
  // fewer than `count` clusters are free, or when `contiguous_only` and no
  // run is long enough; the message gives the numbers.
  fsio::Result<std::vector<Extent>> take(std::uint32_t count, bool contiguous_only);

 private:
  Allocator(std::uint32_t cluster_count, std::uint32_t hint, const AllocatorOptions& options);
  void add_run(std::uint32_t first, std::uint32_t count);
  Extent carve(std::set<std::pair<std::uint32_t, std::uint32_t>>::iterator it, std::uint32_t count);
  std::vector<Extent> take_fragments(std::uint32_t count);
  void take_from_bitmap(std::uint32_t count, std::vector<Extent>& out);

  std::uint32_t cluster_count_;
  std::size_t max_runs_;
  ClusterBitmap used_;                                       // entries 0..cluster_count+1; set = not free
  std::set<std::pair<std::uint32_t, std::uint32_t>> index_;  // (length, first)
  std::uint32_t free_ = 0;
  std::uint64_t runs_ = 0;
  bool complete_ = true;
  std::uint32_t hint_;
  std::uint32_t last_;
};

}  // namespace fat
