// The used blocks of a FAT volume: [0, data start) whole, then every
// cluster whose entry is not free (0) and not bad (fatgen103 p.16-17: the
// bad marker is 0xFF7 / 0xFFF7 / 0x0FFFFFF7), in one streaming pass over
// the active FAT copy (FatTable::scan, 4 MiB reads).
#include "fat/volume.hpp"
#include "cmd/img/source.hpp"
#include "libfsio/device.hpp"
#include "libfsio/size.hpp"

namespace img {

fsio::Result<Source> map_fat(const std::string& path, const SourceOptions& o) {
  fsio::OpenOptions oo;
  oo.offset = o.offset;
  auto dev = FSIO_TRY(fsio::Device::open(path, oo));
  auto queue = FSIO_TRY(fsio::IoQueue::create(dev, {.engine = o.engine}));
  auto vol = FSIO_TRY(fat::Volume::open(queue));
  const fat::Layout& l = vol.layout();

  const std::uint64_t data_start = l.data_start_sector() * l.sector_size;
  const std::uint64_t cluster = l.cluster_bytes();
  const std::uint32_t bs = fat_block_size(data_start, cluster);
  const std::uint64_t per_cluster = cluster / bs;
  const std::uint64_t first_data_block = data_start / bs;
  const std::uint32_t bad = fat::bad_cluster(l.type);

  BlockMap map;
  map.add(0, first_data_block);
  std::uint64_t bad_count = 0;
  FSIO_TRY_CTX(vol.fat().scan(
                   [&](std::uint32_t first, std::span<const std::uint32_t> values) {
                     for (std::size_t i = 0; i < values.size(); ++i) {
                       const std::uint64_t n = std::uint64_t(first) + i;
                       if (!l.is_cluster(n) || values[i] == 0) continue;
                       if (values[i] == bad) {
                         ++bad_count;
                         continue;
                       }
                       map.add(first_data_block + (n - 2) * per_cluster, per_cluster);
                     }
                     return true;
                   },
                   2),
               "FAT");

  Source p;
  p.header.fs_type = FsType::fat;
  p.header.block_size = bs;
  p.header.source_bytes = dev.size();
  p.header.image_bytes = l.filesystem_bytes();
  p.header.block_count = (p.header.image_bytes + bs - 1) / bs;
  p.header.runs = map.runs();
  p.header.mapped_blocks = map.blocks();
  p.detail = std::string(fat::fat_type_name(l.type)) + ", " + std::to_string(l.cluster_count) + " clusters of " +
             fsio::format_size(cluster);
  if (bad_count) p.notes.push_back(std::to_string(bad_count) + " clusters marked bad are not saved");
  if (vol.dirty().dirty()) p.notes.push_back("the volume's dirty bit is set (saved as it is)");
  return p;
}

}  // namespace img
