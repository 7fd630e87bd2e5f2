// Repairing a FAT volume: the plan check_volume (check.hpp) makes, and the
// writes that carry it out in an order a crash cannot turn into data loss.
//
// The plan is a set of independent edits, each one something fsck.fat -a
// would also do: write one FAT copy over the others, set FAT entries to
// end-of-chain (cut a chain where it goes wrong), free every allocated
// cluster no file owns, rewrite directory slots (sizes, first clusters,
// names, deleted slots), the boot-sector label, FSInfo, and the dirty bits.
//
// repair_volume writes them in this order, each step flushed to the device
// before the next begins:
//   1. mirror: the copy read is written over the other copies (when copies
//      differ). If the copy read is not copy 0, copy 0's first block, the
//      one holding FAT[0], goes last: until then fsck.fat still takes copy 0
//      for damaged and reads the good copy, as we did.
//   2. mark dirty: the boot sector's dirty flag (Linux FAT_STATE_DIRTY) is
//      set, so a crash from here on leaves a volume every OS checks, as a
//      mount does.
//   3. cut: FAT[0] and the end-of-chain marks. Chains only get shorter, at
//      the points this plan keeps; nothing is freed yet.
//   4. directories and boot label: sizes, first clusters, names, deleted
//      slots. A size shrinks to its chain only after the chain was cut, so
//      fsck.fat never meets a size shorter than a chain that runs into
//      another file's clusters (it would free them).
//   5. reclaim: entries no chain owns are freed (lost clusters, the tails
//      cut off in 3, out-of-range entries nobody owns).
//   6. FSInfo: free count and next-free hint.
//   7. clean: FAT[1]'s clean-shutdown bit set, the dirty flag cleared.
// A crash after any write leaves what fsck.fat repairs the same way: a
// chain cut whose size is not yet fixed ("File size is N bytes, cluster
// chain length is M"), clusters not yet freed ("Reclaimed N unused
// clusters"), a stale free count, FAT copies that differ in entries the
// plan changes (fsck.fat takes copy 0, which IoQueue writes first), the
// dirty bit. Within steps 3 and 5 FAT writes go out in batches of at most
// kRepairBatchSectors dirty sectors; every batch boundary is a safe point.
//
// Known limit: a FAT12 entry that straddles two sectors is written by two
// sector writes; a crash between them leaves a mix of old and new bits, as
// it would for the kernel and fsck.fat.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fat/bitmap.hpp"
#include "fat/volume.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/result.hpp"

namespace fat {

using SlotBytes = std::array<std::uint8_t, 32>;

struct RepairPlan {
  std::optional<std::uint32_t> mirror_from;                // copy to write over every other copy
  std::optional<std::uint32_t> fat0;                       // new FAT[0] (media byte, reserved bits set)
  ClusterBitmap cut;                                       // entries to set to end-of-chain; empty: none
  bool reclaim = false;                                    // free non-free, non-bad entries `owned` lacks
  ClusterBitmap owned;                                     // clusters files and directories keep
  std::map<std::uint64_t, SlotBytes> slots;                // directory slots rewritten whole, by device offset
  std::optional<std::array<std::uint8_t, 11>> boot_label;  // BS_VolLab, primary and backup
  bool clear_dirty = false;                                // FAT[1] clean bit, boot-sector dirty flag
  struct FsInfoCounts {
    std::uint32_t free_count;
    std::uint32_t next_free;
  };
  std::optional<FsInfoCounts> fsinfo;

  bool empty() const {
    return !mirror_from && !fat0 && cut.size() == 0 && !reclaim && slots.empty() && !boot_label && !clear_dirty &&
           !fsinfo;
  }
  // FAT or directory changes: worth marking the volume dirty first.
  bool changes_tree() const { return mirror_from || fat0 || cut.size() || reclaim || !slots.empty(); }
};

// Dirty FAT sectors (per copy) after which steps 3 and 5 write a batch.
inline constexpr std::uint64_t kRepairBatchSectors = 8192;

struct RepairReport {
  std::vector<std::string> steps;  // "cut 3 chains (3 FAT entries)", in order done
  std::string step;                // the step running, or the last one done
  std::uint64_t copies_mirrored = 0;
  std::uint64_t entries_cut = 0;
  std::uint64_t clusters_freed = 0;
  std::uint64_t slots_written = 0;
  bool fsinfo_written = false;
  bool marked_dirty = false;  // step 2 ran: the volume says dirty until step 7
  bool complete = false;
};

// Carries out the plan (see above). Stops between batches when
// fsio::InterruptGuard fired: Errc::interrupted naming the step reached;
// what was written by then is consistent (see above) and `report` says how
// far it got. A write error stops it the same way with the error.
fsio::Status repair_volume(Volume& volume, const RepairPlan& plan, RepairReport& report,
                           fsio::Progress* progress = nullptr);

}  // namespace fat
