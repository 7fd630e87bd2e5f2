// Lost chains kept as files, as fsck.fat -a, -y, -p and -f do (fat.c
// reclaim_file): each chain of allocated clusters no file owns becomes
// FSCK0000.REC, FSCK0001.REC, ... in the root directory, sized to whole
// clusters, instead of being freed. The chains are made well-formed first,
// where fsck.fat makes them so:
//   - a lost cluster pointing at a cluster that is not lost (a file's,
//     free, bad, or a tail cut off a file) ends its chain there;
//   - two lost chains running into each other: the later one is cut before
//     the cluster the earlier one took;
//   - a loop of lost clusters with no way in is broken at its lowest
//     cluster ("Broke cycle at cluster N in free chain"), and the cluster
//     it pointed at starts the file.
// Memory: two numbers and a flag per lost cluster, only when there are any.
#include <algorithm>
#include <cstring>

#include "fat/check_impl.hpp"

namespace fat::detail {

namespace {

constexpr std::uint32_t kEnd = UINT32_MAX;  // no next lost cluster

// The lost clusters in ascending order, each with the index of the next lost
// one its FAT entry points at (kEnd: the chain ends), and how many point at it.
struct LostGraph {
  std::vector<std::uint32_t> cluster, next, refs;
  std::vector<bool> claimed;
  std::uint32_t index_of(std::uint32_t c) const {
    const auto it = std::lower_bound(cluster.begin(), cluster.end(), c);
    return it != cluster.end() && *it == c ? std::uint32_t(it - cluster.begin()) : kEnd;
  }
};

}  // namespace

void Checker::salvage_lost() {
  LostGraph g;
  for (const auto& [c, v] : lost_links_) g.cluster.push_back(c);
  g.next.assign(g.cluster.size(), kEnd);
  g.refs.assign(g.cluster.size(), 0);
  g.claimed.assign(g.cluster.size(), false);
  // A link out of the lost clusters ends the chain (fsck.fat marks it end-of-chain).
  for (std::uint32_t i = 0; i < g.cluster.size(); ++i) {
    const std::uint32_t v = lost_links_[i].second;
    if (!l_.is_cluster(v)) continue;
    const std::uint32_t to = g.index_of(v);
    if (to == kEnd) cut(g.cluster[i]);
    else {
      g.next[i] = to;
      ++g.refs[to];
    }
  }
  std::uint32_t from = 0;
  for (bool again = true; again;) {
    claim_heads(g.cluster, g.next, g.refs, g.claimed, from);
    again = false;
    // What is left unclaimed lies on loops nothing leads into.
    for (std::uint32_t i = 0; i < g.cluster.size(); ++i) {
      if (g.claimed[i] || g.next[i] == kEnd) continue;
      const std::uint32_t to = g.next[i];
      g.next[i] = kEnd;
      cut(g.cluster[i]);
      add(CheckKind::lost_clusters, Severity::info, "FAT",
          "Broke cycle at cluster " + std::to_string(g.cluster[i]) + " in free chain.");
      from = to;
      again = true;
      if (--g.refs[to] == 0) break;
    }
  }
  recover_files(g.cluster, g.next, g.refs);
}

// fsck.fat tag_free: from each chain head (a lost cluster nothing points
// at), at or after index `from`, the chain is claimed; where it runs into a
// cluster already claimed it is cut before it.
void Checker::claim_heads(const std::vector<std::uint32_t>& cluster, std::vector<std::uint32_t>& next,
                          std::vector<std::uint32_t>& refs, std::vector<bool>& claimed, std::uint32_t from) {
  for (std::uint32_t i = from; i < cluster.size(); ++i) {
    if (claimed[i] || refs[i] != 0) continue;
    std::uint32_t prev = kEnd;
    for (std::uint32_t w = i; w != kEnd; w = next[w]) {
      if (!claimed[w]) {
        claimed[w] = true;
        prev = w;
        continue;
      }
      next[prev] = kEnd;
      cut(cluster[prev]);
      --refs[w];
      break;
    }
  }
}

// One root-directory entry per chain head, in cluster order: FSCKnnnnREC,
// no time, no attributes, its size the chain's clusters. The chains become
// owned, so nothing frees them.
void Checker::recover_files(const std::vector<std::uint32_t>& cluster, const std::vector<std::uint32_t>& next,
                            const std::vector<std::uint32_t>& refs) {
  auto root = Directory::open_root(vol_);
  std::uint64_t files = 0, clusters = 0, left = 0;
  std::string first_name, last_name;
  std::uint32_t number = 0, free_from = 0;
  for (std::uint32_t i = 0; i < cluster.size(); ++i) {
    if (refs[i] != 0) continue;
    std::uint64_t length = 0;
    for (std::uint32_t w = i; w != kEnd; w = next[w]) {
      owned_.set(cluster[w]);
      ++length;
    }
    clusters += length;
    const auto at = root ? free_root_slot(*root, free_from) : std::nullopt;
    if (!at) {
      ++left;
      continue;
    }
    free_from = *at + 1;
    const ShortName name = rec_name(*root, number);
    SlotBytes& s = slot(*root, *at);
    s.fill(0);
    std::memcpy(s.data(), name.data(), 11);
    set_start(*root, *at, cluster[i]);
    const auto size = std::uint32_t(length * l_.cluster_bytes());  // fsck.fat's 32-bit sum
    for (int b = 0; b < 4; ++b) s[28 + b] = std::uint8_t(size >> (8 * b));
    (first_name.empty() ? first_name : last_name) = decode_short_name(name);
    ++files;
  }
  recovered_files_ = files;
  const std::string what = plural(clusters, "unused cluster") + " (" + std::to_string(clusters * l_.cluster_bytes()) +
                           " bytes) in " + plural(files + left, "chain") +
                           ": allocated, but no file or directory owns them.";
  const std::string names = first_name + (last_name.empty() ? "" : " .. " + last_name);
  if (!left) error(CheckKind::lost_clusters, "FAT", what, "Recovering them into " + names + " in the root directory.");
  else
    add(CheckKind::lost_clusters, Severity::error, "FAT", what,
        "Root directory is full: " + plural(left, "chain") + " left as they are" +
            (files ? ", the rest recovered into " + names : std::string()) + ".");
}

// fsck.fat alloc_rootdir_entry: a slot that is free (0x00 or 0xE5) and not
// a deleted long-name slot, as the plan leaves the root directory.
std::optional<std::uint32_t> Checker::free_root_slot(Directory& root, std::uint32_t from) {
  for (std::uint32_t i = from; i < root.slot_count(); ++i) {
    const SlotBytes s = planned_slot(root, i);
    if ((s[0] == kDirEntryEnd || s[0] == kDirEntryFree) && s[11] != attr::long_name) return i;
  }
  return std::nullopt;
}

// "FSCK0000REC", "FSCK0001REC", ...: the next number no root entry has.
ShortName Checker::rec_name(Directory& root, std::uint32_t& number) {
  for (;; ++number) {
    char text[16];
    std::snprintf(text, sizeof text, "FSCK%04uREC", number % 10000);
    ShortName name;
    std::memcpy(name.data(), text, 11);
    bool taken = false;
    for (std::uint32_t i = 0; i < root.slot_count() && !taken; ++i)
      taken = std::memcmp(planned_slot(root, i).data(), name.data(), 11) == 0;
    if (!taken) return name;
  }
}

SlotBytes Checker::planned_slot(const Directory& dir, std::uint32_t index) const {
  const auto it = plan_.slots.find(dir.position(index).device_offset);
  SlotBytes s;
  if (it != plan_.slots.end()) return it->second;
  std::memcpy(s.data(), dir.slot(index).data(), 32);
  return s;
}

}  // namespace fat::detail
