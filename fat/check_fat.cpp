// The checker's passes over the whole FAT: the copies against the one read,
// and the closing pass after the directory walk (out-of-range entries, lost
// clusters, the free count). Both stream the table (FatTable::scan and
// compare_copies), so a 268 MB FAT32 table costs a few dozen large reads and
// no memory beyond the bitmaps.
#include <algorithm>

#include "fat/check_impl.hpp"

namespace fat::detail {

// fsck.fat read_fat compares the two copies byte for byte and, repairing,
// writes the first over the second ("FATs differ but appear to be intact.
// Using first FAT."). We compare every copy with the one read, in the
// closing pass; the findings go first, where fsck.fat prints them.
void Checker::copy_findings(const std::vector<CopyMismatch>& diffs) {
  if (l_.num_fats < 2) {
    checked("FAT copies: 1, nothing to compare");
    return;
  }
  const std::size_t before = result_.findings.size();
  const std::uint32_t from = fat_.read_copy();
  for (const CopyMismatch& m : diffs)
    error(CheckKind::copies_differ, "FAT copy " + std::to_string(m.copy),
          "FATs differ: copy " + std::to_string(m.copy) + " differs from copy " + std::to_string(from) + " in " +
              plural(m.entries, "entry", "entries") + ", the first at entry " + std::to_string(m.first_entry) +
              " (sector " + std::to_string(m.first_sector) + " of the copy).",
          "Using copy " + std::to_string(from) + ": writing it over copy " + std::to_string(m.copy) + ".");
  std::rotate(result_.findings.begin() + std::ptrdiff_t(after_boot_), result_.findings.begin() + std::ptrdiff_t(before),
              result_.findings.end());
  if (!diffs.empty()) plan_.mirror_from = from;
  checked("FAT copies: " + std::to_string(l_.num_fats) + " compared, " +
          (diffs.empty() ? std::string("identical") : plural(diffs.size(), "copy", "copies") + " differing"));
}

void Checker::cut(std::uint32_t entry) {
  if (plan_.cut.size() == 0) plan_.cut = ClusterBitmap(l_.entry_count());
  plan_.cut.set(entry);
}

// fsck.fat read_fat (copies compared; out of range: "Setting to EOF"),
// reclaim_free (entries no file owns are freed) and update_free (the free
// count is every cluster not owned and not bad), in one streamed pass that
// reads every copy once.
fsio::Status Checker::closing_pass() {
  auto& c = result_.counts;
  FreeTally tally;
  const auto diffs = FSIO_TRY(fat_.scan_and_compare(
      [&](std::uint32_t at, std::span<const std::uint32_t> values) {
        for (std::size_t i = 0; i < values.size(); ++i) closing_entry(at + std::uint32_t(i), values[i], tally);
        const std::uint64_t bytes = entries_bytes(l_.type, values.size()) * l_.num_fats;
        c.fat_bytes_read += bytes;
        advance(bytes);
        return poll().has_value();
      },
      2));
  FSIO_TRY(poll());
  copy_findings(diffs);
  // Lost chains become files (fsck.fat -a, -f) only when every directory
  // was read whole: otherwise they may belong to one we could not read.
  const bool salvage = c.lost && opt_.salvage && tree_whole_;
  if (salvage) {
    count_lost_chains();
    salvage_lost();
    lost_links_ = {};
  }
  settle_counts(tally);
  if (c.lost && !salvage) lost_finding();
  c.recovered_files = recovered_files_;
  checked("clusters: " + std::to_string(c.used) + " in use, " + std::to_string(c.bad) + " bad, " +
          std::to_string(c.lost) + " lost, " + std::to_string(c.free_after) + " free once repaired, of " +
          std::to_string(c.clusters));
  return {};
}

// Entry n, holding v: free, bad, out of range (cut), owned by a file, cut
// off a file that outgrew its size, or lost.
void Checker::closing_entry(std::uint32_t n, std::uint32_t v, FreeTally& t) {
  const std::uint64_t max = std::uint64_t(l_.cluster_count) + 1;
  auto& c = result_.counts;
  if (v == 0) {
    ++t.free_disk;
    if (!t.first_free) t.first_free = n;
    return;
  }
  const EntryKind kind = classify(l_.type, v);
  if (kind == EntryKind::bad) {
    ++bad_;
    return;
  }
  if (kind == EntryKind::reserved || (kind == EntryKind::next && v > max)) {
    error(CheckKind::out_of_range, "cluster " + std::to_string(n),
          "Cluster " + std::to_string(n) + " out of range (" + std::to_string(v) + " > " + std::to_string(max) + ").",
          "Setting to EOF.");
    cut(n);
  }
  if (owned_.test(n)) return;
  if (!t.first_unowned) t.first_unowned = n;
  if (tail_.size() && tail_.test(n)) {
    ++c.cut_off;
    return;
  }
  if (lost_.size() == 0) {
    lost_ = ClusterBitmap(l_.entry_count());
    referenced_ = ClusterBitmap(l_.entry_count());
  }
  ++c.lost;
  lost_.set(n);
  if (opt_.salvage) lost_links_.emplace_back(n, v);
  if (kind == EntryKind::next && l_.is_cluster(v)) referenced_.set(v);
}

// The counts once the plan is carried out, and the first free cluster then.
void Checker::settle_counts(const FreeTally& t) {
  auto& c = result_.counts;
  c.used = owned_.count();
  c.bad = bad_;
  // Reclaiming is safe only when every directory was read whole: a cluster
  // we saw no owner for may belong to a file in a part we could not read.
  plan_.reclaim = tree_whole_ && (c.lost || c.cut_off);
  c.free_after = tree_whole_ ? c.clusters - c.used - c.bad : t.free_disk;
  first_free_after_ = tree_whole_ && t.first_unowned && (!t.first_free || t.first_unowned < t.first_free)
                          ? t.first_unowned
                          : t.first_free;
}

// fsck.fat reclaim_free's finding: the lost clusters, in how many chains.
void Checker::lost_finding() {
  auto& c = result_.counts;
  count_lost_chains();
  const std::string what = plural(c.lost, "unused cluster") + " (" + std::to_string(c.lost * l_.cluster_bytes()) +
                           " bytes) in " + (c.lost_chains ? plural(c.lost_chains, "chain") : std::string("loops")) +
                           ": allocated, but no file or directory owns them.";
  if (tree_whole_) error(CheckKind::lost_clusters, "FAT", what, "Reclaimed: freeing them.");
  else
    add(CheckKind::lost_clusters, Severity::error, "FAT", what,
        "Not freeing them: part of the directory tree could not be read (see above), and they may belong there.");
}

// A lost chain starts at a lost cluster no other lost cluster points to;
// lost clusters that only point at each other are loops.
void Checker::count_lost_chains() {
  std::uint64_t heads = 0;
  for (std::uint32_t n = lost_.next_set(2); n < lost_.size(); n = lost_.next_set(n + 1)) heads += !referenced_.test(n);
  result_.counts.lost_chains = heads;
}

}  // namespace fat::detail
