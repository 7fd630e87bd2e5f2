// check_volume: the steps in fsck.fat's order, and the boot-area, FSInfo
// and label checks (see check.hpp). The FAT passes are in check_fat.cpp,
// the directory walk in check_tree.cpp and check_entry.cpp.
#include <algorithm>
#include <cstring>

#include "fat/check_impl.hpp"
#include "fat/fsinfo.hpp"

namespace fat {

namespace {

constexpr std::array<std::uint8_t, 11> kNoLabel = {'N', 'O', ' ', 'N', 'A', 'M', 'E', ' ', ' ', ' ', ' '};

std::string pretty_label(const std::array<std::uint8_t, 11>& raw) {
  std::string s(raw.begin(), raw.end());
  if (!s.empty() && std::uint8_t(s[0]) == kDirEntryKanji) s[0] = char(0xE5);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "info";
  }
  return "?";
}

const char* check_kind_name(CheckKind k) {
  static constexpr const char* names[kCheckKinds] = {"backup_boot_differs",
                                                     "backup_boot_missing",
                                                     "fsinfo_missing",
                                                     "fsinfo_signature",
                                                     "free_count",
                                                     "free_count_unknown",
                                                     "next_free",
                                                     "dirty",
                                                     "io_error_bit",
                                                     "media_mismatch",
                                                     "fat0_reserved",
                                                     "fat1_reserved",
                                                     "volume_note",
                                                     "copies_differ",
                                                     "out_of_range",
                                                     "lost_clusters",
                                                     "free_in_chain",
                                                     "bad_in_chain",
                                                     "loop",
                                                     "cross_link",
                                                     "chain_longer",
                                                     "size_beyond_chain",
                                                     "bad_start",
                                                     "root_chain",
                                                     "dir_size",
                                                     "dir_start",
                                                     "bad_name",
                                                     "duplicate_name",
                                                     "dot_entry",
                                                     "lfn_orphan",
                                                     "lfn_start_cluster",
                                                     "lfn_damaged",
                                                     "after_end",
                                                     "dir_unreadable",
                                                     "label"};
  return names[std::size_t(k)];
}

std::uint64_t CheckResult::count(Severity severity) const {
  std::uint64_t n = 0;
  for (const auto& f : findings) n += f.severity == severity;
  if (severity == Severity::error)
    for (auto e : omitted_errors) n += e;
  return n;
}

std::uint64_t CheckResult::unfixable_errors() const {
  std::uint64_t n = 0;
  for (const auto& f : findings) n += f.severity == Severity::error && !f.fixable;
  return n + omitted_unfixable;
}

namespace detail {

std::string plural(std::uint64_t n, const char* word, const char* many) {
  if (n == 1) return "1 " + std::string(word);
  return std::to_string(n) + " " + (many ? std::string(many) : std::string(word) + "s");
}

Checker::Checker(Volume& volume, const CheckOptions& options, CheckResult& result)
    : vol_(volume),
      l_(volume.layout()),
      fat_(volume.fat()),
      opt_(options),
      result_(result),
      plan_(result.plan),
      owned_(result.plan.owned) {
  owned_ = ClusterBitmap(l_.entry_count());
  result_.counts.clusters = l_.cluster_count;
}

void Checker::add(CheckKind kind, Severity severity, std::string where, std::string message, std::string action,
                  bool fixable) {
  const auto k = std::size_t(kind);
  if (kept_[k] >= opt_.max_findings_per_kind) {
    ++result_.omitted[k];
    if (severity == Severity::error) ++result_.omitted_errors[k];
    if (severity == Severity::error && !fixable) ++result_.omitted_unfixable;
    return;
  }
  ++kept_[k];
  result_.findings.push_back({kind, severity, std::move(where), std::move(message), std::move(action), fixable});
}

fsio::Status Checker::poll() const {
  if (fsio::InterruptGuard::requested())
    return fsio::make_error(fsio::Errc::interrupted, "interrupted during the check; nothing was written");
  return {};
}

void Checker::advance(std::uint64_t bytes) {
  done_ += bytes;
  if (opt_.progress) opt_.progress->add(bytes);
}

fsio::Status Checker::run() {
  checked(std::string("boot sector: valid; backup: ") + (l_.type != FatType::fat32 ? "none (FAT12/16 have none)"
                                                         : vol_.has(Finding::Kind::backup_boot_missing) ? "none"
                                                         : vol_.has(Finding::Kind::backup_boot_differs) ? "differs"
                                                                                                        : "identical"));
  boot_area();
  after_boot_ = result_.findings.size();
  FSIO_TRY(walk_tree());
  FSIO_TRY(name_first_owners());
  FSIO_TRY(closing_pass());
  result_.boot_findings = after_boot_;  // the copies' findings went in there
  fsinfo();
  label();
  return {};
}

// What Volume::open noted, with fsck.fat's severity; FAT[0] and FAT[1].
void Checker::boot_area() {
  volume_findings();
  dirty_finding();
  reserved_entries();
}

// Volume::open's findings about the boot sector, FSInfo and FAT[0..1].
void Checker::volume_findings() {
  using K = Finding::Kind;
  for (const Finding& f : vol_.findings()) {
    switch (f.kind) {
      case K::fat32_few_clusters:
      case K::fs_type_label:
      case K::mirroring_disabled: add(CheckKind::volume_note, Severity::info, "boot sector", f.message); break;
      case K::linux_unmountable: add(CheckKind::volume_note, Severity::warning, "boot sector", f.message); break;
      case K::fsinfo_missing:
        add(CheckKind::fsinfo_missing, Severity::warning, "boot sector", "No FSINFO sector (" + f.message + ")",
            "Not creating one.");
        break;
      case K::fsinfo_signature:
        error(CheckKind::fsinfo_signature, "FSInfo", "FSINFO sector has bad magic number(s): " + f.message,
              "Rewriting the FSInfo sector.");
        break;
      case K::backup_boot_missing:
        add(CheckKind::backup_boot_missing, Severity::warning, "boot sector",
            "There is no backup boot sector (" + f.message + ").", "Not creating one.");
        break;
      case K::backup_boot_differs:
        add(CheckKind::backup_boot_differs, Severity::warning, "boot sector",
            "There are differences between boot sector and its backup: " + f.message + ".",
            "Not automatically fixing this: either could be the damaged one.");
        break;
      case K::fat_io_errors: add(CheckKind::io_error_bit, Severity::warning, "FAT[1]", f.message); break;
      case K::media_mismatch: add(CheckKind::media_mismatch, Severity::warning, "FAT[0]", f.message); break;
      case K::fsinfo_free_count:  // fsinfo() compares the count with the real one
      case K::fsinfo_next_free:
      case K::dirty_state:  // one finding for both dirty bits, below
      case K::fat_not_clean: break;
    }
  }
}

// Either dirty bit (the boot sector's flag, FAT[1]'s clean-shutdown bit): one finding.
void Checker::dirty_finding() {
  if (vol_.dirty().dirty()) {
    std::string bits = vol_.dirty().state_flag ? "the boot sector's dirty flag" : "";
    if (vol_.dirty().fat_not_clean) bits += std::string(bits.empty() ? "" : " and ") + "FAT[1]'s clean-shutdown bit";
    error(CheckKind::dirty, "boot sector",
          "Dirty bit is set (" + bits + "). Fs was not properly unmounted and some data may be corrupt.",
          "Removing the dirty bit.");
    plan_.clear_dirty = true;
  }
  checked("dirty bits: " + std::string(vol_.dirty().dirty() ? "set" : "clean"));
}

// FAT[0]'s reserved bits and FAT[1]'s end-of-chain mark (fsck.fat read_fat).
void Checker::reserved_entries() {
  const std::uint32_t mask = entry_mask(l_.type);
  const std::uint32_t extd = mask & ~0xFu;  // fsck.fat FAT_EXTD: every bit but the media nibble
  const std::uint32_t fat0 = fat_.get(0).value_or(0);
  if ((fat0 & extd) != extd) {
    const std::uint32_t fixed = extd | l_.media;
    error(CheckKind::fat0_reserved, "FAT[0]",
          "FAT[0] of copy " + std::to_string(fat_.read_copy()) + ", the copy read, is " + std::to_string(fat0) +
              ": its reserved bits are not all set (fsck.fat: it appears to be corrupt)",
          "Setting FAT[0] to " + std::to_string(fixed) + " (BPB_Media with every reserved bit set).");
    plan_.fat0 = fixed;
  }
  if (fat_.read_copy() != 0)
    add(CheckKind::fat0_reserved, Severity::info, "FAT copy 0",
        "FAT[0] of copy 0 is damaged and copy " + std::to_string(fat_.read_copy()) + "'s is not: reading copy " +
            std::to_string(fat_.read_copy()) + ", as fsck.fat does");
  const std::uint32_t status = l_.type == FatType::fat32   ? kFat32CleanShutdown | kFat32NoHardError
                               : l_.type == FatType::fat16 ? kFat16CleanShutdown | kFat16NoHardError
                                                           : 0;
  const std::uint32_t fat1 = fat_.get(1).value_or(0);
  if (classify(l_.type, fat1 | status) != EntryKind::end_of_chain)
    add(CheckKind::fat1_reserved, Severity::warning, "FAT[1]",
        "FAT[1] is " + std::to_string(fat1) + ", not an end-of-chain mark (fatgen103 p.18)");
}

// fsck.fat update_free: the free count FSInfo should hold is every cluster
// no chain keeps and no bad mark holds, once the plan is carried out.
void Checker::fsinfo() {
  const auto& s = vol_.fsinfo();
  const auto& c = result_.counts;
  if (!s) return;
  bool rewrite = !s->signatures_ok;
  const std::string where = "FSInfo sector " + std::to_string(s->sector);
  if (s->signatures_ok && s->free_count == kFsInfoUnknown) {
    add(CheckKind::free_count_unknown, Severity::info, where,
        "Free cluster summary uninitialized (should be " + std::to_string(c.free_after) + ")");
  } else if (s->signatures_ok && s->free_count != c.free_after) {
    error(CheckKind::free_count, where,
          "Free cluster summary wrong (" + std::to_string(s->free_count) + " vs. really " +
              std::to_string(c.free_after) + ")",
          "Setting it to " + std::to_string(c.free_after) + ".");
    rewrite = true;
  }
  std::uint32_t hint = s->next_free;
  if (s->signatures_ok && s->next_free != kFsInfoUnknown && !s->next_free_known) {
    hint = first_free_after_ ? first_free_after_ : kFsInfoUnknown;
    error(CheckKind::next_free, where,
          "Next free cluster hint " + std::to_string(s->next_free) + " is not a cluster (2.." +
              std::to_string(l_.cluster_count + 1ull) + ")",
          "Setting it to " + (hint == kFsInfoUnknown ? std::string("unknown") : std::to_string(hint)) + ".");
    rewrite = true;
  }
  if (!s->signatures_ok) hint = first_free_after_ ? first_free_after_ : 2;
  if (rewrite || (s->free_count == kFsInfoUnknown && !plan_.empty()))
    plan_.fsinfo = RepairPlan::FsInfoCounts{std::uint32_t(c.free_after), hint};
  checked("FSInfo: free count " +
          (s->free_count == kFsInfoUnknown ? std::string("unknown") : std::to_string(s->free_count)) + ", " +
          std::to_string(c.free_after) + " free once repaired");
}

// fsck.fat check_label: the root directory's label wins over the boot
// sector's. Only with an extended boot signature (0x29) is there a boot label.
void Checker::label() {
  const BootRecord& r = vol_.record();
  if (r.boot_signature != 0x29) return;
  const bool boot_named = r.label != kNoLabel;
  const bool root_named = root_label_ && *root_label_ != kNoLabel;
  if (!root_label_ && boot_named) {
    error(CheckKind::label, "boot sector",
          "Label in boot sector is '" + pretty_label(r.label) + "', but there is no volume label in root directory.",
          "Removing the label from the boot sector.");
    plan_.boot_label = kNoLabel;
  } else if (root_named && !boot_named) {
    error(CheckKind::label, "boot sector",
          "There is no label in boot sector, but there is volume label '" + pretty_label(*root_label_) +
              "' stored in root directory.",
          "Copying the root directory's label to the boot sector.");
    plan_.boot_label = *root_label_;
  } else if (root_named && boot_named && *root_label_ != r.label) {
    error(CheckKind::label, "boot sector",
          "Volume label '" + pretty_label(*root_label_) + "' stored in root directory and label '" +
              pretty_label(r.label) + "' stored in boot sector and different.",
          "Copying the root directory's label to the boot sector.");
    plan_.boot_label = *root_label_;
  }
  checked("label: boot sector '" + pretty_label(r.label) + "', root directory " +
          (root_label_ ? "'" + pretty_label(*root_label_) + "'" : std::string("none")));
}

}  // namespace detail

fsio::Result<CheckResult> check_volume(Volume& volume, const CheckOptions& options) {
  CheckResult result;
  detail::Checker checker(volume, options, result);
  FSIO_TRY(checker.run());
  return result;
}

std::uint64_t check_work(const Volume& v) {
  const Layout& l = v.layout();
  const std::uint64_t table = entries_bytes(l.type, l.entry_count());
  const auto& s = v.fsinfo();
  const std::uint64_t used = s && s->free_count_known ? l.cluster_count - s->free_count : l.cluster_count / 2;
  return table * l.num_fats + entries_bytes(l.type, used);
}

}  // namespace fat
