// Bitmaps and the allocator.
#include "ext/alloc.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "ext/crc.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// First bit in [from, end) equal to `value`, or end.
std::uint64_t next_bit(std::span<const std::byte> b, std::uint64_t from, std::uint64_t end, bool value) {
  std::uint64_t n = from;
  while (n < end) {
    if (n % 64 == 0 && n + 64 <= end) {
      std::uint64_t w;
      std::memcpy(&w, b.data() + n / 8, 8);
      if (w == (value ? 0 : ~std::uint64_t(0))) {
        n += 64;
        continue;
      }
    }
    if (test_bit(b, n) == value) return n;
    ++n;
  }
  return end;
}

std::uint64_t count_zero(std::span<const std::byte> b, std::uint64_t end) {
  std::uint64_t ones = 0, n = 0;
  for (; n + 64 <= end; n += 64) {
    std::uint64_t w;
    std::memcpy(&w, b.data() + n / 8, 8);
    ones += std::uint64_t(std::popcount(w));
  }
  for (; n < end; ++n) ones += test_bit(b, n);
  return end - ones;
}

fsio::Error no_space(const std::string& what) { return fsio::errno_error(ENOSPC, "ext: " + what); }

}  // namespace

std::uint32_t block_bitmap_checksum(std::span<const std::byte> bits, const Layout& l) {
  return crc32c_raw(l.csum_seed, bits.first(l.blocks_per_group / 8));
}

std::uint32_t inode_bitmap_checksum(std::span<const std::byte> bits, const Layout& l) {
  return crc32c_raw(l.csum_seed, bits.first(l.inodes_per_group / 8));
}

// A synthesized (UNINIT) bitmap has no stored checksum to compare; its
// free count must still agree with the descriptor.
fsio::Status Allocator::verify_bitmap(std::uint32_t g, std::span<const std::byte> bits, bool inode, bool synthesized) {
  const Layout& l = fs_.layout();
  const GroupDesc& d = fs_.group(g);
  const char* what = inode ? "inode" : "block";
  const std::string where = "ext group " + std::to_string(g) + " " + what + " bitmap: ";
  if (l.metadata_csum() && !synthesized) {
    std::uint32_t want = inode ? inode_bitmap_checksum(bits, l) : block_bitmap_checksum(bits, l);
    std::uint32_t stored = inode ? d.inode_bitmap_csum : d.block_bitmap_csum;
    if (l.desc_size < 64) want &= 0xFFFF;
    if (stored != want)
      return make_error(Errc::corrupt, where + "checksum " + std::to_string(stored) + " does not match the contents (" +
                                           std::to_string(want) + ")");
  }
  const std::uint64_t end = inode ? l.inodes_per_group : l.blocks_in_group(g);
  const std::uint64_t free = count_zero(bits, end);
  const std::uint64_t said = inode ? d.free_inodes : d.free_blocks;
  if (free != said)
    return make_error(Errc::corrupt, where + std::to_string(free) + " free, but the descriptor says " +
                                         std::to_string(said) + "; run e2fsck");
  return {};
}

// BLOCK_UNINIT: the kernel's ext4_init_block_bitmap. The superblock backup,
// descriptor table and reserve at the group's start, every group's bitmaps
// and inode table that lie inside this group (flex_bg packs them), and the
// bits past the group's end are in use.
fsio::Status Allocator::synthesize_block_bitmap(std::uint32_t g, std::span<std::byte> bits) {
  const Layout& l = fs_.layout();
  std::fill(bits.begin(), bits.end(), std::byte{0});
  const std::uint64_t first = l.group_first_block(g), count = l.blocks_in_group(g);
  for (std::uint32_t i = 0; i < l.group_overhead_blocks(g) && i < count; ++i) set_bit(bits, i);
  auto mark = [&](std::uint64_t b, std::uint64_t n) {
    for (std::uint64_t k = b; k < b + n; ++k)
      if (k >= first && k < first + count) set_bit(bits, k - first);
  };
  for (std::uint32_t h = 0; h < l.group_count; ++h) {
    const GroupDesc& d = fs_.group(h);
    mark(d.block_bitmap, 1);
    mark(d.inode_bitmap, 1);
    mark(d.inode_table, l.inode_table_blocks);
  }
  for (std::uint64_t k = count; k < std::uint64_t(l.block_size) * 8; ++k) set_bit(bits, k);
  return verify_bitmap(g, bits, false, true);
}

fsio::Result<std::span<std::byte>> Allocator::block_bitmap(std::uint32_t g) {
  const Layout& l = fs_.layout();
  if (blocks_.empty()) blocks_.resize(l.group_count);
  const GroupDesc& d = fs_.group(g);
  if (blocks_[g].loaded) return FSIO_TRY(fs_.meta(d.block_bitmap));
  std::span<std::byte> bits;
  if (l.group_csum() && (d.flags & EXT4_BG_BLOCK_UNINIT)) {
    // The block on disk is not a bitmap yet: build it, never read it.
    bits = fs_.meta_new(d.block_bitmap, MetaKind::bitmap);
    fs_.mark_clean(d.block_bitmap);
    FSIO_TRY(synthesize_block_bitmap(g, bits));
  } else {
    bits = FSIO_TRY(fs_.meta(d.block_bitmap));
    FSIO_TRY(verify_bitmap(g, bits, false, false));
  }
  blocks_[g].loaded = true;
  return bits;
}

fsio::Result<std::span<std::byte>> Allocator::inode_bitmap(std::uint32_t g) {
  const Layout& l = fs_.layout();
  if (inodes_.empty()) inodes_.resize(l.group_count);
  const GroupDesc& d = fs_.group(g);
  if (inodes_[g].loaded) return FSIO_TRY(fs_.meta(d.inode_bitmap));
  std::span<std::byte> bits;
  if (l.group_csum() && (d.flags & EXT4_BG_INODE_UNINIT)) {
    bits = fs_.meta_new(d.inode_bitmap, MetaKind::bitmap);
    fs_.mark_clean(d.inode_bitmap);
    for (std::uint64_t k = l.inodes_per_group; k < std::uint64_t(l.block_size) * 8; ++k) set_bit(bits, k);
    FSIO_TRY(verify_bitmap(g, bits, true, true));
  } else {
    bits = FSIO_TRY(fs_.meta(d.inode_bitmap));
    FSIO_TRY(verify_bitmap(g, bits, true, false));
  }
  inodes_[g].loaded = true;
  return bits;
}

fsio::Result<std::optional<BlockRun>> Allocator::find_run(std::uint32_t g, std::uint64_t from, std::uint32_t max_len,
                                                          std::uint32_t min_len) {
  const Layout& l = fs_.layout();
  auto bits = FSIO_TRY(block_bitmap(g));
  const std::uint64_t end = l.blocks_in_group(g);
  for (std::uint64_t n = next_bit(bits, from, end, false); n < end; n = next_bit(bits, n, end, false)) {
    const std::uint64_t stop = next_bit(bits, n, std::min(end, n + max_len), true);
    if (stop - n >= min_len)
      return std::optional<BlockRun>(BlockRun{l.group_first_block(g) + n, std::uint32_t(stop - n)});
    n = stop;
  }
  return std::optional<BlockRun>();
}

void Allocator::take(std::uint32_t g, std::span<std::byte> bits, const BlockRun& run) {
  const std::uint64_t first = fs_.layout().group_first_block(g);
  for (std::uint64_t k = run.start - first; k < run.start - first + run.len; ++k) set_bit(bits, k);
  GroupDesc& d = fs_.group_mut(g);
  d.free_blocks -= run.len;
  d.flags &= std::uint16_t(~EXT4_BG_BLOCK_UNINIT);
  blocks_[g].changed = true;
  blocks_allocated_ += run.len;
}

std::uint64_t Allocator::free_blocks_left() const {
  const std::uint64_t free = fs_.free_blocks_from_groups();
  const std::uint64_t reserve = use_reserved ? 0 : fs_.layout().r_blocks_count;
  return free > reserve ? free - reserve : 0;
}

fsio::Result<BlockRun> Allocator::alloc_blocks(std::uint64_t goal, std::uint32_t max_len) {
  const Layout& l = fs_.layout();
  const std::uint64_t left = free_blocks_left();
  if (left == 0) return no_space("no free blocks left" + std::string(use_reserved ? "" : " (outside the reserve)"));
  max_len = std::uint32_t(std::min<std::uint64_t>({max_len, left, l.blocks_per_group}));
  if (goal < l.first_data_block || goal >= l.blocks_count) goal = l.first_data_block;
  const std::uint32_t goal_group = l.group_of_block(goal);
  for (std::uint32_t min_len : {std::min<std::uint32_t>(max_len, 2048), 1u}) {
    for (std::uint32_t i = 0; i <= l.group_count; ++i) {
      const std::uint32_t g = (goal_group + i) % l.group_count;
      if (fs_.group(g).free_blocks < min_len) continue;
      const std::uint64_t from = i == 0 ? goal - l.group_first_block(g) : 0;
      auto run = FSIO_TRY(find_run(g, from, max_len, min_len));
      if (!run) continue;
      auto bits = FSIO_TRY(block_bitmap(g));
      take(g, bits, *run);
      return *run;
    }
  }
  return no_space("no free run of blocks found");
}

fsio::Result<std::uint32_t> Allocator::alloc_inode(std::uint32_t goal_group, bool dir) {
  const Layout& l = fs_.layout();
  for (std::uint32_t i = 0; i < l.group_count; ++i) {
    const std::uint32_t g = (goal_group + i) % l.group_count;
    if (fs_.group(g).free_inodes == 0) continue;
    auto bits = FSIO_TRY(inode_bitmap(g));
    std::uint64_t n = next_bit(bits, 0, l.inodes_per_group, false);
    while (n < l.inodes_per_group && std::uint64_t(g) * l.inodes_per_group + n + 1 < l.first_ino)
      n = next_bit(bits, n + 1, l.inodes_per_group, false);
    if (n >= l.inodes_per_group) continue;
    // The kernel initializes a BLOCK_UNINIT block bitmap when the group gets its first inode.
    if (l.group_csum() && (fs_.group(g).flags & EXT4_BG_BLOCK_UNINIT)) {
      FSIO_TRY(block_bitmap(g));
      fs_.group_mut(g).flags &= std::uint16_t(~EXT4_BG_BLOCK_UNINIT);
      blocks_[g].changed = true;
    }
    set_bit(bits, n);
    GroupDesc& d = fs_.group_mut(g);
    d.free_inodes -= 1;
    if (dir) d.used_dirs += 1;
    d.flags &= std::uint16_t(~EXT4_BG_INODE_UNINIT);
    // ext4_new_inode: the initialized part of the table now reaches this inode.
    if (l.group_csum() && n >= l.inodes_per_group - d.itable_unused)
      d.itable_unused = std::uint32_t(l.inodes_per_group - (n + 1));
    inodes_[g].changed = true;
    return std::uint32_t(std::uint64_t(g) * l.inodes_per_group + n + 1);
  }
  return no_space("no free inodes left");
}

fsio::Status Allocator::release_blocks(std::uint64_t start, std::uint32_t len, bool apply) {
  const Layout& l = fs_.layout();
  while (len > 0) {
    if (start < l.first_data_block || start >= l.blocks_count)
      return make_error(Errc::corrupt, "ext: freeing block " + std::to_string(start) + ", outside the filesystem");
    const std::uint32_t g = l.group_of_block(start);
    const std::uint64_t first = l.group_first_block(g);
    const std::uint32_t n = std::uint32_t(std::min<std::uint64_t>(len, first + l.blocks_in_group(g) - start));
    auto bits = FSIO_TRY(block_bitmap(g));
    for (std::uint64_t k = start - first; k < start - first + n; ++k) {
      if (!test_bit(bits, k))
        return make_error(Errc::corrupt, "ext: freeing block " + std::to_string(first + k) + ", which is already free");
      if (apply) clear_bit(bits, k);
    }
    if (apply) {
      fs_.group_mut(g).free_blocks += n;
      blocks_[g].changed = true;
    }
    start += n;
    len -= n;
  }
  return {};
}

fsio::Status Allocator::release_inode(std::uint32_t ino, bool dir, bool apply) {
  const Layout& l = fs_.layout();
  if (ino == 0 || ino > l.inodes_count)
    return make_error(Errc::corrupt, "ext: freeing inode " + std::to_string(ino) + ", outside the filesystem");
  const std::uint32_t g = l.group_of_inode(ino);
  auto bits = FSIO_TRY(inode_bitmap(g));
  const std::uint64_t n = (ino - 1) % l.inodes_per_group;
  if (!test_bit(bits, n))
    return make_error(Errc::corrupt, "ext: freeing inode " + std::to_string(ino) + ", which is already free");
  if (!apply) return {};
  clear_bit(bits, n);
  GroupDesc& d = fs_.group_mut(g);
  d.free_inodes += 1;
  if (dir) d.used_dirs -= 1;
  inodes_[g].changed = true;
  return {};
}

fsio::Status Allocator::check_frees() {
  for (const auto& r : pending_block_frees_) FSIO_TRY(release_blocks(r.start, r.len, false));
  for (const auto& [ino, dir] : pending_inode_frees_) FSIO_TRY(release_inode(ino, dir, false));
  // A block or inode freed twice (two files claiming it) would pass the
  // checks above and fail halfway through apply_frees().
  auto runs = pending_block_frees_;
  std::sort(runs.begin(), runs.end(), [](const BlockRun& a, const BlockRun& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i - 1].start + runs[i - 1].len > runs[i].start)
      return make_error(Errc::corrupt, "ext: freeing block " + std::to_string(runs[i].start) + " twice");
  std::vector<std::uint32_t> inos;
  for (const auto& [ino, dir] : pending_inode_frees_) inos.push_back(ino);
  std::sort(inos.begin(), inos.end());
  if (auto dup = std::adjacent_find(inos.begin(), inos.end()); dup != inos.end())
    return make_error(Errc::corrupt, "ext: freeing inode " + std::to_string(*dup) + " twice");
  return {};
}

fsio::Status Allocator::check_all_bitmaps() {
  const Layout& l = fs_.layout();
  // One plugged read for every bitmap block first (flex_bg keeps them
  // together), then the checks, group by group.
  std::vector<Extent> blocks;
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    const GroupDesc& d = fs_.group(g);
    const bool csum = l.group_csum();
    if (d.free_blocks > 0 && !(csum && (d.flags & EXT4_BG_BLOCK_UNINIT)))
      blocks.push_back({0, 1, d.block_bitmap, false});
    if (d.free_inodes > 0 && !(csum && (d.flags & EXT4_BG_INODE_UNINIT)))
      blocks.push_back({0, 1, d.inode_bitmap, false});
  }
  std::sort(blocks.begin(), blocks.end(), [](const Extent& a, const Extent& b) { return a.physical < b.physical; });
  FSIO_TRY(fs_.prefetch(blocks, blocks.size()));
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    if (fs_.group(g).free_blocks > 0) FSIO_TRY(block_bitmap(g));
    if (fs_.group(g).free_inodes > 0) FSIO_TRY(inode_bitmap(g));
  }
  return {};
}

fsio::Status Allocator::apply_frees() {
  for (const auto& r : pending_block_frees_) FSIO_TRY(release_blocks(r.start, r.len, true));
  for (const auto& [ino, dir] : pending_inode_frees_) FSIO_TRY(release_inode(ino, dir, true));
  pending_block_frees_.clear();
  pending_inode_frees_.clear();
  return {};
}

fsio::Status Allocator::seal_bitmaps() {
  const Layout& l = fs_.layout();
  const std::uint64_t bits_per_block = std::uint64_t(l.block_size) * 8;
  for (std::uint32_t g = 0; g < blocks_.size(); ++g) {
    if (!blocks_[g].changed) continue;
    auto bits = FSIO_TRY(block_bitmap(g));
    for (std::uint64_t k = l.blocks_in_group(g); k < bits_per_block; ++k) set_bit(bits, k);  // padding
    fs_.group_mut(g).block_bitmap_csum = l.metadata_csum() ? block_bitmap_checksum(bits, l) : 0;
    fs_.mark_dirty(fs_.group(g).block_bitmap, MetaKind::bitmap);
    blocks_[g].changed = false;
  }
  for (std::uint32_t g = 0; g < inodes_.size(); ++g) {
    if (!inodes_[g].changed) continue;
    auto bits = FSIO_TRY(inode_bitmap(g));
    for (std::uint64_t k = l.inodes_per_group; k < bits_per_block; ++k) set_bit(bits, k);  // padding
    fs_.group_mut(g).inode_bitmap_csum = l.metadata_csum() ? inode_bitmap_checksum(bits, l) : 0;
    fs_.mark_dirty(fs_.group(g).inode_bitmap, MetaKind::bitmap);
    inodes_[g].changed = false;
  }
  return {};
}

}  // namespace ext
