// The used blocks of an ext2/3/4 filesystem, from its block bitmaps
// (bitmaps.rst), read in batches of up to 1024 groups (flex_bg packs them
// side by side, so a batch is a few large reads). A BLOCK_UNINIT group has
// no bitmap on disk: its used blocks are what the kernel's
// ext4_init_block_bitmap would mark, the group's superblock copy,
// descriptors and reserve, and every group's bitmaps and inode table that
// lie inside it. Each bitmap read is checked against its descriptor's
// checksum (metadata_csum) and free count: a bitmap that disagrees would
// make us skip blocks in use, so it is refused with e2fsck as the remedy.
#include <algorithm>
#include <bit>
#include <cstring>

#include "ext/alloc.hpp"
#include "ext/fs.hpp"
#include "cmd/img/source.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint32_t kBatchGroups = 1024;

// 64 bitmap bits from bit n (a multiple of 64), little-endian as on disk.
std::uint64_t word(std::span<const std::byte> bits, std::uint64_t n) {
  std::uint64_t w = 0;
  for (unsigned i = 0; i < 8; ++i) w |= std::to_integer<std::uint64_t>(bits[n / 8 + i]) << (8 * i);
  return w;
}

// What the write gate would say, narrowed to what makes the bitmaps lie.
fsio::Status check_bitmaps_trustworthy(const ext::Filesystem& fs, const std::string& path) {
  const ext::Layout& l = fs.layout();
  const std::string remedy = "; run e2fsck -f on it first, or save every block with --fs raw";
  if (l.has_ro_compat(ext::EXT4_FEATURE_RO_COMPAT_BIGALLOC))
    return make_error(Errc::unsupported,
                      "bigalloc (one bitmap bit per cluster) is not supported; save it "
                      "with --fs raw")
        .at(path);
  if (l.has_incompat(ext::EXT3_FEATURE_INCOMPAT_RECOVER))
    return make_error(Errc::unsupported,
                      "the journal needs recovery: blocks it will write may still be "
                      "marked free (mount and unmount it, or run e2fsck, first; or save "
                      "every block with --fs raw)")
        .at(path);
  const std::uint16_t state = fs.super().s_state;
  if (state & ext::EXT2_ERROR_FS)
    return make_error(Errc::unsupported, "the filesystem has recorded errors" + remedy).at(path);
  if (!(state & ext::EXT2_VALID_FS))
    return make_error(Errc::unsupported, "the filesystem was not cleanly unmounted" + remedy).at(path);
  return {};
}

// Every group's bitmaps and inode table, sorted, for BLOCK_UNINIT groups.
std::vector<Run> metadata_extents(const ext::Filesystem& fs) {
  const ext::Layout& l = fs.layout();
  std::vector<Run> out;
  out.reserve(std::size_t(l.group_count) * 3);
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    const ext::GroupDesc& d = fs.group(g);
    out.push_back({d.block_bitmap, 1});
    out.push_back({d.inode_bitmap, 1});
    out.push_back({d.inode_table, l.inode_table_blocks});
  }
  std::sort(out.begin(), out.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  return out;
}

// Sets the bits of an uninitialised group's used blocks (ext4_init_block_bitmap).
void synthesize(const ext::Filesystem& fs, std::uint32_t g, const std::vector<Run>& meta, std::span<std::byte> bits) {
  const ext::Layout& l = fs.layout();
  std::fill(bits.begin(), bits.end(), std::byte{0});
  const std::uint64_t first = l.group_first_block(g), count = l.blocks_in_group(g);
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(l.group_overhead_blocks(g), count); ++i) ext::set_bit(bits, i);
  auto it =
      std::lower_bound(meta.begin(), meta.end(), first, [](const Run& r, std::uint64_t b) { return r.end() <= b; });
  for (; it != meta.end() && it->start < first + count; ++it)
    for (std::uint64_t b = std::max(it->start, first); b < std::min(it->end(), first + count); ++b)
      ext::set_bit(bits, b - first);
}

fsio::Status check_bitmap(const ext::Filesystem& fs, std::uint32_t g, std::span<const std::byte> bits) {
  const ext::Layout& l = fs.layout();
  const ext::GroupDesc& d = fs.group(g);
  const std::string where = "ext group " + std::to_string(g) + " block bitmap: ";
  if (l.metadata_csum()) {
    std::uint32_t want = ext::block_bitmap_checksum(bits, l);
    if (l.desc_size < 64) want &= 0xFFFF;
    if (want != d.block_bitmap_csum)
      return make_error(Errc::corrupt, where + "checksum " + std::to_string(d.block_bitmap_csum) +
                                           " does not match the contents (" + std::to_string(want) +
                                           "); run e2fsck -f first");
  }
  const std::uint64_t count = l.blocks_in_group(g);
  std::uint64_t used = 0, n = 0;
  for (; n + 64 <= count; n += 64) used += std::uint64_t(std::popcount(word(bits, n)));
  for (; n < count; ++n) used += ext::test_bit(bits, n);
  if (count - used != d.free_blocks)
    return make_error(Errc::corrupt, where + std::to_string(count - used) + " free, the descriptor says " +
                                         std::to_string(d.free_blocks) + "; run e2fsck -f first");
  return {};
}

// The first bit at or after n, below count, equal to `value` (or count);
// whole 64-bit words of the other value are skipped at once.
std::uint64_t next_bit(std::span<const std::byte> bits, std::uint64_t n, std::uint64_t count, bool value) {
  const std::uint64_t other = value ? 0 : ~std::uint64_t(0);
  while (n < count) {
    if (n % 64 == 0 && n + 64 <= count && word(bits, n) == other) {
      n += 64;
      continue;
    }
    if (ext::test_bit(bits, n) == value) return n;
    ++n;
  }
  return count;
}

// Adds the set bits of one group's bitmap to the map, as runs.
void add_group(const ext::Layout& l, std::uint32_t g, std::span<const std::byte> bits, BlockMap& map) {
  const std::uint64_t first = l.group_first_block(g), count = l.blocks_in_group(g);
  for (std::uint64_t n = next_bit(bits, 0, count, true); n < count;) {
    const std::uint64_t stop = next_bit(bits, n, count, false);
    map.add(first + n, stop - n);
    n = next_bit(bits, stop, count, true);
  }
}

// Reads the bitmaps of groups [g0, g0 + n) that are on disk, checks them,
// and adds every group's used blocks to the map.
fsio::Status add_batch(ext::Filesystem& fs, std::uint32_t g0, std::uint32_t n, const std::vector<Run>& meta,
                       fsio::AlignedBuffer& buf, BlockMap& map) {
  const ext::Layout& l = fs.layout();
  const std::uint32_t bs = l.block_size;
  auto uninit = [&](std::uint32_t g) { return l.group_csum() && (fs.group(g).flags & ext::EXT4_BG_BLOCK_UNINIT); };
  auto plug = fs.queue().plug();
  for (std::uint32_t i = 0; i < n; ++i)
    if (!uninit(g0 + i)) plug.read(fs.group(g0 + i).block_bitmap * bs, buf.span().subspan(std::size_t(i) * bs, bs));
  FSIO_TRY(plug.finish());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t g = g0 + i;
    auto bits = buf.span().subspan(std::size_t(i) * bs, bs);
    if (uninit(g)) synthesize(fs, g, meta, bits);
    else FSIO_TRY(check_bitmap(fs, g, bits));
    add_group(l, g, bits, map);
  }
  return {};
}

}  // namespace

fsio::Result<Source> map_ext(const std::string& path, const SourceOptions& o) {
  ext::OpenOptions eo;
  eo.offset = o.offset;
  eo.engine = o.engine;
  auto fs = FSIO_TRY(ext::Filesystem::open(path, eo));
  FSIO_TRY(check_bitmaps_trustworthy(*fs, path));
  const ext::Layout& l = fs->layout();

  BlockMap map;
  map.add(0, l.first_data_block);  // the boot block with 1 KiB blocks
  const std::vector<Run> meta = metadata_extents(*fs);
  fsio::AlignedBuffer buf(std::size_t(std::min(kBatchGroups, l.group_count)) * l.block_size);
  std::uint32_t uninit = 0;
  for (std::uint32_t g0 = 0; g0 < l.group_count; g0 += kBatchGroups) {
    const std::uint32_t n = std::min(kBatchGroups, l.group_count - g0);
    FSIO_TRY_AT(add_batch(*fs, g0, n, meta, buf, map), path);
    for (std::uint32_t g = g0; g < g0 + n; ++g)
      uninit += l.group_csum() && (fs->group(g).flags & ext::EXT4_BG_BLOCK_UNINIT) ? 1 : 0;
  }

  Source p;
  p.header.fs_type = FsType::ext;
  p.header.block_size = l.block_size;
  p.header.source_bytes = fs->device().size();
  p.header.image_bytes = l.blocks_count * l.block_size;
  p.header.block_count = l.blocks_count;
  p.header.runs = map.runs();
  p.header.mapped_blocks = map.blocks();
  const bool ext4 =
      l.has_incompat(ext::EXT3_FEATURE_INCOMPAT_EXTENTS) || l.has_incompat(ext::EXT4_FEATURE_INCOMPAT_FLEX_BG);
  const bool journal = l.has_compat(ext::EXT3_FEATURE_COMPAT_HAS_JOURNAL);
  p.detail = std::string(ext4      ? "ext4"
                         : journal ? "ext3"
                                   : "ext2") +
             ", " + std::to_string(l.group_count) + " groups, " + fsio::format_size(l.block_size) + " blocks";
  if (uninit) p.detail += ", " + std::to_string(uninit) + " of them BLOCK_UNINIT";
  return p;
}

}  // namespace img
