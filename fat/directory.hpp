// Directories: read whole (a FAT directory holds at most 65536 slots of 32
// bytes, 2 MiB: fatgen103 p.26, Linux FAT_MAX_DIR_SIZE), parsed into entries
// with their long names, edited in memory, written back sector by sector.
//
//   FAT12/16 root: the fixed region after the FATs (BPB_RootEntCnt slots)
//   FAT32 root:    the cluster chain from BPB_RootClus
//   subdirectory:  the cluster chain from its entry's first cluster
//
// Parsing follows the kernel (fat_parse_long) and fsck.fat (lfn.c): a long
// name is a run of slots ordered N|0x40, N-1, ..., 1 with one checksum, right
// before the 8.3 entry whose checksum it carries; anything else is an
// LfnProblem (a stray fragment, an orphaned or unfinished run, a checksum
// that does not match, a start cluster in an LFN slot) and the entry keeps
// its short name.
// Deleted slots (0xE5) are skipped; the first slot starting with 0x00 ends
// the directory (fatgen103 p.24, as Windows and mtools read it). A reader
// can ask for fsck.fat's and Linux's reading instead (read_past_end): a
// 0x00 slot is skipped like a deleted one and the slots after it are parsed.
//
// Every slot has a position (cluster, sector, byte) so a writer can reuse
// free slots and a checker can name what it finds. Not thread-safe; holds no
// reference to the Volume after open.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fat/chain.hpp"
#include "fat/dirent.hpp"
#include "fat/names.hpp"
#include "fat/volume.hpp"

namespace fat {

inline constexpr std::uint64_t kMaxDirBytes = 65536 * 32;

struct SlotPosition {
  std::uint32_t index = 0;    // slot number in the directory, from 0
  std::uint32_t cluster = 0;  // cluster holding it; 0 in the FAT12/16 root region
  std::uint64_t sector = 0;   // filesystem sector holding it
  std::uint32_t offset_in_sector = 0;
  std::uint64_t device_offset = 0;  // Device-window byte offset
};

struct Entry {
  std::string name;        // the long name when there is a valid one, else short_name
  std::string long_name;   // UTF-8; empty when none
  std::string short_name;  // decoded, case bits applied: "README.TXT", "readme.txt"
  ShortName raw_name{};    // DIR_Name as stored
  std::uint8_t attributes = 0;
  std::uint8_t nt_reserved = 0;
  std::uint32_t first_cluster = 0;  // FstClusHI:FstClusLO (HI only on FAT32)
  std::uint32_t size = 0;
  DosDateTime created;           // DIR_CrtDate, DIR_CrtTime, DIR_CrtTimeTenth
  std::uint16_t accessed = 0;    // DIR_LstAccDate
  DosDateTime modified;          // DIR_WrtDate, DIR_WrtTime
  std::uint32_t slot = 0;        // index of the 8.3 entry
  std::uint32_t first_slot = 0;  // index of its first LFN slot (== slot without one)

  bool is_directory() const { return attributes & attr::directory; }
  bool is_label() const { return attributes & attr::volume_id; }
  bool is_dot() const { return raw_name[0] == '.'; }  // "." or ".." (no other name starts with a dot)
  std::uint32_t slot_count() const { return slot - first_slot + 1; }
};

// The kinds, with what fsck.fat 4.2 prints for each (lfn.c).
struct LfnProblem {
  enum class Kind {
    fragment,       // a slot outside any run: "Long filename fragment ... found outside a LFN sequence"
    orphan,         // a run no 8.3 entry follows (cut by a deleted slot, the end, a new run):
                    // "Orphaned long file name part"
    unfinished,     // an 8.3 entry before the run reached slot 1: "Unfinished long file name"
    checksum,       // a whole run whose checksum is not its 8.3 entry's: "Wrong checksum for long file name"
    part_checksum,  // a slot whose checksum differs from its run's: "Checksum in long filename part wrong"
    start_cluster,  // LDIR_FstClusLO not 0: "Start cluster field in VFAT long filename slot is not 0"
  };
  Kind kind;
  std::uint32_t first_slot = 0;
  std::uint32_t slots = 0;
  std::string text;  // the characters the slots hold, as far as they go
};

class Directory {
 public:
  // The root directory (FAT12/16 region or FAT32 chain).
  static fsio::Result<Directory> open_root(Volume& volume);
  // The directory whose chain starts at first_cluster. A first cluster that
  // is not a cluster gives an empty directory whose chain() says bad_start;
  // a damaged chain gives its well-formed prefix; read errors are errors.
  static fsio::Result<Directory> open(Volume& volume, std::uint32_t first_cluster);
  // The directory an entry names (Errc::invalid_argument for a file);
  // first cluster 0 is the root (a ".." entry pointing at the root holds 0
  // even on FAT32).
  static fsio::Result<Directory> open(Volume& volume, const Entry& entry);
  // A new, empty subdirectory at `cluster` whose parent directory starts at
  // `parent_cluster` (0 or BPB_RootClus for the root): one zeroed cluster
  // holding "." and ".." (make_dot_entries), in memory, every sector dirty.
  // Nothing is read or written: the caller writes it (queue_dirty) and
  // links the cluster in the FAT before any entry points at it.
  static Directory create(const Layout& layout, std::uint32_t cluster, std::uint32_t parent_cluster, DosDateTime when);

  bool is_root() const { return root_; }
  std::uint32_t first_cluster() const { return first_cluster_; }  // 0 for the FAT12/16 root region
  const Chain& chain() const { return chain_; }
  bool truncated() const { return truncated_; }  // chain longer than kMaxDirBytes; the rest not read
  const std::vector<std::uint32_t>& clusters() const { return clusters_; }

  std::uint32_t slot_count() const { return std::uint32_t(bytes_ / 32); }
  SlotPosition position(std::uint32_t index) const;
  std::span<const std::byte> slot(std::uint32_t index) const { return data_.span().subspan(index * 32ull, 32); }
  // The first slot beginning with 0x00, if any: it and every later slot are
  // free (unless read_past_end).
  std::optional<std::uint32_t> end_slot() {
    refresh();
    return end_;
  }
  // fsck.fat 4.2 (check.c scan_dir, add_file: IS_FREE) and Linux read every
  // slot of a directory: a 0x00 slot is free like a deleted one, and live
  // entries after it are entries. From now on entries() and problems() hold
  // them too, and a slot after the end is free only if it is 0x00 or 0xE5.
  // Checkers and fatfill's writer read so; add() then leaves a live entry
  // after the end where it is.
  void read_past_end() {
    past_end_ = true;
    stale_ = true;
  }

  const std::vector<Entry>& entries() {
    refresh();
    return entries_;
  }
  const std::vector<LfnProblem>& problems() {
    refresh();
    return problems_;
  }
  // A file or directory by long or short name, ASCII case-insensitively;
  // never the volume label or the dot entries.
  const Entry* find(std::string_view name);
  bool short_name_taken(const ShortName& name);

  // ---- writing (in memory until queue_dirty) ----
  // The first index of `count` consecutive free slots (deleted, or at and
  // after the end), not right after a live LFN slot; nullopt when the
  // directory must grow. With `within` (a power of two) and count <=
  // within, the run does not cross a multiple of `within` slots: 16 keeps
  // a name's slots in one 512-byte unit, which a crash cannot tear, so a
  // long name is never left half-written.
  std::optional<std::uint32_t> find_free(std::uint32_t count, std::uint32_t within = 0);
  // Writes whole slots (a multiple of 32 bytes) into free slots at index and
  // parses them: the entries appear in entries() and find(). If they reach
  // past the end slot, the slot after them becomes the new end (zeroed), so
  // no stale slot beyond becomes visible; if they start past it, the slots
  // between are marked deleted (0xE5), so readers do not stop before them. Errc::invalid_argument if a
  // target slot is in use or past the directory.
  fsio::Status add(std::uint32_t index, std::span<const std::byte> slots);
  // Overwrites slots whatever they hold (a checker's repair); entries() is
  // parsed again on the next call.
  fsio::Status overwrite(std::uint32_t index, std::span<const std::byte> slots);
  // Grows a chained directory by one zeroed cluster; the caller links it in
  // the FAT. Errc::unsupported for the fixed FAT12/16 root region.
  fsio::Status append_cluster(std::uint32_t cluster);

  std::uint64_t dirty_sectors() const;
  // Queues every dirty sector (runs within a cluster merged); the buffer
  // must stay untouched until the plug finishes. Returns the requests.
  std::size_t queue_dirty(fsio::IoQueue::Plug& plug) const;
  void clear_dirty();

 private:
  Directory(const Layout& layout, bool root, std::uint32_t first_cluster);
  fsio::Status load(Volume& volume);
  void refresh();
  void parse(std::uint32_t from, std::uint32_t to, bool whole);
  void index_entry(const Entry& e);
  void mark(std::uint32_t index, std::uint32_t count);
  bool is_free(std::uint32_t index) const;
  fsio::Status check_range(std::uint32_t index, std::size_t bytes) const;

  Layout layout_;
  bool root_;
  std::uint32_t first_cluster_;
  Chain chain_;
  bool truncated_ = false;
  std::vector<std::uint32_t> clusters_;
  fsio::AlignedBuffer data_;
  std::uint64_t bytes_ = 0;
  std::vector<bool> dirty_;  // per sector of data_
  bool stale_ = true;
  bool past_end_ = false;  // read_past_end()
  std::vector<Entry> entries_;
  std::vector<LfnProblem> problems_;
  std::optional<std::uint32_t> end_;
  std::uint32_t free_hint_ = 0;                           // no free slot before it
  std::unordered_map<std::string, std::size_t> by_name_;  // folded long and short names
  std::unordered_set<std::string> short_names_;           // raw 11-byte names in use
};

// The entry at an absolute path ("/DIR/SUB/NAME"; '/' separated, empty
// parts ignored), looked up like Directory::find. "/" gives a synthetic
// directory entry for the root (first cluster 0 on FAT12/16, BPB_RootClus on
// FAT32). Errc::not_found naming the first missing part; Errc::invalid_argument
// when a part before the last is not a directory.
fsio::Result<Entry> lookup(Volume& volume, std::string_view path);

// An 8.3 entry for a new file or directory: name and case bits from `name`,
// first cluster split into HI/LO (HI only on FAT32), dates as given.
DirEntry make_entry(const NameSlots& name, std::uint8_t attributes, std::uint32_t first_cluster, std::uint32_t size,
                    DosDateTime when, FatType type);
// The slots to add() for it: LFN slots, then the 8.3 entry.
std::vector<std::byte> entry_slots(const NameSlots& name, const DirEntry& entry);
// "." and ".." for a new directory at `self` whose parent is `parent`: a
// parent that is the root is written as cluster 0 on every FAT type
// (fatgen103 p.26; Linux and fsck.fat expect 0 on FAT32 too).
std::array<DirEntry, 2> make_dot_entries(const Layout& layout, std::uint32_t self, std::uint32_t parent,
                                         DosDateTime when);

}  // namespace fat
