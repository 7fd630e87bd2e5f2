// Group start state and table placement (see mkfs_tables.hpp).
#include "ext/mkfs_tables.hpp"

#include "ext/group_desc.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

std::uint32_t group_blocks(const MkfsLayout& m, std::uint32_t g) {
  return std::uint32_t(m.group_last_block(g) - m.l.group_first_block(g) + 1);
}

// ext2fs_reserve_super_and_bgd: marks the superblock copy, the GDT and the
// reserve; returns the blocks left after them, the bitmaps and the table.
std::int64_t reserve_super_and_bgd(MkfsLayout& m, std::uint32_t g) {
  const Layout& l = m.l;
  std::uint64_t used = 0;
  const std::uint64_t first = l.group_first_block(g);
  if (l.group_has_super(g)) {
    m.used.mark(first);
    used = 1 + l.gdt_blocks + l.reserved_gdt_blocks;
    std::uint64_t n = l.gdt_blocks + l.reserved_gdt_blocks;
    if (first + 1 + n >= l.blocks_count) n = l.blocks_count - (first + 1);
    m.used.mark(first + 1, n);
  } else if (g == 0) {
    m.used.mark(first);
  }
  return std::int64_t(group_blocks(m, g)) - 2 - l.inode_table_blocks - std::int64_t(used);
}

// The blocks a table takes from group gr: counted down, BLOCK_UNINIT cleared.
void take(MkfsLayout& m, std::uint64_t block, std::uint64_t n) {
  while (n) {
    const std::uint32_t gr = m.l.group_of_block(block);
    const std::uint64_t last = m.group_last_block(gr);
    const std::uint64_t k = block + n > last ? last - block + 1 : n;
    m.groups[gr].free_blocks -= std::uint32_t(k);
    m.groups[gr].flags &= ~EXT4_BG_BLOCK_UNINIT;
    m.free_blocks -= k;
    block += k;
    n -= k;
  }
}

struct Flex {
  std::uint32_t size = 0;  // groups per flex group; 0 without flex_bg
  std::uint32_t last_grp = 0, rem = 0;
};

// flexbg_offset: where the next run of a flex group's bitmaps or tables
// starts. Keeps to the previous run when it is free (skipping backup
// blocks), else the flex group's first free run, else any.
std::uint64_t flexbg_offset(const MkfsLayout& m, std::uint32_t g, std::uint64_t start, const Flex& f,
                            std::uint64_t elem) {
  const BlockSet& u = m.used;
  std::uint64_t size = std::uint64_t(f.rem) * elem;
  if (size > m.l.blocks_per_group / 4) size = m.l.blocks_per_group / 4;
  if (start && start < m.l.blocks_count)
    if (auto b = u.get_free_blocks(start, start + size, elem)) return *b;
  const std::uint64_t first = m.l.group_first_block(f.size * (g / f.size));
  const std::uint64_t last = m.group_last_block(f.last_grp);
  if (auto b = u.get_free_blocks(first, last, size)) return *b;
  if (auto b = u.get_free_blocks(first, last, elem)) return *b;
  if (auto b = u.get_free_blocks(0, last, elem)) return *b;
  return 0;
}

fsio::Error no_room(std::uint32_t g, const char* what) {
  return make_error(Errc::invalid_argument, std::string("no room for the ") + what + " of block group " +
                                                std::to_string(g) + "; the filesystem is too small for its tables");
}

// One bitmap block: from `start` up to `last`, else anywhere in the group.
fsio::Result<std::uint64_t> place_bitmap(MkfsLayout& m, std::uint32_t g, std::uint64_t start, std::uint64_t last,
                                         const Flex& f, const char* what) {
  auto b = m.used.get_free_blocks(start, last, 1);
  if (!b) b = m.used.get_free_blocks(m.l.group_first_block(g), last, 1);
  if (!b) return no_room(g, what);
  m.used.mark(*b);
  if (f.size) take(m, *b, 1);
  return *b;
}

fsio::Status allocate_group(MkfsLayout& m, std::uint32_t g, Flex f, std::uint32_t stride) {
  const Layout& l = m.l;
  MkfsGroup& d = m.groups[g];
  std::uint64_t group_blk = l.group_first_block(g), last = m.group_last_block(g), start = group_blk;
  const std::uint64_t ipb = l.inode_table_blocks;
  if (f.size) {
    f.last_grp = std::min(g | (f.size - 1), l.group_count - 1);
    f.rem = f.last_grp - g + 1;
  }
  if (stride && !f.size) {
    auto b = m.used.get_free_blocks(group_blk, last, 1);
    if (!b) return no_room(g, "block bitmap");
    start = *b + ipb;
    start += (std::uint64_t(stride) * g) % (last - start + 1);
    if (start >= last) start = group_blk;
  }
  std::uint64_t table_offset = f.size;
  if (f.size) {
    std::uint64_t prev = 0;
    if (g % f.size) {
      prev = m.groups[g - 1].block_bitmap + 1;
    } else if (f.last_grp == l.group_count - 1) {
      table_offset = f.last_grp & (f.size - 1);
      table_offset = table_offset == 0 ? f.size : table_offset + 1;
    }
    start = flexbg_offset(m, g, prev, f, 1);
    last = m.group_last_block(f.last_grp);
  }
  d.block_bitmap = FSIO_TRY(place_bitmap(m, g, start, last, f, "block bitmap"));
  if (f.size) {
    const std::uint64_t prev = g % f.size ? m.groups[g - 1].inode_bitmap + 1 : d.block_bitmap + table_offset;
    start = flexbg_offset(m, g, prev, f, 1);
  }
  d.inode_bitmap = FSIO_TRY(place_bitmap(m, g, start, last, f, "inode bitmap"));
  if (f.size) {
    const std::uint64_t prev = g % f.size ? m.groups[g - 1].inode_table + ipb : d.inode_bitmap + table_offset;
    group_blk = flexbg_offset(m, g, prev, f, ipb);
  }
  auto t = m.used.get_free_blocks(group_blk, last, ipb);
  if (!t) return no_room(g, "inode table");
  m.used.mark(*t, ipb);
  if (f.size) take(m, *t, ipb);
  d.inode_table = *t;
  return {};
}

}  // namespace

void start_groups(MkfsLayout& m, bool flex) {
  const Layout& l = m.l;
  m.groups.assign(l.group_count, {});
  std::uint32_t reserved_inos = l.first_ino;
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    MkfsGroup& d = m.groups[g];
    if (l.group_csum()) {
      if (g + 1 != l.group_count) d.flags |= EXT4_BG_BLOCK_UNINIT;
      d.flags |= EXT4_BG_INODE_UNINIT;
      std::uint32_t n = l.inodes_per_group;
      const std::uint32_t r = std::min(n, reserved_inos);
      n -= r;
      reserved_inos -= r;
      d.itable_unused = n;
    }
    std::int64_t free = reserve_super_and_bgd(m, g);
    if (flex) free += 2 + l.inode_table_blocks;
    d.free_blocks = std::uint32_t(free);
    d.free_inodes = l.inodes_per_group;
    m.free_blocks += std::uint64_t(free);
  }
}

fsio::Status allocate_tables(MkfsLayout& m, std::uint32_t log_flex, std::uint32_t stride) {
  Flex f;
  if (m.l.has_incompat(EXT4_FEATURE_INCOMPAT_FLEX_BG) && log_flex) f.size = 1u << log_flex;
  for (std::uint32_t g = 0; g < m.l.group_count; ++g) FSIO_TRY(allocate_group(m, g, f, stride));
  return {};
}

void claim_blocks(MkfsLayout& m, std::uint64_t block, std::uint64_t n) {
  m.used.mark(block, n);
  take(m, block, n);
}

void claim_inode(MkfsLayout& m, std::uint32_t ino, bool dir) {
  const Layout& l = m.l;
  const std::uint32_t g = l.group_of_inode(ino);
  MkfsGroup& d = m.groups[g];
  m.inodes.insert(ino);
  d.free_inodes -= 1;
  if (dir) d.used_dirs += 1;
  d.flags &= ~EXT4_BG_INODE_UNINIT;
  if (l.group_csum()) {
    const std::uint32_t first_unused = l.inodes_per_group - d.itable_unused + g * l.inodes_per_group + 1;
    if (ino >= first_unused) d.itable_unused = g * l.inodes_per_group + l.inodes_per_group - ino;
  }
  m.free_inodes -= 1;
}

}  // namespace ext
