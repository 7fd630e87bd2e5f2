// open_check_target (see check_target.hpp).
#include "fat/check_target.hpp"

#include <limits>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

// --offset in sectors needs the target's logical sector size: a read-only
// look at the device, before the real open with the window.
fsio::Result<std::uint64_t> offset_bytes(const std::string& path, const CheckTargetOptions& o) {
  if (!o.offset_in_sectors || o.offset == 0) return o.offset;
  fsio::OpenOptions probe;
  probe.direct = false;
  const auto dev = FSIO_TRY(fsio::Device::open(path, probe));
  const std::uint64_t ss = dev.logical_sector_size();
  if (o.offset > std::numeric_limits<std::uint64_t>::max() / ss)
    return make_error(Errc::invalid_argument, "offset " + std::to_string(o.offset) + " sectors of " +
                                                  std::to_string(ss) + " bytes is past any device")
        .at(path);
  return o.offset * ss;
}

// fsck.fat read_fat: a copy whose FAT[0] lacks the reserved bits (FAT_EXTD)
// "appears to be corrupt"; the first copy that has them is read instead.
fsio::Result<std::optional<std::uint32_t>> intact_copy(Volume& v) {
  const Layout& l = v.layout();
  const std::uint32_t extd = entry_mask(l.type) & ~0xFu;
  fsio::AlignedBuffer sector(l.sector_size);
  std::optional<std::uint32_t> first_ok;
  for (std::uint32_t c = 0; c < l.num_fats && c < 2; ++c) {
    FSIO_TRY_CTX(v.queue().read(l.fat_offset(c), sector.span()), "read FAT copy " + std::to_string(c));
    const std::uint32_t fat0 = get_entry(l.type, sector.span(), 0);
    if ((fat0 & extd) == extd) {
      first_ok = c;
      break;
    }
  }
  return first_ok;
}

}  // namespace

fsio::Result<std::unique_ptr<CheckTarget>> open_check_target(const std::string& path, const CheckTargetOptions& o) {
  auto t = std::make_unique<CheckTarget>();
  t->offset_bytes = FSIO_TRY(offset_bytes(path, o));
  fsio::OpenOptions oo;
  oo.write = o.repair;
  oo.check_write = !o.repair && o.refuse_like_repair;
  oo.offset = t->offset_bytes;
  t->device.emplace(FSIO_TRY(fsio::Device::open(path, oo)));
  if (!o.repair && !o.refuse_like_repair) t->in_use = FSIO_TRY(fsio::find_use(path, t->offset_bytes));
  t->queue.emplace(FSIO_TRY(fsio::IoQueue::create(*t->device)));
  return t;
}

fsio::Status open_check_volume(CheckTarget& t) {
  t.volume = std::make_unique<Volume>(FSIO_TRY(Volume::open(*t.queue)));
  const auto copy = FSIO_TRY(intact_copy(*t.volume));
  if (copy && *copy != t.volume->fat().read_copy()) {
    VolumeOptions vo;
    vo.fat_cache.read_copy = *copy;
    t.volume = std::make_unique<Volume>(FSIO_TRY(Volume::open(*t.queue, vo)));
  }
  return {};
}

fsio::Status choose_fat_copy(CheckTarget& t, std::uint32_t number) {
  if (number == 0) return {};
  const std::uint32_t copies = t.volume->layout().num_fats;
  if (number > copies)
    return make_error(Errc::not_found, "FAT copy " + std::to_string(number) +
                                           " (-F counts from 1) does not exist: the volume has " +
                                           std::to_string(copies) + (copies == 1 ? " copy" : " copies"))
        .at(t.device->path());
  if (number - 1 == t.volume->fat().read_copy()) return {};
  VolumeOptions vo;
  vo.fat_cache.read_copy = number - 1;
  t.volume = std::make_unique<Volume>(FSIO_TRY(Volume::open(*t.queue, vo)));
  return {};
}

}  // namespace fat
