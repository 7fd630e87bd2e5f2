// Volume::open: boot sector, then FSInfo, backup boot sector and FAT[0..1]
// (see volume.hpp).
#include "fat/volume.hpp"

#include <algorithm>
#include <cstring>

#include "fat/fsinfo.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

std::string hex32(std::uint32_t v) {
  static const char* d = "0123456789ABCDEF";
  std::string s = "0x";
  for (int i = 7; i >= 0; --i) s += d[(v >> (4 * i)) & 0xF];
  return s;
}

}  // namespace

Volume::Volume(fsio::IoQueue& queue, BootSectorInfo info, fsio::AlignedBuffer boot, FatTable fat)
    : queue_(&queue),
      layout_(info.layout),
      record_(info.record),
      findings_(std::move(info.findings)),
      boot_(std::move(boot)),
      fat_(std::move(fat)) {}

fsio::Result<Volume> Volume::open(fsio::IoQueue& queue, const VolumeOptions& o) {
  const fsio::Device& dev = queue.device();
  const std::string& path = dev.path();
  if (o.offset_bytes > dev.size() || dev.size() - o.offset_bytes < 512)
    return make_error(Errc::corrupt, std::to_string(dev.size()) + " bytes, offset " + std::to_string(o.offset_bytes) +
                                         ": no room for a 512-byte boot sector")
        .at(path);
  const std::uint64_t available = dev.size() - o.offset_bytes;
  // The sector size is in the boot sector; read what any device can read.
  const std::size_t probe = dev.direct() ? std::max<std::size_t>(512, dev.topology().dio_offset_align) : 512;
  fsio::AlignedBuffer first(probe);
  FSIO_TRY_CTX(queue.read(o.offset_bytes, first.span()), "read boot sector");
  auto info = parse_boot_sector(first.span(), available, o.offset_bytes);
  if (!info) return std::move(info).error().at(path);
  // FAT sectors smaller than the device's direct-I/O unit (2048-byte
  // sectors on a 4 KiB-sector disk) go through the page cache.
  if (dev.direct() && dev.topology().dio_offset_align > info->layout.sector_size)
    FSIO_TRY(queue.device().use_buffered("the " + std::to_string(info->layout.sector_size) +
                                         "-byte FAT sector is smaller than the device's direct-I/O unit"));
  auto fat = FatTable::open(queue, info->layout, o.fat_cache);
  if (!fat) return std::move(fat).error().at(path);
  fsio::AlignedBuffer boot(info->layout.sector_size);
  FSIO_TRY_CTX(queue.read(o.offset_bytes, boot.span()), "read boot sector");
  Volume v(queue, std::move(*info), std::move(boot), std::move(*fat));
  FSIO_TRY(v.read_fsinfo());
  FSIO_TRY(v.check_backup_boot());
  FSIO_TRY(v.read_fat_head());
  return v;
}

void Volume::note(Finding::Kind kind, std::string message) { findings_.push_back({kind, std::move(message)}); }

bool Volume::has(Finding::Kind kind) const {
  return std::any_of(findings_.begin(), findings_.end(), [kind](const Finding& f) { return f.kind == kind; });
}

// FSInfo (fatgen103 section 5): advisory counters behind three signatures.
// fsck.fat checks all three (read_fsinfo); the kernel only the first two.
fsio::Status Volume::read_fsinfo() {
  if (layout_.type != FatType::fat32 || has(Finding::Kind::fsinfo_missing)) return {};
  fsinfo_buf_ = fsio::AlignedBuffer(layout_.sector_size);
  FSIO_TRY_CTX(queue_->read(layout_.sector_offset(layout_.fsinfo_sector), fsinfo_buf_.span()),
               "read FSInfo sector " + std::to_string(layout_.fsinfo_sector));
  const auto info = fsio::load<FsInfo>(fsinfo_buf_.span());
  FsInfoState s;
  s.sector = layout_.fsinfo_sector;
  s.free_count = info.free_count;
  s.next_free = info.next_free;
  std::string wrong;
  auto expect = [&](const char* field, std::uint32_t got, std::uint32_t want) {
    if (got != want)
      wrong += std::string(wrong.empty() ? "" : ", ") + field + " " + hex32(got) + " (expected " + hex32(want) + ")";
  };
  expect("FSI_LeadSig", info.lead_signature, kFsInfoLeadSignature);
  expect("FSI_StrucSig", info.struct_signature, kFsInfoStructSignature);
  expect("FSI_TrailSig", info.trail_signature, kFsInfoTrailSignature);
  s.signatures_ok = wrong.empty();
  if (!s.signatures_ok)
    note(Finding::Kind::fsinfo_signature, "FSInfo sector " + std::to_string(s.sector) + ": " + wrong);
  if (s.signatures_ok && s.free_count != kFsInfoUnknown) {
    s.free_count_known = s.free_count <= layout_.cluster_count;
    if (!s.free_count_known)
      note(Finding::Kind::fsinfo_free_count, "FSInfo free count " + std::to_string(s.free_count) + " exceeds the " +
                                                 std::to_string(layout_.cluster_count) + " clusters");
  }
  if (s.signatures_ok && s.next_free != kFsInfoUnknown) {
    s.next_free_known = layout_.is_cluster(s.next_free);
    if (!s.next_free_known)
      note(Finding::Kind::fsinfo_next_free, "FSInfo next free cluster " + std::to_string(s.next_free) +
                                                " is not a cluster (2.." +
                                                std::to_string(layout_.cluster_count + 1ull) + ")");
  }
  fsinfo_ = s;
  return {};
}

// fsck.fat check_backup_boot compares the first 512 bytes.
fsio::Status Volume::check_backup_boot() {
  if (layout_.type != FatType::fat32 || has(Finding::Kind::backup_boot_missing)) return {};
  fsio::AlignedBuffer backup(layout_.sector_size);
  FSIO_TRY_CTX(queue_->read(layout_.sector_offset(layout_.backup_boot_sector), backup.span()),
               "read backup boot sector " + std::to_string(layout_.backup_boot_sector));
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < 512; ++i)
    if (backup.data()[i] != boot_.data()[i] && differ++ == 0) first = i;
  if (differ)
    note(Finding::Kind::backup_boot_differs, "backup boot sector " + std::to_string(layout_.backup_boot_sector) +
                                                 " differs from sector 0 in " + std::to_string(differ) +
                                                 " bytes, the first at offset " + std::to_string(first));
  return {};
}

// FAT[0] carries the media byte; FAT[1] the clean-shutdown and no-I/O-error
// bits on FAT16/32; BS_Reserved1 bit 0 is Linux's dirty flag. fsck.fat
// check_dirty_bits reports the flag and the clean-shutdown bit.
fsio::Status Volume::read_fat_head() {
  const std::uint32_t fat0 = FSIO_TRY(fat_.get(0));
  const std::uint32_t fat1 = FSIO_TRY(fat_.get(1));
  if ((fat0 & 0xFF) != layout_.media)
    note(Finding::Kind::media_mismatch, "FAT[0] " + hex32(fat0) + " does not carry BPB_Media " + hex32(layout_.media));
  dirty_.state_flag = record_.state & kStateDirty;
  if (dirty_.state_flag)
    note(Finding::Kind::dirty_state,
         "boot sector state byte " + hex32(record_.state) + ": the dirty flag is set (not cleanly unmounted)");
  if (layout_.type == FatType::fat12) return {};
  const bool fat32 = layout_.type == FatType::fat32;
  dirty_.fat_not_clean = !(fat1 & (fat32 ? kFat32CleanShutdown : kFat16CleanShutdown));
  dirty_.fat_io_errors = !(fat1 & (fat32 ? kFat32NoHardError : kFat16NoHardError));
  if (dirty_.fat_not_clean)
    note(Finding::Kind::fat_not_clean, "FAT[1] " + hex32(fat1) + ": the clean-shutdown bit is clear");
  if (dirty_.fat_io_errors)
    note(Finding::Kind::fat_io_errors, "FAT[1] " + hex32(fat1) + ": the no-I/O-error bit is clear");
  return {};
}

std::uint32_t Volume::allocation_hint() const { return fsinfo_ && fsinfo_->next_free_known ? fsinfo_->next_free : 2; }

fsio::Status Volume::read_clusters(std::uint32_t first, std::uint32_t count, std::span<std::byte> out) {
  const std::uint64_t last = std::uint64_t(first) + count - 1;
  if (count == 0 || !layout_.is_cluster(first) || !layout_.is_cluster(last))
    return make_error(Errc::invalid_argument, "clusters " + std::to_string(first) + ".." + std::to_string(last) +
                                                  " are not all in 2.." + std::to_string(layout_.cluster_count + 1ull));
  const std::uint64_t bytes = count * layout_.cluster_bytes();
  if (out.size() < bytes)
    return make_error(Errc::invalid_argument, std::to_string(count) + " clusters need " + std::to_string(bytes) +
                                                  " bytes, the buffer has " + std::to_string(out.size()));
  FSIO_TRY_CTX(queue_->read(layout_.cluster_offset(first), out.first(bytes)),
               "read clusters " + std::to_string(first) + ".." + std::to_string(last));
  return {};
}

bool Volume::queue_fsinfo(fsio::IoQueue::Plug& plug, std::uint32_t free_count, std::uint32_t next_free) {
  if (!fsinfo_) return false;
  auto info = fsio::load<FsInfo>(fsinfo_buf_.span());
  info.lead_signature = kFsInfoLeadSignature;
  info.struct_signature = kFsInfoStructSignature;
  info.trail_signature = kFsInfoTrailSignature;
  info.free_count = free_count;
  info.next_free = next_free;
  fsio::store(fsinfo_buf_.span(), info);
  fsinfo_->signatures_ok = true;
  fsinfo_->free_count = free_count;
  fsinfo_->next_free = next_free;
  fsinfo_->free_count_known = free_count <= layout_.cluster_count;
  fsinfo_->next_free_known = layout_.is_cluster(next_free);
  plug.write(layout_.sector_offset(fsinfo_->sector), fsinfo_buf_.span());
  return true;
}

}  // namespace fat
