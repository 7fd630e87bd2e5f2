// Reading an existing FAT volume: the boot sector parsed into one Layout and
// checked the way the Linux kernel (fat_fill_super) and fsck.fat (read_boot)
// check it, FSInfo, the backup boot sector, the dirty bits, and the FAT.
//
//   auto queue = FSIO_TRY(fsio::IoQueue::create(device));
//   auto vol = FSIO_TRY(fat::Volume::open(queue));
//   vol.layout().cluster_count;  vol.fat().get(5);  vol.findings();
//
// What makes a volume unusable is an error (Errc::corrupt for a field that
// contradicts the spec or the device, Errc::unsupported for a valid feature
// we do not handle), naming the field and its value:
//   "boot sector: BPB_BytsPerSec 1000 is not a power of two in 512..32768".
// What a volume can live with (a missing or stale FSInfo, a backup boot
// sector that differs, the dirty bits, a FAT32 with few clusters) is a
// Finding: the tool decides whether to refuse, warn or repair.
// FORMAT.md lists every check and whom it follows.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fat/layout.hpp"
#include "fat/table.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/result.hpp"

namespace fat {

// The boot sector's fields that are not layout.
struct BootRecord {
  std::array<std::uint8_t, 8> oem_name{};  // BS_OEMName
  std::uint8_t boot_signature = 0;         // BS_BootSig: 0x29 = id, label and type present
  std::uint32_t volume_id = 0;             // BS_VolID (0 unless boot_signature is 0x28/0x29)
  std::array<std::uint8_t, 11> label{};    // BS_VolLab (spaces unless 0x29)
  std::array<std::uint8_t, 8> fs_type{};   // BS_FilSysType: informational only
  std::uint8_t state = 0;                  // BS_Reserved1: Linux's FAT_STATE_DIRTY is bit 0
  std::uint16_t fs_version = 0;            // BPB_FSVer (FAT32)
};

// Byte offsets of the boot sector fields writers patch (fatck clears the
// dirty flag), for the FAT12/16 and the FAT32 layout of the extended BPB.
inline constexpr std::size_t kStateOffset16 = 0x25;
inline constexpr std::size_t kStateOffset32 = 0x41;
inline constexpr std::uint8_t kStateDirty = 0x01;  // Linux FAT_STATE_DIRTY

struct Finding {
  enum class Kind {
    fat32_few_clusters,   // FAT32 BPB with < 65525 clusters (mkfs.fat -F 32 makes these)
    linux_unmountable,    // sector > 4096 bytes, or a root directory that ends mid-sector
    fs_type_label,        // BS_FilSysType names another type than the cluster count
    mirroring_disabled,   // FAT32 BPB_ExtFlags bit 7: one active copy
    fsinfo_missing,       // BPB_FSInfo 0, 0xFFFF or outside the reserved area
    fsinfo_signature,     // FSInfo signatures wrong (fsck.fat: "bad magic number(s)")
    fsinfo_free_count,    // free count above the cluster count (not 0xFFFFFFFF)
    fsinfo_next_free,     // next-free hint not a cluster (not 0xFFFFFFFF)
    backup_boot_missing,  // FAT32 BPB_BkBootSec 0, 0xFFFF or outside the reserved area
    backup_boot_differs,  // first 512 bytes differ (fsck.fat compares those)
    dirty_state,          // BS_Reserved1 bit 0 (Linux sets it while mounted)
    fat_not_clean,        // FAT[1] clean-shutdown bit clear (FAT16 bit 15, FAT32 bit 27)
    fat_io_errors,        // FAT[1] no-I/O-error bit clear (FAT16 bit 14, FAT32 bit 26)
    media_mismatch,       // FAT[0] low byte is not BPB_Media
  };
  Kind kind;
  std::string message;
};

struct FsInfoState {
  std::uint32_t sector = 0;       // BPB_FSInfo
  bool signatures_ok = false;     // lead, struct and trail signatures all right
  std::uint32_t free_count = 0;   // FSI_Free_Count as stored
  std::uint32_t next_free = 0;    // FSI_Nxt_Free as stored
  bool free_count_known = false;  // signatures ok and free_count <= cluster_count
  bool next_free_known = false;   // signatures ok and next_free a cluster number
};

struct DirtyState {
  bool state_flag = false;     // boot sector BS_Reserved1 bit 0
  bool fat_not_clean = false;  // FAT[1] clean-shutdown bit clear
  bool fat_io_errors = false;  // FAT[1] hard-error bit clear
  // fsck.fat's "Dirty bit is set" (check_dirty_bits): the first two.
  bool dirty() const { return state_flag || fat_not_clean; }
};

// The boot sector alone, parsed and checked: what parse_boot_sector returns.
struct BootSectorInfo {
  Layout layout;
  BootRecord record;
  std::vector<Finding> findings;
};

// Parses sector 0 (at least 512 bytes; the BPB and the 0x55AA signature at
// byte 510 live there whatever the sector size). `available` is the bytes
// of the device window from the filesystem start on: a volume that needs
// more is Errc::corrupt (a truncated image). Pure: no I/O.
fsio::Result<BootSectorInfo> parse_boot_sector(std::span<const std::byte> sector, std::uint64_t available,
                                               std::uint64_t offset_bytes = 0);

struct VolumeOptions {
  std::uint64_t offset_bytes = 0;  // filesystem start in the Device window
  FatCacheOptions fat_cache;
};

class Volume {
 public:
  // Reads and checks the boot sector, FSInfo, the backup boot sector and
  // FAT[0..1]. Errors are wrapped with the device path. The queue must
  // outlive the Volume and must not move. A FAT sector smaller than the
  // device's direct-I/O unit turns the device buffered (use_buffered).
  static fsio::Result<Volume> open(fsio::IoQueue& queue, const VolumeOptions& options = {});

  const Layout& layout() const { return layout_; }
  const BootRecord& record() const { return record_; }
  const std::vector<Finding>& findings() const { return findings_; }
  bool has(Finding::Kind kind) const;
  const std::optional<FsInfoState>& fsinfo() const { return fsinfo_; }
  const DirtyState& dirty() const { return dirty_; }
  // Sector 0 as read (sector_size bytes), for tools that patch and rewrite it.
  std::span<const std::byte> boot_sector() const { return boot_.span(); }

  FatTable& fat() { return fat_; }
  fsio::IoQueue& queue() { return *queue_; }
  const std::string& path() const { return queue_->device().path(); }

  // Where a cluster search should start: FSI_Nxt_Free when it names a
  // cluster, else 2 (Linux fat_fill_super falls back the same way).
  std::uint32_t allocation_hint() const;

  // Reads `count` clusters from `first` into out (count * cluster_bytes
  // bytes). Clusters outside 2..cluster_count+1 are Errc::invalid_argument.
  fsio::Status read_clusters(std::uint32_t first, std::uint32_t count, std::span<std::byte> out);

  // Queues a write of the FSInfo sector (every other byte as read) with
  // these counters; returns false, queuing nothing, when the volume has no
  // usable FSInfo sector (FAT12/16, or fsinfo_missing). The sector buffer
  // belongs to the Volume: finish the plug before the next call.
  bool queue_fsinfo(fsio::IoQueue::Plug& plug, std::uint32_t free_count, std::uint32_t next_free);

 private:
  Volume(fsio::IoQueue& queue, BootSectorInfo info, fsio::AlignedBuffer boot, FatTable fat);
  fsio::Status read_fsinfo();
  fsio::Status check_backup_boot();
  fsio::Status read_fat_head();
  void note(Finding::Kind kind, std::string message);

  fsio::IoQueue* queue_;
  Layout layout_;
  BootRecord record_;
  std::vector<Finding> findings_;
  fsio::AlignedBuffer boot_;
  fsio::AlignedBuffer fsinfo_buf_;
  std::optional<FsInfoState> fsinfo_;
  DirtyState dirty_;
  FatTable fat_;
};

}  // namespace fat
