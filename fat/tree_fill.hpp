// A new FAT volume holding a tree (mkfat -d): everything planned from the
// TreeSource's listing before the first write, then one batched pass.
//
//   fsio::Tree tree = FSIO_TRY(source.list());
//   TreeNames names = FSIO_TRY(plan_names(tree, options, label_present));   // refusals by path
//   std::uint64_t kib = FSIO_TRY(smallest_blocks(tree, names, options, fmt, facts));  // -C auto
//   Geometry g = FSIO_TRY(compute_geometry(...));
//   TreeLayout layout = FSIO_TRY(lay_out(tree, names, g, bad_clusters, options));  // "needs N clusters"
//   TreeWriter writer(layout, tree, source);     // FormatContent for format_volume
//   FSIO_TRY(format_volume(queue, g, fmt, &progress, {.content = &writer.content()}));
//
// Where things go (the same tree always gives the same bytes):
//   - names: each directory's entries in the Tree's order (bytewise), '.'
//     and '..' first, the root's volume label in its first slot; long names
//     and 8.3 names as Linux's vfat makes them (names.hpp), slots packed;
//   - clusters: from cluster 2 up, skipping bad ones, first every directory
//     in tree order (the FAT32 root first, at BPB_RootClus 2), then every
//     file in tree order, each in one run, so the files are one sequential
//     stream on the disk and the directories one block before it;
//   - times: a file's or directory's modification time (SOURCE_DATE_EPOCH
//     clamps newer ones to it) as DIR_WrtTime/Date, at FAT's 2 seconds
//     (rounded down, as Linux's fat_time_unix2fat); DIR_LstAccDate its
//     date, as Linux leaves it after setting a copy's times (utimensat with
//     the same time for both); DIR_CrtTime/Date/Tenth the time of the run
//     (clock, SOURCE_DATE_EPOCH or --invariant's), as Linux stamps a file
//     when it is made; '.' and '..' carry that time in every field, as
//     Linux's fat_alloc_new_dir writes them. Before 1980 is 1980-01-01
//     00:00:00, from 2108 on 2107-12-31 23:59:58 (Linux's bounds). UTC unless
//     TreeOptions::utc is false (then the process's time zone, TZ).
// What FAT cannot hold is refused naming the path: a name vfat refuses
// (names.hpp), two names of one directory equal when case is ignored
// (Unicode's simple upper case, as Windows compares), a file of 4 GiB or
// more, more than 65536 slots in a directory, a device, FIFO or socket
// (unless skip_special: then skipped and listed), a symbolic link (the
// source resolves them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fat/alloc.hpp"
#include "fat/fill.hpp"
#include "fat/format.hpp"
#include "fat/names.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/tree_source.hpp"

namespace fat {

struct TreeOptions {
  bool skip_special = false;  // --skip-special: leave devices, FIFOs, sockets out, named in `skipped`
  ShortNameStyle style = ShortNameStyle::win95;
  const OemCodepage* codepage = nullptr;  // --codepage for 8.3 names; nullptr: non-ASCII becomes '_'
  std::optional<std::int64_t> clamp;      // SOURCE_DATE_EPOCH: newer times become this
  fsio::TimeSpec made{};                  // the run's time: creation stamps
  bool utc = true;                        // false: local time (TZ), as --tz asks
  std::uint64_t slack_bytes = 0;          // --slack SIZE: free space the volume keeps beyond the tree
  unsigned slack_percent = 0;             // --slack PCT: of the clusters the tree takes
};

// What FAT makes of each node of the tree (same index).
struct PlannedNode {
  bool kept = false;        // a directory or file that goes in (not the root, a skipped one)
  NameSlots name;           // its slots in its parent
  std::uint32_t slots = 0;  // directories: slots of their own contents, '.' and '..' (and the label) included
};

struct TreeNames {
  std::vector<PlannedNode> nodes;
  std::vector<std::string> skipped;  // "SRC/dev/null: a character device" (skip_special)
  std::uint64_t files = 0;           // kept regular files
  std::uint64_t directories = 0;     // kept directories, the root not counted
  std::uint64_t bytes = 0;           // of the kept files
  bool label = false;                // the root's first slot is the volume label's
};

// Names, refusals and slot counts: everything that does not depend on the
// geometry. `label` says whether the root's first slot holds a volume label.
// Errc::unsupported naming the path: the tree, not the command line, is at fault.
fsio::Result<TreeNames> plan_names(const fsio::Tree& tree, const TreeOptions& options, bool label);

// What the tree takes on a volume of this type and cluster size.
struct TreeNeeds {
  std::uint64_t clusters = 0;    // files and directories (the FAT32 root included), slack left out
  std::uint64_t slack = 0;       // clusters --slack keeps free
  std::uint32_t root_slots = 0;  // slots of the root directory
};
TreeNeeds tree_needs(const fsio::Tree& tree, const TreeNames& names, const TreeOptions& options, FatType type,
                     std::uint64_t cluster_bytes);

// Whether `layout` (with `bad` clusters marked bad) holds the tree and the
// slack: Errc::busy (no room, as fill refuses) with the numbers otherwise ("the tree needs
// 1,234 clusters of 4 KiB (and 10 free: --slack); the volume has 1,100";
// "the root directory needs 600 slots; FAT16's holds 512 (-r)").
fsio::Status check_tree_fits(const Layout& layout, const TreeNeeds& needs, std::uint64_t bad);

// -C with SIZE auto: the fewest 1 KiB blocks (mkfs.fat's BLOCKS) after
// `format.offset_sectors` for which compute_geometry gives a volume that
// holds the tree and the slack, with the FAT type format.fat_type asks for
// or, when 0, the one mkfs.fat's rules choose for that size. A FAT32 is
// never smaller than 65525 clusters (fatgen103: fewer is FAT16 to every
// reader that counts). Searches each run of sizes of one FAT type and
// cluster size (mkfs.fat's choice moves through them in order as the size
// grows) and takes the smallest that fits. Errc::busy when no size up to
// what FAT can address holds it.
fsio::Result<std::uint64_t> smallest_blocks(const fsio::Tree& tree, const TreeNames& names, const TreeOptions& options,
                                            FormatOptions format, const DeviceFacts& facts = {});

// The volume's bytes, planned: where every directory and file goes, the
// directories' bytes, and the FAT's.
struct TreeLayout {
  Layout layout;
  std::vector<std::vector<Extent>> extents;  // per node: directories and non-empty files
  std::vector<fsio::AlignedBuffer> dirs;     // per node (directories): their clusters' bytes; [0] the root
  fsio::AlignedBuffer fat;                   // the first bytes of every FAT copy (whole sectors)
  std::uint64_t dir_clusters = 0;            // clusters of directories (the FAT32 root's included)
  std::uint64_t file_clusters = 0;
  std::uint32_t free_clusters = 0;             // after the tree, bad ones left out (FSInfo)
  std::uint32_t last_allocated = 0;            // FSInfo's next-free hint, as Linux keeps it
  std::uint64_t data_begin = 0, data_end = 0;  // device offsets of the file clusters
  std::uint64_t bad = 0;
  TreeNeeds needs;
};

// Allocates and builds. `bad_clusters` (sorted) are skipped and marked bad.
// Errc::busy from check_tree_fits when it does not fit.
fsio::Result<TreeLayout> lay_out(const fsio::Tree& tree, const TreeNames& names, const Geometry& geometry,
                                 const std::vector<std::uint32_t>& bad_clusters, const TreeOptions& options);

// The DOS date and time of a moment, clamped and bounded as above (tenths:
// DIR_CrtTimeTenth, 0..199).
DosDateTime tree_time(fsio::TimeSpec t, const TreeOptions& options);

// Writes the data area for format_volume (FormatContent::write_data): the
// directories other than the root's first cluster, then every content the
// source delivers, through windows of the data area that go out whole, in
// order, as one stream of large requests from the calling thread while the
// source reads on a thread of its own (see tree_write.cpp). Progress counts file bytes and files.
struct TreeWriteStats {
  std::uint64_t file_bytes = 0;     // bytes delivered by the source
  std::uint64_t bytes_written = 0;  // data area, directories included
  std::uint64_t batches = 0;        // plugs
  double read_wait_seconds = 0;     // the writing thread idle, waiting for the source
  double write_wait_seconds = 0;    // the source waiting for the writer (back-pressure)
};

class TreeWriter {
 public:
  TreeWriter(const TreeLayout& layout, const fsio::Tree& tree, fsio::TreeSource& source);
  // What format_volume writes besides the empty tables, and the data writer it calls.
  const FormatContent& content() const { return content_; }
  const TreeWriteStats& stats() const { return stats_; }

 private:
  fsio::Status write_data(fsio::IoQueue& queue, fsio::Progress* progress);
  const TreeLayout& layout_;
  const fsio::Tree& tree_;
  fsio::TreeSource& source_;
  FormatContent content_;
  TreeWriteStats stats_;
};

}  // namespace fat
