// mkext4 -d SRC: the tree a new filesystem is filled with, as mke2fs -d
// fills it. mkext4's run calls it at three points:
//   1. start(), before anything is written: SRC opened and listed (a
//      directory or a tar archive, cmd/tree/source.hpp; symbolic links
//      kept as links), every node checked (names, symlink targets, times)
//      and counted, and refused with the numbers when the planned
//      filesystem has fewer free inodes or blocks than the tree takes at
//      the least;
//   2. check_apart(): the source shares no storage with the target;
//   3. fill(), after the format wrote everything but its primary
//      superblock: every node made in the metadata cache (ext/tree_fill.hpp:
//      the exact allocation, so a tree that does not fit after all is
//      refused here, before any of its data is written), the data, the
//      commit, and the primary superblock last. A crash before that last
//      write leaves no filesystem blkid recognises.
// --dry-run stops after 2 and reports the tree counted.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "cmd/mkext4_args.hpp"
#include "ext/mkfs.hpp"
#include "ext/tree_fill.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::cli {

class Mkext4Tree {
 public:
  // `epoch`: SOURCE_DATE_EPOCH's seconds, if set; later times become it.
  // open() then check(): the order for a given size.
  static Result<std::unique_ptr<Mkext4Tree>> start(const std::string& source, const ext::MkfsPlan& plan,
                                                   std::optional<std::int64_t> epoch, const TreeOwners& owners);
  // SRC opened and listed (SIZE auto chooses the size from the tree).
  static Result<std::unique_ptr<Mkext4Tree>> open(const std::string& source);
  // Every node checked and counted against the plan.
  Status check(const ext::MkfsPlan& plan, std::optional<std::int64_t> epoch, const TreeOwners& owners);
  const Tree& tree() const { return tree_; }
  // SIZE auto: the size chosen, in the summary and the JSON.
  void set_chosen(std::uint64_t mib) { chosen_mib_ = mib; }
  Status check_apart(const std::string& target) const;
  // Fills the filesystem just formatted on `device` through `queue` (the
  // format's, so FSIO_FAULT counts on) and writes `primary` last. Returns
  // the queue's statistics at the end.
  Result<IoStats> fill(std::unique_ptr<Device> device, std::unique_ptr<IoQueue> queue, const std::string& target,
                       std::span<const std::byte> primary, Progress* progress);
  // Data bytes fill() writes, for a progress bar.
  std::uint64_t work_bytes() const { return count_.data_bytes; }

  // "would fill it with 3,393 files, 212 directories, 15 symbolic links and 2 other files (57 MiB)"
  std::string summary(bool dry_run) const;
  nlohmann::json json(bool written) const;

 private:
  Mkext4Tree() = default;
  std::string source_;
  std::unique_ptr<TreeSource> src_;
  Tree tree_;
  ext::TreeCount count_;
  ext::TreeFillOptions opt_;
  std::uint64_t free_blocks_ = 0, free_inodes_ = 0;
  std::optional<ext::TreeFillReport> done_;
  std::uint64_t chosen_mib_ = 0;
};

}  // namespace fsio::cli
