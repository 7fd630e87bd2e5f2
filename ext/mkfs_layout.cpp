// lay_out (see mkfs_layout.hpp): ext2fs_initialize's geometry and
// starting counts; the tables are placed in mkfs_tables.cpp.
#include "ext/mkfs_layout.hpp"

#include "ext/mkfs_tables.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

constexpr std::uint64_t kMax32 = 0xFFFFFFFFull;

std::uint64_t div_ceil(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

fsio::Error too_small(std::uint64_t blocks, std::uint32_t bs, const std::string& why) {
  return make_error(Errc::invalid_argument, "the filesystem is too small: " + std::to_string(blocks) + " blocks of " +
                                                std::to_string(bs) + " bytes " + why);
}

bool is_power_of(std::uint32_t n, std::uint32_t base) {
  while (n > 1 && n % base == 0) n /= base;
  return n == 1;
}

// ext2fs_bg_has_super before s_backup_bgs is set (ext2fs_initialize's
// last-group test); sparse_super2 is decided by the caller.
bool has_super(std::uint32_t g, bool sparse) {
  if (g <= 1 || !sparse) return true;
  if (g % 2 == 0) return false;
  return is_power_of(g, 3) || is_power_of(g, 5) || is_power_of(g, 7);
}

struct Geometry {
  std::uint64_t blocks = 0, r_blocks = 0;
  std::uint32_t bpg = 0, groups = 0, desc_blocks = 0, ipg = 0, ipb = 0, inodes = 0, rsv = 0;
};

// The inode count spread over `groups`: per group a multiple of 8 that
// fills whole inode-table blocks, the total below 2^32.
void inodes_per_group(const MkfsParams& p, std::uint32_t isz, Geometry& g, std::uint32_t ipg) {
  const std::uint32_t bs = p.block_size;
  for (;; --ipg) {
    std::uint32_t blocks = std::uint32_t(div_ceil(std::uint64_t(ipg) * isz, bs));
    std::uint32_t n = std::uint32_t(std::uint64_t(blocks) * bs / isz);
    if (n < 8) n = 8;
    n &= ~7u;
    g.ipb = std::uint32_t(div_ceil(std::uint64_t(n) * isz, bs));
    g.ipg = n;
    if (std::uint64_t(n) * g.groups <= kMax32) break;
  }
  g.inodes = g.ipg * g.groups;
}

fsio::Result<Geometry> geometry(const MkfsParams& p) {
  const std::uint32_t bs = p.block_size, fdb = p.log_block_size == 0 ? 1 : 0;
  const std::uint32_t isz = p.inode_size ? p.inode_size : 128;
  const std::uint32_t dpb = bs / ((p.incompat & EXT4_FEATURE_INCOMPAT_64BIT) ? 64 : 32);
  const bool sparse = p.ro_compat & EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER;
  Geometry g;
  g.bpg = std::min<std::uint32_t>(bs * 8, 65528);
  g.blocks = p.blocks_count;
  g.r_blocks = p.r_blocks_count;
  if (g.r_blocks >= g.blocks)
    return make_error(Errc::invalid_argument, "the reserve of " + std::to_string(g.r_blocks) + " blocks leaves none");
  for (;;) {
    if (g.blocks <= fdb) return too_small(g.blocks, bs, "hold no block group");
    const std::uint64_t groups = div_ceil(g.blocks - fdb, g.bpg);
    if (groups > kMax32) return make_error(Errc::invalid_argument, "too many block groups");
    g.groups = std::uint32_t(groups);
    g.desc_blocks = std::uint32_t(div_ceil(g.groups, dpb));
    const std::uint32_t inodes = std::max<std::uint32_t>(p.inodes_count, 12);
    std::uint32_t ipg = std::uint32_t(div_ceil(inodes, g.groups));
    if (ipg > bs * 8) {
      if (g.bpg < 256)
        return make_error(Errc::invalid_argument, std::to_string(p.inodes_count) + " inodes are too many for " +
                                                      std::to_string(g.groups) + " block groups");
      g.bpg -= 8;
      g.blocks = p.blocks_count;
      continue;
    }
    ipg = std::min(ipg, 65536 - bs / isz);
    inodes_per_group(p, isz, g, ipg);
    g.rsv = p.reserved_gdt_blocks;
    if (!g.rsv && (p.compat & EXT2_FEATURE_COMPAT_RESIZE_INODE))
      g.rsv = reserved_gdt_blocks(g.blocks, fdb, g.bpg, dpb, g.desc_blocks, bs);
    if (g.rsv > bs / 4)
      return make_error(Errc::invalid_argument,
                        std::to_string(g.rsv) + " reserved GDT blocks exceed " + std::to_string(bs / 4));
    if (g.rsv + g.desc_blocks > g.bpg * 3 / 4)
      return make_error(Errc::unsupported, std::to_string(g.groups) + " block groups need " +
                                               std::to_string(g.desc_blocks) +
                                               " descriptor blocks: mke2fs would turn "
                                               "on meta_bg, which mkext4 does not make");
    if (3ull + g.ipb + g.rsv + g.desc_blocks > g.bpg)
      return make_error(Errc::invalid_argument, "too many inodes: a group's tables (" + std::to_string(g.ipb) +
                                                    " inode-table blocks) do not fit its " + std::to_string(g.bpg) +
                                                    " blocks; raise -i or lower -N");
    std::uint64_t overhead = 2 + g.ipb;
    const bool last_bg = (p.compat & EXT4_FEATURE_COMPAT_SPARSE_SUPER2)
                             ? (g.groups == 2 ? p.backup_bgs[0] != 0 : p.backup_bgs[1] != 0)
                             : has_super(g.groups - 1, sparse);
    if (last_bg) overhead += 1 + g.desc_blocks + g.rsv;
    const std::uint64_t rem = (g.blocks - fdb) % g.bpg;
    if (g.groups == 1 && rem && rem < overhead) return too_small(g.blocks, bs, "hold less than a group's tables");
    if (!rem || rem >= overhead + 50) return g;
    g.blocks -= rem;
    const double ratio = 100.0 * double(p.r_blocks_count) / double(p.blocks_count);
    g.r_blocks = std::uint64_t(ratio * double(g.blocks) / 100.0);
  }
}

}  // namespace

std::uint32_t reserved_gdt_blocks(std::uint64_t blocks, std::uint32_t fdb, std::uint32_t bpg, std::uint32_t dpb,
                                  std::uint32_t desc_blocks, std::uint32_t bs) {
  std::uint64_t max_blocks = kMax32;
  if (blocks < max_blocks / 1024) max_blocks = blocks * 1024;
  const std::uint64_t rsv_groups = div_ceil(max_blocks - fdb, bpg);
  // unsigned arithmetic, as in libext2fs: fewer than desc_blocks wraps round and is capped
  const std::uint32_t rsv = std::uint32_t(div_ceil(rsv_groups, dpb)) - desc_blocks;
  return std::min(rsv, bs / 4);
}

fsio::Result<MkfsLayout> lay_out(const MkfsParams& p) {
  const Geometry g = FSIO_TRY(geometry(p));
  if (g.inodes < 12)  // mke2fs fails writing the reserved inodes ("Illegal inode number")
    return too_small(g.blocks, p.block_size,
                     "hold " + std::to_string(g.inodes) + " inodes, fewer than the 11 reserved ones and lost+found");
  Layout l;
  l.block_size = p.block_size;
  l.blocks_count = g.blocks;
  l.r_blocks_count = g.r_blocks;
  l.first_data_block = p.log_block_size == 0 ? 1 : 0;
  l.blocks_per_group = g.bpg;
  l.inodes_per_group = g.ipg;
  l.inodes_count = g.inodes;
  l.group_count = g.groups;
  l.inode_size = p.inode_size ? p.inode_size : 128;
  l.desc_size = (p.incompat & EXT4_FEATURE_INCOMPAT_64BIT) ? 64 : 32;
  l.gdt_blocks = g.desc_blocks;
  l.reserved_gdt_blocks = g.rsv;
  l.inode_table_blocks = g.ipb;
  l.flex_size = (p.incompat & EXT4_FEATURE_INCOMPAT_FLEX_BG) ? 1u << p.log_groups_per_flex : 1;
  l.compat = p.compat;
  l.incompat = p.incompat;
  l.ro_compat = p.ro_compat;
  if (p.compat & EXT4_FEATURE_COMPAT_SPARSE_SUPER2) {
    std::uint32_t b0 = std::min(p.backup_bgs[0], g.groups - 1), b1 = std::min(p.backup_bgs[1], g.groups - 1);
    if (b0 == b1) b1 = 0;
    if (b0 > b1) std::swap(b0, b1);
    l.backup_bgs[0] = b0;
    l.backup_bgs[1] = b1;
  }
  MkfsLayout m{l, {}, BlockSet(l.first_data_block, l.blocks_count), {}};
  m.free_inodes = l.inodes_count;
  start_groups(m, p.log_groups_per_flex != 0);
  m.initial_free_blocks = m.free_blocks;
  FSIO_TRY(allocate_tables(m, p.log_groups_per_flex, p.raid_stride));
  m.overhead = m.used.count_used(l.first_data_block, l.blocks_count - 1);
  return m;
}

}  // namespace ext
