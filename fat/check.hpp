// Checking a FAT volume the way fsck.fat 4.2 does, in a bitmap's worth of
// memory: a list of findings in fsck.fat's words, and the repair plan
// (repair.hpp) that fsck.fat -a's choices make of them.
//
//   auto result = FSIO_TRY(fat::check_volume(volume));
//   for (const auto& f : result.findings) ...;       // what is wrong
//   FSIO_TRY(fat::repair_volume(volume, result.plan, report));
//
// What is checked, in order (fsck.fat: read_boot, read_fat, scan_root,
// check_label, reclaim_free, check_dirty_bits, update_free):
//   - the boot sector against its backup, FSInfo, the dirty bits, FAT[0]
//     and FAT[1] (Volume::open found these; here they get a severity);
//   - the directory tree, depth first in fsck.fat's order (a directory's
//     entries, then its subdirectories in slot order), one directory in
//     memory at a time: dot entries, long names, short names, duplicates,
//     and every entry's chain: free, bad or out-of-range clusters, loops,
//     clusters another file owns (cross-links: the second file is cut, as
//     fsck.fat -a does), chain length against the size;
//   - one streamed pass over every FAT copy: the copies against the one
//     read, out-of-range entries, allocated clusters no chain owns (lost),
//     the free count FSInfo should hold; lost chains freed, or with
//     CheckOptions::salvage kept as FSCKnnnn.REC files in the root;
//   - the volume label in the boot sector against the root directory's.
//
// Memory: ClusterBitmaps (owned clusters; cut entries, truncated tails and
// lost clusters only when there are any), FatTable's bounded cache, one
// directory, and the findings (at most max_findings_per_kind of each kind;
// the rest are counted). Never a structure per cluster.
//
// Severity follows fsck.fat's behaviour: an error is what fsck.fat changes
// (so fsck.fat -n exits 1 and fatck -n 4); a warning is what it reports but
// does not fix ("Not automatically fixing this", a wrong LFN checksum);
// info is what -v shows.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fat/repair.hpp"
#include "fat/volume.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"

namespace fat {

enum class Severity : std::uint8_t { error, warning, info };
const char* severity_name(Severity severity);  // "error", "warning", "info"

// Each kind with fsck.fat 4.2's message for it, where it has one.
enum class CheckKind : std::uint8_t {
  // boot area
  backup_boot_differs,  // "There are differences between boot sector and its backup."
  backup_boot_missing,  // "There is no backup boot sector."
  fsinfo_missing,       // "No FSINFO sector"
  fsinfo_signature,     // "FSINFO sector has bad magic number(s)"
  free_count,           // "Free cluster summary wrong (%ld vs. really %ld)"
  free_count_unknown,   // "Free cluster summary uninitialized (should be %ld)"
  next_free,            // (fsck.fat ignores the hint) next-free hint not a cluster
  dirty,                // "Dirty bit is set. Fs was not properly unmounted ..."
  io_error_bit,         // (not checked by fsck.fat) FAT[1] no-I/O-error bit clear
  media_mismatch,       // (not checked by fsck.fat) FAT[0] low byte is not BPB_Media
  fat0_reserved,        // "FATs differ and both appear to be corrupt" / "Both FATs appear to be corrupt"
  fat1_reserved,        // (not checked by fsck.fat) FAT[1] is not an end-of-chain mark
  volume_note,          // what Volume::open noted (type label, few clusters, ...)
  // the FAT
  copies_differ,  // "FATs differ but appear to be intact. Using first FAT."
  out_of_range,   // "Cluster %ld out of range (%ld > %ld). Setting to EOF."
  lost_clusters,  // "Reclaimed %d unused clusters (%llu bytes)."
  // chains
  free_in_chain,      // "Contains a free cluster (%lu). Assuming EOF."
  bad_in_chain,       // "Contains a bad cluster (%lu). Assuming EOF."
  loop,               // "Circular cluster chain. Truncating to %lu clusters."
  cross_link,         // "%s  and\n%s\n  share clusters."
  chain_longer,       // "File size is %u bytes, cluster chain length is > %u bytes."
  size_beyond_chain,  // "File size is %u bytes, cluster chain length is %u bytes."
  bad_start,          // "Bad start cluster 1." / "Start cluster beyond limit (%lu > %lu)."
  root_chain,         // "FAT32 root dir starts with a bad cluster!" (fsck.fat gives up)
  // directory entries
  dir_size,           // "Directory has non-zero size. Fixing it."
  dir_start,          // "Start does point to root directory / containing directory ..."
  bad_name,           // "Bad short file name (%s)."
  duplicate_name,     // "Duplicate directory entry."
  dot_entry,          // "Invalid '.' entry in the first slot." and the like
  lfn_orphan,         // "Orphaned long file name part \"%s\""
  lfn_start_cluster,  // "Start cluster field in VFAT long filename slot is not 0"
  lfn_damaged,        // "Wrong checksum for long file name", fragments, unfinished names
  after_end,          // live entries after a 0x00 slot (fsck.fat and Linux read them)
  dir_unreadable,     // a directory longer than 2 MiB, or a read error
  label,              // "Volume label '%s' stored in root directory and label '%s' ..."
};
inline constexpr std::size_t kCheckKinds = std::size_t(CheckKind::label) + 1;
const char* check_kind_name(CheckKind kind);  // "copies_differ": the --json "class"

struct CheckFinding {
  CheckKind kind;
  Severity severity;
  std::string where;     // "/DIR/A.BIN", "FAT copy 1", "FSInfo sector 1", "boot sector"
  std::string message;   // what is wrong
  std::string action;    // what repair does ("Truncating file to 20480 bytes."); empty: nothing
  bool fixable = false;  // the plan does `action`
};

struct CheckCounts {
  std::uint64_t files = 0;
  std::uint64_t directories = 0;      // not counting the root
  std::uint64_t clusters = 0;         // data clusters on the volume
  std::uint64_t used = 0;             // clusters files and directories keep
  std::uint64_t bad = 0;              // clusters marked bad
  std::uint64_t free_after = 0;       // free once the plan is carried out
  std::uint64_t lost = 0;             // allocated, owned by no chain
  std::uint64_t lost_chains = 0;      // lost clusters no other lost cluster points to
  std::uint64_t cut_off = 0;          // clusters cut off chains that grew past their files
  std::uint64_t recovered_files = 0;  // FSCKnnnn.REC files the plan makes of lost chains (salvage)
  std::uint64_t entries = 0;          // every entry checked, labels too: fsck.fat's "N files"
  std::uint64_t fat_bytes_read = 0;
};

struct CheckOptions {
  std::size_t max_findings_per_kind = 1000;  // beyond: counted in CheckResult::omitted
  fsio::Progress* progress = nullptr;        // fed FAT bytes examined (check_work)
  // fsck.fat -a, -y, -p and -f (fat.c reclaim_file): the plan keeps each lost
  // chain as a file FSCK0000.REC, FSCK0001.REC, ... in the root directory
  // instead of freeing it (check_salvage.cpp). Off: they are freed (reclaim_free).
  bool salvage = false;
};

struct CheckResult {
  std::vector<CheckFinding> findings;
  // How many findings, first in `findings`, are the boot area's (boot
  // sector, FSInfo, dirty bits, FAT[0..1]); the FAT's and the tree's follow.
  std::size_t boot_findings = 0;
  std::array<std::uint64_t, kCheckKinds> omitted{};  // findings not kept, by kind
  std::array<std::uint64_t, kCheckKinds> omitted_errors{};
  std::uint64_t omitted_unfixable = 0;
  CheckCounts counts;
  std::vector<std::string> checked;  // what was checked, a line each (-v)
  RepairPlan plan;

  std::uint64_t count(Severity severity) const;  // errors: kept and omitted; others: kept
  std::uint64_t unfixable_errors() const;
};

// The whole check. Reads only. Errors are I/O errors and Errc::interrupted
// (fsio::InterruptGuard fired; polled between directories and FAT chunks);
// whatever is wrong with the volume is a finding.
fsio::Result<CheckResult> check_volume(Volume& volume, const CheckOptions& options = {});

// The progress total check_volume reports against, in FAT bytes: every
// copy read once, and the entries of the clusters in use (from FSInfo when
// it knows, else half the volume).
std::uint64_t check_work(const Volume& volume);

}  // namespace fat
