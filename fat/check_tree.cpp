// The directory walk: depth first in fsck.fat's order (scan_dir checks a
// directory's entries, then descends into its subdirectories in slot
// order), one directory in memory at a time. Per directory: the dot
// entries (handle_dot), long names (lfn.c), short names and duplicates
// (check_dir), every entry's chain (check_entry.cpp), live slots after the
// end mark, the root's label.
#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_set>

#include "fat/check_impl.hpp"

namespace fat::detail {

namespace {

// fsck.fat bad_name: a control character (0x05 allowed first) or DEL, one of
// * ? < > | " \ / : . anywhere, or a space first. Lower case and bytes above
// 0x7F are allowed (code pages).
bool bad_short_name(const ShortName& n) {
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::uint8_t c = n[i];
    if ((c < 0x20 && !(i == 0 && c == kDirEntryKanji)) || c == 0x7F) return true;
    if (std::strchr("*?<>|\"\\/:.", c) && c != 0) return true;
  }
  return n[0] == ' ';
}

std::string raw(const ShortName& n) { return std::string(n.begin(), n.end()); }

bool is_lfn_slot(std::span<const std::byte> s) {
  return (std::to_integer<std::uint8_t>(s[11]) & attr::long_name_mask) == attr::long_name;
}

}  // namespace

fsio::Status Checker::walk_tree() {
  DirVisit root{"", l_.type == FatType::fat32 ? l_.root_cluster : 0, 0, 0, true};
  if (l_.type == FatType::fat32) FSIO_TRY(own_root(root));
  if (l_.type == FatType::fat32 && root.keep_clusters == 0) return {};
  std::vector<std::vector<DirVisit>> levels{{std::move(root)}};
  std::vector<std::size_t> next{0};
  while (!levels.empty()) {
    if (next.back() == levels.back().size()) {
      levels.pop_back();
      next.pop_back();
      continue;
    }
    DirVisit visit = std::move(levels.back()[next.back()++]);
    std::vector<DirVisit> subdirs;
    FSIO_TRY(check_directory(visit, subdirs));
    if (!subdirs.empty()) {
      levels.push_back(std::move(subdirs));
      next.push_back(0);
    }
  }
  checked("directory tree: " + plural(result_.counts.directories, "directory", "directories") + " below the root, " +
          plural(result_.counts.files, "file"));
  return {};
}

// The FAT32 root is a chain with no entry: cut where it goes wrong; a root
// whose first cluster is free or bad cannot be repaired (fsck.fat gives up).
fsio::Status Checker::own_root(DirVisit& root) {
  const Walk w = FSIO_TRY(own_chain(l_.root_cluster, UINT64_MAX));
  if (w.kept == 0) {
    add(CheckKind::root_chain, Severity::error, "/",
        "The root directory's first cluster " + std::to_string(l_.root_cluster) + " is " + chain_end_name(w.chain.end) +
            ": there is no root directory to check.",
        "Not repairable here: the root directory is gone.");
    tree_whole_ = false;
    return {};
  }
  chain_findings("/", w);
  root.keep_clusters = w.kept;
  return {};
}

fsio::Status Checker::check_directory(const DirVisit& visit, std::vector<DirVisit>& subdirs) {
  FSIO_TRY(poll());
  const std::string where = visit.path.empty() ? "/" : visit.path;
  auto opened = visit.root ? Directory::open_root(vol_) : Directory::open(vol_, visit.cluster);
  if (!opened) {
    add(CheckKind::dir_unreadable, Severity::error, where, "Cannot read the directory: " + opened.error().message(),
        "Not repairable here; lost clusters are not freed, they may belong to it.");
    tree_whole_ = false;
    return {};
  }
  Directory& dir = *opened;
  dir.read_past_end();  // every slot, as fsck.fat reads it
  if (dir.truncated()) {
    add(CheckKind::dir_unreadable, Severity::error, where,
        "The directory's chain is longer than 2 MiB (65536 entries, the most FAT allows): only the first 2 MiB "
        "were checked.",
        "Not repairable here; lost clusters are not freed, they may belong to it.");
    tree_whole_ = false;
  }
  const std::uint64_t per_cluster = l_.cluster_bytes() / 32;
  const auto limit =
      std::uint32_t(visit.keep_clusters ? std::min<std::uint64_t>(dir.slot_count(), visit.keep_clusters * per_cluster)
                                        : dir.slot_count());
  if (!visit.root) check_dots(dir, visit);
  check_lfn(dir, visit, limit);
  check_names(dir, visit, limit);
  for (const Entry& e : dir.entries()) {
    if (e.slot >= limit) break;
    if (!visit.root && e.slot < 2 && e.is_dot()) continue;
    if (e.is_label() && visit.root && !root_label_) {
      root_label_ = e.raw_name;
      root_label_offset_ = dir.position(e.slot).device_offset;
    }
    auto sub = FSIO_TRY(check_entry(dir, visit, e));
    if (sub) subdirs.push_back(std::move(*sub));
  }
  return check_after_end(dir, visit, limit);
}

// fsck.fat handle_dot: slot 0 is "." naming the directory, slot 1 ".."
// naming its parent (0 for the root); both directories. An entry of
// another name in their place is moved down to the first free slot after
// them and the dot entry made in its place (fsck.fat -a's "Moving entry
// down"); the moved entry is then checked where it went.
void Checker::check_dots(Directory& dir, const DirVisit& visit) {
  for (std::uint32_t k = 0; k < 2 && k < dir.slot_count(); ++k) {
    const auto d = fsio::load<DirEntry>(dir.slot(k));
    const ShortName want = k == 0 ? ShortName{'.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
                                  : ShortName{'.', '.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    const std::uint32_t start = k == 0 ? visit.cluster : visit.parent;
    const std::uint32_t has =
        std::uint32_t(d.first_cluster_lo) | (l_.type == FatType::fat32 ? std::uint32_t(d.first_cluster_hi) << 16 : 0);
    const bool named = std::memcmp(d.name, want.data(), 11) == 0;
    const std::string dot = k == 0 ? "'.'" : "'..'", nth = k == 0 ? "first" : "second";
    if (named && (d.attributes & attr::directory) && has == start) {
      if (d.nt_reserved & kNoShortName) {
        error(CheckKind::dot_entry, visit.path + "/" + (k == 0 ? "." : ".."), "Is a dot with no 8.3 name flag set.",
              "Clearing the flag.");
        slot(dir, k)[12] &= std::uint8_t(~kNoShortName);
      }
      continue;
    }
    const std::uint8_t b0 = d.name[0];
    if (named || b0 == kDirEntryEnd || b0 == kDirEntryFree) {
      const bool free = !named;
      error(CheckKind::dot_entry, visit.path,
            free ? "Expected a valid " + dot + " entry in the " + nth + " slot, found free entry."
                 : "Invalid " + dot + " entry in the " + nth + " slot (first cluster " + std::to_string(has) +
                       ", expected " + std::to_string(start) + ").",
            free ? "Creating it." : "Fixing it.");
      SlotBytes& image = slot(dir, k);
      if (free) {
        image.fill(0);
        std::memcpy(image.data(), want.data(), 11);
      }
      image[11] = attr::directory;
      set_start(dir, k, start);
    } else {
      move_down(dir, visit, k, want, start);
    }
  }
}

// fsck.fat handle_dot's "Moving entry down": the entry in dot slot k goes
// to the first free slot after the dot slots (0x00 or 0xE5), and slot k
// becomes a zeroed dot entry. With no free slot both stay as they are.
void Checker::move_down(Directory& dir, const DirVisit& visit, std::uint32_t k, const ShortName& want,
                        std::uint32_t start) {
  ShortName found;
  std::memcpy(found.data(), dir.slot(k).data(), 11);
  const std::string where = visit.path + "/" + decode_short_name(found);
  const std::string message = std::string("Expected a valid '") + (k == 0 ? "." : "..") + "' entry in this slot.";
  std::optional<std::uint32_t> to;
  for (std::uint32_t i = 2; i < dir.slot_count() && !to; ++i) {
    const auto b = std::to_integer<std::uint8_t>(dir.slot(i)[0]);
    if (b == kDirEntryEnd || b == kDirEntryFree) to = i;
  }
  if (!to) {
    add(CheckKind::dot_entry, Severity::error, where, message,
        "No free entry found to move it to: left where it is, with its clusters.");
    return;
  }
  error(CheckKind::dot_entry, where, message, "Moving entry down (to slot " + std::to_string(*to) + ").");
  SlotBytes moved;
  std::memcpy(moved.data(), dir.slot(k).data(), 32);
  SlotBytes made{};
  std::memcpy(made.data(), want.data(), 11);
  made[11] = attr::directory;
  // In memory first, so the walk checks the entry where it now is.
  (void)dir.overwrite(*to, std::as_bytes(std::span(moved)));
  (void)dir.overwrite(k, std::as_bytes(std::span(made)));
  std::memcpy(slot(dir, *to).data(), moved.data(), 32);
  std::memcpy(slot(dir, k).data(), made.data(), 32);
  set_start(dir, k, start);
}

// lfn.c: orphaned parts are deleted and a start cluster in a long-name slot
// is cleared (fsck.fat -a does both); the rest it reports and leaves.
void Checker::check_lfn(Directory& dir, const DirVisit& visit, std::uint32_t limit) {
  const auto& entries = dir.entries();
  for (const LfnProblem& p : dir.problems()) {
    if (p.first_slot >= limit) continue;
    // The 8.3 entry the slots run into, when there is one, names the place.
    const auto e = std::lower_bound(entries.begin(), entries.end(), p.first_slot + p.slots,
                                    [](const Entry& a, std::uint32_t slot) { return a.slot < slot; });
    const bool named = e != entries.end() && e->slot == p.first_slot + p.slots;
    const std::string where = named ? visit.path + "/" + e->short_name : visit.path.empty() ? "/" : visit.path;
    const std::string name = "\"" + p.text + "\"";
    const std::string at = " (slot " + std::to_string(p.first_slot) + ")";
    switch (p.kind) {
      case LfnProblem::Kind::orphan:
        error(CheckKind::lfn_orphan, where, "Orphaned long file name part " + name + at + ".", "Auto-deleting.");
        for (std::uint32_t i = p.first_slot; i < p.first_slot + p.slots && i < dir.slot_count(); ++i) {
          if (!is_lfn_slot(dir.slot(i))) continue;
          SlotBytes& s = slot(dir, i);
          s.fill(0);
          s[0] = kDirEntryFree;
        }
        break;
      case LfnProblem::Kind::start_cluster:
        error(CheckKind::lfn_start_cluster, where, "Start cluster field in VFAT long filename slot is not 0" + at + ".",
              "Auto-setting to 0.");
        slot(dir, p.first_slot)[26] = 0;
        slot(dir, p.first_slot)[27] = 0;
        break;
      case LfnProblem::Kind::checksum:
        add(CheckKind::lfn_damaged, Severity::warning, where, "Wrong checksum for long file name " + name + at + ".",
            "Not auto-correcting this: the entry keeps its short name.");
        break;
      case LfnProblem::Kind::part_checksum:
        add(CheckKind::lfn_damaged, Severity::warning, where, "Checksum in long filename part wrong" + at + ".",
            "Not auto-correcting this.");
        break;
      case LfnProblem::Kind::fragment:
        add(CheckKind::lfn_damaged, Severity::warning, where,
            "Long filename fragment " + name + " found outside a LFN sequence" + at + ".", "Not auto-correcting this.");
        break;
      case LfnProblem::Kind::unfinished:
        add(CheckKind::lfn_damaged, Severity::warning, where, "Unfinished long file name " + name + at + ".",
            "Not auto-correcting this.");
        break;
    }
  }
}

// fsck.fat check_dir: bad short names and duplicates (labels aside) are
// renamed FSCK0000.000, FSCK0000.001, ... (auto_rename), dropping any long name.
void Checker::check_names(Directory& dir, const DirVisit& visit, std::uint32_t limit) {
  std::unordered_set<std::string> taken, seen;
  for (const Entry& e : dir.entries()) taken.insert(raw(e.raw_name));
  std::uint32_t number = 0;
  auto rename = [&](const Entry& e) {
    ShortName name{};
    for (;; ++number) {
      const std::string n = std::to_string(number);
      const std::string text = "FSCK" + std::string(7 - std::min<std::size_t>(7, n.size()), '0') + n;
      std::memcpy(name.data(), text.data(), 11);
      if (!taken.count(raw(name))) break;
    }
    taken.insert(raw(name));
    SlotBytes& s8 = slot(dir, e.slot);
    std::memcpy(s8.data(), name.data(), 11);
    if (s8[12] & kNoShortName) {  // fsck.fat auto_rename: now it has one; not a directory or label
      s8[12] &= std::uint8_t(~kNoShortName);
      s8[11] &= std::uint8_t(~(attr::directory | attr::volume_id));
    }
    for (std::uint32_t i = e.first_slot; i < e.slot; ++i) {
      SlotBytes& s = slot(dir, i);
      s.fill(0);
      s[0] = kDirEntryFree;
    }
    return decode_short_name(name);
  };
  for (const Entry& e : dir.entries()) {
    if (e.slot >= limit) break;
    if ((!visit.root && e.slot < 2 && e.is_dot()) || e.is_label()) continue;
    const std::string path = visit.path + "/" + e.name;
    // A patched Linux's entries with no 8.3 name (DIR_NTRes bit 0x20) are
    // bad only without a long name (fsck.fat bad_name).
    const bool no_short = e.nt_reserved & kNoShortName;
    if (no_short ? e.long_name.empty() : bad_short_name(e.raw_name)) {
      const std::string shown = e.short_name;
      const std::string to = rename(e);
      error(CheckKind::bad_name, path, "Bad short file name (" + shown + ").", "Auto-renaming it to " + to + ".");
      seen.insert(raw(e.raw_name));
      continue;
    }
    if (!seen.insert(raw(e.raw_name)).second) {
      const std::string to = rename(e);
      error(CheckKind::duplicate_name, path, "Duplicate directory entry (" + e.short_name + ").",
            "Auto-renaming second to " + to + ".");
    }
  }
}

// Live entries after the first 0x00 slot. fsck.fat 4.2 reads every slot
// (scan_dir adds each one; add_file skips a 0x00 slot as free, IS_FREE, and
// goes on), and so does Linux, so they were checked above as entries: bad
// names renamed, chains owned, subdirectories walked. Windows and mtools
// stop at the 0x00 slot and do not see them: a warning, left as it is.
fsio::Status Checker::check_after_end(Directory& dir, const DirVisit& visit, std::uint32_t limit) {
  const auto end = dir.end_slot();
  if (!end) return {};
  std::uint64_t live = 0;
  for (const Entry& e : dir.entries())
    if (e.slot > *end && e.slot < limit) ++live;
  if (live)
    add(CheckKind::after_end, Severity::warning, visit.path.empty() ? "/" : visit.path,
        plural(live, "entry", "entries") + " after the end-of-directory slot " + std::to_string(*end) +
            ": Linux and fsck.fat read and check them, Windows and mtools do not see them.",
        "Not moving them.");
  return {};
}

// Names the first owner of each cluster a second file crossed into: a
// second walk, in the same order, that stops once every one is named.
fsio::Status Checker::name_first_owners() {
  if (crossings_.empty()) return {};
  std::set<std::uint32_t> wanted;
  for (const auto& c : crossings_) wanted.insert(c.cluster);
  std::map<std::uint32_t, std::string> owner;
  auto look = [&](const std::string& path, std::uint32_t first) -> fsio::Status {
    FSIO_TRY(walk_chain(fat_, first, [&](std::uint32_t run, std::uint32_t count) {
      for (auto it = wanted.lower_bound(run); it != wanted.end() && *it < run + count;) {
        owner.emplace(*it, path);
        it = wanted.erase(it);
      }
      return !wanted.empty();
    }));
    return {};
  };
  ClusterBitmap seen(l_.entry_count());
  std::vector<std::pair<std::string, std::uint32_t>> todo{{"", l_.type == FatType::fat32 ? l_.root_cluster : 0}};
  if (l_.type == FatType::fat32) FSIO_TRY(look("/", l_.root_cluster));
  while (!todo.empty() && !wanted.empty()) {
    auto [path, cluster] = std::move(todo.back());
    todo.pop_back();
    auto dir = path.empty() ? Directory::open_root(vol_) : Directory::open(vol_, cluster);
    if (!dir) continue;
    dir->read_past_end();
    std::vector<std::pair<std::string, std::uint32_t>> subs;
    for (const Entry& e : dir->entries()) {
      if (e.is_dot() || !l_.is_cluster(e.first_cluster)) continue;
      FSIO_TRY(look(path + "/" + e.name, e.first_cluster));
      if (e.is_directory() && !seen.test_and_set(e.first_cluster))
        subs.emplace_back(path + "/" + e.name, e.first_cluster);
    }
    todo.insert(todo.end(), subs.rbegin(), subs.rend());
  }
  for (const auto& c : crossings_) {
    const auto it = owner.find(c.cluster);
    if (it == owner.end() || it->second == c.second) continue;
    auto& f = result_.findings[c.finding];
    f.message = it->second + " and " + c.second + " share clusters (from cluster " + std::to_string(c.cluster) + ").";
  }
  return {};
}

}  // namespace fat::detail
