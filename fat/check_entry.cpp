// One directory entry's first cluster and chain, checked the way fsck.fat's
// check_file and test_file do, with the slot edits fsck.fat -a makes: the
// chain is owned in the ClusterBitmap as it is walked, cut where fsck.fat
// cuts it, and the size or first cluster fixed to match.
#include <cstring>

#include "fat/check_impl.hpp"

namespace fat::detail {

namespace {

void put16(SlotBytes& s, std::size_t at, std::uint32_t v) {
  s[at] = std::uint8_t(v);
  s[at + 1] = std::uint8_t(v >> 8);
}

}  // namespace

SlotBytes& Checker::slot(const Directory& dir, std::uint32_t index) {
  const auto [it, inserted] = plan_.slots.try_emplace(dir.position(index).device_offset);
  if (inserted) std::memcpy(it->second.data(), dir.slot(index).data(), 32);
  return it->second;
}

void Checker::set_size(const Directory& dir, const Entry& entry, std::uint32_t size) {
  SlotBytes& s = slot(dir, entry.slot);
  put16(s, 28, size & 0xFFFF);  // DIR_FileSize
  put16(s, 30, size >> 16);
}

void Checker::set_start(const Directory& dir, std::uint32_t index, std::uint32_t cluster) {
  SlotBytes& s = slot(dir, index);
  put16(s, 26, cluster & 0xFFFF);                              // DIR_FstClusLO
  if (l_.type == FatType::fat32) put16(s, 20, cluster >> 16);  // DIR_FstClusHI
}

// fsck.fat drop_file: the 8.3 slot marked deleted, its long-name slots
// zeroed and marked deleted, so no orphaned long name is left behind.
void Checker::delete_entry(const Directory& dir, const Entry& entry) {
  for (std::uint32_t i = entry.first_slot; i < entry.slot; ++i) {
    SlotBytes& s = slot(dir, i);
    s.fill(0);
    s[0] = kDirEntryFree;
  }
  slot(dir, entry.slot)[0] = kDirEntryFree;
}

// Walks the chain from `first`, owning up to `needed` clusters. Stops owning
// where the file's size is reached (the rest is its tail, freed later unless
// another chain owns it) or at a cluster another chain owns (a cross-link:
// this, the second file, is cut before it, as fsck.fat -a does).
fsio::Result<Checker::Walk> Checker::own_chain(std::uint32_t first, std::uint64_t needed) {
  Walk w;
  std::uint64_t index = 0;
  std::uint32_t prev = 0;
  bool tail = false;
  auto visit = [&](std::uint32_t run, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t c = run + i;
      if (!tail) {
        if (index < needed && !owned_.test(c)) {
          owned_.set(c);
          prev = c;
          ++index;
          continue;
        }
        w.cut = true;
        w.kept = std::uint32_t(index);
        w.last = prev;
        if (index < needed) {
          w.crossed = c;
          return false;
        }
        tail = true;
      }
      if (owned_.test(c)) return false;  // the tail runs into another chain: that chain keeps it
      if (tail_.size() == 0) tail_ = ClusterBitmap(l_.entry_count());
      tail_.set(c);
    }
    return true;
  };
  w.chain = FSIO_TRY(walk_chain(fat_, first, visit));
  if (!w.cut) {
    w.kept = std::uint32_t(index);
    w.last = prev;
  }
  advance(entries_bytes(l_.type, w.kept));
  return w;
}

// How a chain that was not cut while walking ends: a free or bad cluster
// ("Contains a free cluster (N). Assuming EOF.") or a loop ("Circular
// cluster chain. Truncating to N clusters.") cut it at its last good
// cluster. True when nothing is left (the first cluster itself is free or
// bad): the caller clears the first cluster.
bool Checker::chain_findings(const std::string& where, const Walk& w) {
  const Chain& c = w.chain;
  const std::string keep =
      w.kept ? "Ending the chain at cluster " + std::to_string(w.last) + " (" + plural(w.kept, "cluster") + ")."
             : std::string("Nothing is left of the chain.");
  switch (c.end) {
    case ChainEnd::free_cluster:
    case ChainEnd::bad_cluster: {
      const bool free = c.end == ChainEnd::free_cluster;
      error(free ? CheckKind::free_in_chain : CheckKind::bad_in_chain, where,
            std::string("Contains a ") + (free ? "free" : "bad") + " cluster (" + std::to_string(c.stop) +
                "). Assuming EOF.",
            keep);
      if (w.kept) cut(w.last);
      return w.kept == 0;
    }
    case ChainEnd::loop:
      error(CheckKind::loop, where,
            "Circular cluster chain: cluster " + std::to_string(c.last) + " points back to " + std::to_string(c.stop) +
                ".",
            "Truncating to " + plural(w.kept, "cluster") + ".");
      cut(w.last);
      return false;
    case ChainEnd::end_of_chain:
    case ChainEnd::out_of_range:  // the closing pass reports and cuts it
    case ChainEnd::bad_start: return false;
  }
  return false;
}

// The first cluster alone (fsck.fat check_file's first checks). A
// directory whose first cluster is 0, its own, its parent's, 1 or past the
// end is deleted (fsck.fat clears the cluster and deletes the entry on its
// next run: "Start does point to root directory"); a file's is cleared.
// Returns the first cluster to walk (0: none) or nullopt when the entry is gone.
std::optional<std::uint32_t> Checker::first_cluster(const Directory& dir, const DirVisit& in, const Entry& e,
                                                    const std::string& path, bool is_dir) {
  const std::uint32_t start = e.first_cluster;
  if (is_dir && e.size != 0) {
    error(CheckKind::dir_size, path, "Directory has non-zero size (" + std::to_string(e.size) + ").", "Fixing it.");
    set_size(dir, e, 0);
  }
  std::string why;
  CheckKind kind = CheckKind::dir_start;
  if (is_dir && start == 0) why = "Start does point to root directory.";
  else if (is_dir && start != 0 && start == in.cluster) why = "Start does point to containing directory.";
  else if (is_dir && in.parent != 0 && start == in.parent) why = "Start does point to containing directory's parent.";
  if (start != 0 && !l_.is_cluster(start)) {
    kind = CheckKind::bad_start;
    why = start == 1 ? std::string("Bad start cluster 1.")
                     : "Start cluster beyond limit (" + std::to_string(start) + " > " +
                           std::to_string(l_.cluster_count + 1ull) + ").";
  }
  if (why.empty()) return start;
  if (is_dir) {
    error(kind, path, why, "Deleting the directory entry.");
    delete_entry(dir, e);
    // fsck.fat clears the first cluster of one pointing at its directory or
    // that one's parent too, so no deleted entry names a live cluster.
    if (start != 0 && kind == CheckKind::dir_start) set_start(dir, e.slot, 0);
    return std::nullopt;
  }
  error(kind, path, why, "Truncating file.");
  set_start(dir, e.slot, 0);
  return 0;
}

// A chain cut while it was walked: crossed into an earlier chain, or longer
// than the file. A loop past the cut is reported too (fsck.fat's test_file
// sees it before check_file cuts).
void Checker::cut_findings(const std::string& path, const Entry& e, const Walk& w, bool is_dir) {
  const std::uint64_t cb = l_.cluster_bytes();
  if (w.crossed) {
    const std::string to =
        w.kept ? std::to_string(w.kept * cb) + " bytes (" + plural(w.kept, "cluster") + ")" : std::string("0 bytes");
    const std::size_t index = result_.findings.size();
    error(
        CheckKind::cross_link, path,
        "an earlier file and " + path + " share clusters (from cluster " + std::to_string(w.crossed) + ").",
        is_dir && !w.kept ? std::string("Deleting the second's directory entry.") : "Truncating second to " + to + ".");
    if (result_.findings.size() > index && crossings_.size() < 1000) crossings_.push_back({w.crossed, path, index});
  } else {
    error(CheckKind::chain_longer, path,
          "File size is " + std::to_string(e.size) + " bytes, cluster chain length is > " +
              std::to_string(w.kept * cb) + " bytes.",
          "Truncating file to " + std::to_string(e.size) + " bytes (" + plural(w.kept, "cluster") + ").");
  }
  if (w.chain.end == ChainEnd::loop)
    error(CheckKind::loop, path,
          "Circular cluster chain (cluster " + std::to_string(w.chain.last) + " points back to " +
              std::to_string(w.chain.stop) + ").",
          "Cut before the loop (above).");
  if (w.kept) cut(w.last);
}

fsio::Result<std::optional<DirVisit>> Checker::check_entry(Directory& dir, const DirVisit& in, const Entry& e) {
  const bool is_dir = e.is_directory() && !e.is_label();
  const std::string path = in.path + "/" + e.name;
  ++result_.counts.entries;
  if (is_dir) ++result_.counts.directories;
  else if (!e.is_label()) ++result_.counts.files;
  const auto start = first_cluster(dir, in, e, path, is_dir);
  if (!start) return std::optional<DirVisit>{};
  const std::uint64_t cb = l_.cluster_bytes();
  Walk w;
  bool clear = false;  // nothing of the chain is left: the first cluster goes
  if (*start != 0) {
    w = FSIO_TRY(own_chain(*start, is_dir ? UINT64_MAX : (e.size + cb - 1) / cb));
    if (w.cut) cut_findings(path, e, w, is_dir);
    clear = w.cut ? w.kept == 0 : chain_findings(path, w);
  }
  if (clear && is_dir) {
    delete_entry(dir, e);
    return std::optional<DirVisit>{};
  }
  if (clear) set_start(dir, e.slot, 0);
  if (!is_dir && e.size > w.kept * cb) {
    const std::uint64_t bytes = std::min<std::uint64_t>(w.kept * cb, UINT32_MAX);
    error(CheckKind::size_beyond_chain, path,
          "File size is " + std::to_string(e.size) + " bytes, cluster chain length is " + std::to_string(w.kept * cb) +
              " bytes.",
          "Truncating file to " + std::to_string(bytes) + " bytes (" + plural(w.kept, "cluster") + ").");
    set_size(dir, e, std::uint32_t(bytes));
  }
  if (!is_dir || *start == 0) return std::optional<DirVisit>{};
  return std::optional<DirVisit>{DirVisit{path, *start, in.root ? 0 : in.cluster, w.kept, false}};
}

}  // namespace fat::detail
