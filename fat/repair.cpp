// repair_volume: the plan's writes in crash order (see repair.hpp), each
// step flushed before the next, FAT writes batched under one plug per batch
// for every copy (FatTable::flush), directory sectors read, patched and
// written back in plugs.
#include "fat/repair.hpp"

#include <cstring>
#include <map>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kMirrorChunk = 4u << 20;
constexpr std::size_t kSectorsPerPlug = 1024;

class Repairer {
 public:
  Repairer(Volume& v, const RepairPlan& p, RepairReport& r, fsio::Progress* progress)
      : vol_(v),
        l_(v.layout()),
        fat_(v.fat()),
        q_(v.queue()),
        plan_(p),
        rep_(r),
        progress_(progress),
        boot_(l_.sector_size) {
    std::memcpy(boot_.data(), v.boot_sector().data(), l_.sector_size);
  }

  fsio::Status run() {
    FSIO_TRY(mirror());
    FSIO_TRY(mark_dirty());
    FSIO_TRY(cut());
    FSIO_TRY(directories());
    FSIO_TRY(reclaim());
    FSIO_TRY(fsinfo());
    FSIO_TRY(clean());
    rep_.step = "done";
    rep_.complete = true;
    return {};
  }

 private:
  fsio::Status begin(const char* step) {
    if (fsio::InterruptGuard::requested()) return interrupted("before step '" + std::string(step) + "'");
    rep_.step = step;
    return {};
  }
  fsio::Error interrupted(const std::string& where) const {
    std::string done = rep_.steps.empty() ? "nothing was written" : "done: ";
    for (std::size_t i = 0; i < rep_.steps.size(); ++i) done += (i ? "; " : "") + rep_.steps[i];
    return make_error(Errc::interrupted, "interrupted at a safe point " + where + " (" + done +
                                             "); the volume is consistent but not fully repaired: run fatck -a again");
  }
  fsio::Status poll() const {
    if (fsio::InterruptGuard::requested())
      return interrupted("between two batches of step '" + rep_.step + "', each of which is whole");
    return {};
  }
  // Every write so far reaches the disk before the next step's first one.
  fsio::Status durable(std::string what) {
    FSIO_TRY_CTX(q_.flush(), "flush after " + rep_.step);
    rep_.steps.push_back(std::move(what));
    return {};
  }
  fsio::Status write_boot() {
    FSIO_TRY_CTX(q_.write(l_.sector_offset(0), boot_.span()), "write boot sector");
    return {};
  }
  std::size_t state_offset() const { return l_.type == FatType::fat32 ? kStateOffset32 : kStateOffset16; }
  std::uint64_t table_bytes() const { return round_up(entries_bytes(l_.type, l_.entry_count()), l_.sector_size); }

  fsio::Status mirror();
  fsio::Status mark_dirty();
  fsio::Status cut();
  fsio::Status directories();
  fsio::Status patch_sectors(
      const std::map<std::uint64_t, std::vector<std::pair<std::uint32_t, const SlotBytes*>>>& by_sector);
  fsio::Status boot_label();
  fsio::Status reclaim();
  fsio::Status fsinfo();
  fsio::Status clean();
  fsio::Status flush_fat(bool force) {
    if (!force && fat_.dirty_sectors() < kRepairBatchSectors) return {};
    FSIO_TRY(fat_.flush());
    return poll();
  }

  Volume& vol_;
  const Layout& l_;
  FatTable& fat_;
  fsio::IoQueue& q_;
  const RepairPlan& plan_;
  RepairReport& rep_;
  fsio::Progress* progress_;
  fsio::AlignedBuffer boot_;  // sector 0 as the steps leave it
};

// Step 1. The copy read goes over the others, 4 MiB at a time. When it is
// not copy 0, the first chunk (FAT[0]) goes last: fsck.fat takes copy 0
// unless its FAT[0] is damaged, so until then it reads the same copy we do.
fsio::Status Repairer::mirror() {
  if (!plan_.mirror_from) return {};
  FSIO_TRY(begin("mirror FAT copies"));
  const std::uint32_t from = *plan_.mirror_from;
  const std::uint64_t total = table_bytes();
  fsio::AlignedBuffer buf(std::min(kMirrorChunk, total));
  std::vector<std::uint64_t> order;
  for (std::uint64_t pos = 0; pos < total; pos += buf.size()) order.push_back(pos);
  if (from != 0) std::rotate(order.begin(), order.begin() + 1, order.end());
  for (std::uint64_t pos : order) {
    const auto span = buf.span().first(std::min<std::uint64_t>(buf.size(), total - pos));
    FSIO_TRY_CTX(q_.read(l_.fat_offset(from) + pos, span), "read FAT copy " + std::to_string(from));
    auto plug = q_.plug();
    for (std::uint32_t c = 0; c < l_.num_fats; ++c)
      if (c != from) plug.write(l_.fat_offset(c) + pos, span);
    FSIO_TRY_CTX(plug.finish(), "write FAT copies");
    if (progress_) progress_->add(span.size() * (l_.num_fats - 1));
    FSIO_TRY(poll());
  }
  rep_.copies_mirrored = l_.num_fats - 1;
  return durable("wrote FAT copy " + std::to_string(from) + " over the other " + std::to_string(l_.num_fats - 1) +
                 " (" + std::to_string(total) + " bytes each)");
}

// Step 2, as a mount does (Linux fat_set_state): from here until step 7 the
// volume says it needs a check.
fsio::Status Repairer::mark_dirty() {
  if (!plan_.changes_tree() || (std::to_integer<std::uint8_t>(boot_.data()[state_offset()]) & kStateDirty)) return {};
  FSIO_TRY(begin("mark dirty"));
  boot_.data()[state_offset()] |= std::byte{kStateDirty};
  FSIO_TRY(write_boot());
  rep_.marked_dirty = true;
  return durable("set the dirty flag until the repair is done");
}

// Step 3: chains only get shorter, where the plan keeps them.
fsio::Status Repairer::cut() {
  if (!plan_.fat0 && plan_.cut.size() == 0) return {};
  FSIO_TRY(begin("cut chains"));
  if (plan_.fat0) FSIO_TRY(fat_.set(0, *plan_.fat0));
  const std::uint32_t eoc = fsck_end_of_chain(l_.type);  // fsck.fat's value, not mkfs.fat's
  for (std::uint32_t n = plan_.cut.next_set(0); n < plan_.cut.size(); n = plan_.cut.next_set(n + 1)) {
    FSIO_TRY(fat_.set(n, eoc));
    ++rep_.entries_cut;
    FSIO_TRY(flush_fat(false));
  }
  FSIO_TRY(flush_fat(true));
  return durable("set " + std::to_string(rep_.entries_cut) + " FAT entries to end-of-chain" +
                 (plan_.fat0 ? " and repaired FAT[0]" : ""));
}

// Step 4: whole slots, read-modify-written per sector.
fsio::Status Repairer::directories() {
  if (plan_.slots.empty() && !plan_.boot_label) return {};
  FSIO_TRY(begin("directory entries"));
  const std::uint64_t ss = l_.sector_size;
  std::map<std::uint64_t, std::vector<std::pair<std::uint32_t, const SlotBytes*>>> by_sector;
  for (const auto& [offset, bytes] : plan_.slots) {
    const std::uint64_t sector = l_.offset_bytes + (offset - l_.offset_bytes) / ss * ss;
    by_sector[sector].emplace_back(std::uint32_t(offset - sector), &bytes);
  }
  FSIO_TRY(patch_sectors(by_sector));
  FSIO_TRY(boot_label());
  return durable("rewrote " + std::to_string(rep_.slots_written) + " directory slots" +
                 (plan_.boot_label ? " and the boot sector's label" : ""));
}

fsio::Status Repairer::patch_sectors(
    const std::map<std::uint64_t, std::vector<std::pair<std::uint32_t, const SlotBytes*>>>& by_sector) {
  const std::uint64_t ss = l_.sector_size;
  for (auto it = by_sector.begin(); it != by_sector.end();) {
    std::vector<decltype(it)> batch;
    for (; it != by_sector.end() && batch.size() < kSectorsPerPlug; ++it) batch.push_back(it);
    fsio::AlignedBuffer buf(batch.size() * ss);
    auto reads = q_.plug();
    for (std::size_t i = 0; i < batch.size(); ++i) reads.read(batch[i]->first, buf.span().subspan(i * ss, ss));
    FSIO_TRY_CTX(reads.finish(), "read directory sectors");
    auto writes = q_.plug();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      for (const auto& [at, bytes] : batch[i]->second) {
        std::memcpy(buf.data() + i * ss + at, bytes->data(), 32);
        ++rep_.slots_written;
      }
      writes.write(batch[i]->first, buf.span().subspan(i * ss, ss));
    }
    FSIO_TRY_CTX(writes.finish(), "write directory sectors");
    FSIO_TRY(poll());
  }
  return {};
}

// BS_VolLab in the boot sector and, on FAT32, its backup (fsck.fat
// write_boot_label writes both).
fsio::Status Repairer::boot_label() {
  if (!plan_.boot_label) return {};
  const std::size_t at = l_.type == FatType::fat32 ? 0x47 : 0x2B;
  std::memcpy(boot_.data() + at, plan_.boot_label->data(), 11);
  FSIO_TRY(write_boot());
  if (l_.type != FatType::fat32 || l_.backup_boot_sector == 0 || l_.backup_boot_sector >= l_.reserved_sectors)
    return {};
  fsio::AlignedBuffer backup(l_.sector_size);
  const std::uint64_t off = l_.sector_offset(l_.backup_boot_sector);
  FSIO_TRY_CTX(q_.read(off, backup.span()), "read backup boot sector");
  std::memcpy(backup.data() + at, plan_.boot_label->data(), 11);
  FSIO_TRY_CTX(q_.write(off, backup.span()), "write backup boot sector");
  return {};
}

// Step 5: fsck.fat reclaim_free. Every allocated entry no chain owns.
fsio::Status Repairer::reclaim() {
  if (!plan_.reclaim) return {};
  FSIO_TRY(begin("free unowned clusters"));
  bool stopped = false;
  fsio::Status failed;
  FSIO_TRY(fat_.scan(
      [&](std::uint32_t at, std::span<const std::uint32_t> values) {
        for (std::size_t i = 0; i < values.size(); ++i) {
          const std::uint32_t n = at + std::uint32_t(i), v = values[i];
          if (v == 0 || classify(l_.type, v) == EntryKind::bad || plan_.owned.test(n)) continue;
          failed = fat_.set(n, 0);
          if (!failed) return false;
          ++rep_.clusters_freed;
        }
        if (progress_) progress_->add(entries_bytes(l_.type, values.size()));
        failed = flush_fat(false);
        stopped = !failed;
        return !stopped;
      },
      2));
  FSIO_TRY(failed);
  FSIO_TRY(flush_fat(true));
  return durable("freed " + std::to_string(rep_.clusters_freed) + " clusters no file owned");
}

fsio::Status Repairer::fsinfo() {
  if (!plan_.fsinfo) return {};
  FSIO_TRY(begin("FSInfo"));
  auto plug = q_.plug();
  if (!vol_.queue_fsinfo(plug, plan_.fsinfo->free_count, plan_.fsinfo->next_free)) return {};
  FSIO_TRY_CTX(plug.finish(), "write FSInfo");
  rep_.fsinfo_written = true;
  return durable("wrote FSInfo (free count " + std::to_string(plan_.fsinfo->free_count) + ")");
}

// Step 7: FAT[1]'s clean-shutdown bit first, then the boot sector's flag,
// the last write of the repair.
fsio::Status Repairer::clean() {
  const bool flag = std::to_integer<std::uint8_t>(boot_.data()[state_offset()]) & kStateDirty;
  const bool fat1 = plan_.clear_dirty && vol_.dirty().fat_not_clean;
  if (!flag && !fat1) return {};
  if (!plan_.clear_dirty && !rep_.marked_dirty) return {};
  FSIO_TRY(begin("clear dirty bits"));
  if (fat1) {
    const std::uint32_t bit = l_.type == FatType::fat32 ? kFat32CleanShutdown : kFat16CleanShutdown;
    const std::uint32_t v = FSIO_TRY(fat_.get(1));
    FSIO_TRY(fat_.set(1, v | bit));
    FSIO_TRY(flush_fat(true));
  }
  if (flag) {
    boot_.data()[state_offset()] &= ~std::byte{kStateDirty};
    FSIO_TRY(write_boot());
  }
  return durable("cleared the dirty bits");
}

}  // namespace

fsio::Status repair_volume(Volume& volume, const RepairPlan& plan, RepairReport& report, fsio::Progress* progress) {
  Repairer r(volume, plan, report, progress);
  return r.run();
}

}  // namespace fat
