// write_mkfs (see mkfs.hpp): the four ordered phases. What goes where is
// MkfsBuilder's; this file only orders, merges and zeroes.
#include <fcntl.h>
#include <linux/falloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ext/mkfs.hpp"
#include "ext/mkfs_io.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

constexpr std::uint64_t kArenaBytes = 8u << 20;  // bytes in one plug (Ctrl-C is looked at between plugs)

struct Range {
  std::uint64_t block, count;
};

// The blocks mke2fs zeroes (ext2fs_zero_blocks2): the end of the
// filesystem, the inode-table blocks write_inode_tables initialises, the
// journal; sorted and merged.
std::vector<Range> zero_ranges(const MkfsPlan& plan) {
  const Layout& l = plan.layout.l;
  std::vector<Range> out;
  const std::uint64_t r = std::max<std::uint64_t>(65536 / l.block_size, 1);
  std::uint64_t start = l.blocks_count & ~(r - 1);
  if (start > r) start -= r;
  if (start > 0) out.push_back({start, l.blocks_count - start});
  if (!plan.init.zeroed)
    for (std::uint32_t g = 0; g < l.group_count; ++g) {
      std::uint64_t n = l.inode_table_blocks;
      if (plan.init.lazy) {
        // inodes in use when write_inode_tables runs: the reserved ones (1-10)
        // with a descriptor checksum, else the whole table (itable_unused 0)
        std::uint64_t used = l.inodes_per_group;
        if (l.group_csum()) {
          const std::uint64_t before = std::uint64_t(g) * l.inodes_per_group;
          used = l.first_ino > before ? std::min<std::uint64_t>(l.first_ino - before, l.inodes_per_group) : 0;
        }
        n = (used * l.inode_size + l.block_size - 1) / l.block_size;
      }
      if (n) out.push_back({plan.layout.groups[g].inode_table, n});
    }
  if (!plan.params.lazy_journal_init)
    for (const Extent& e : plan.files.journal_extents) out.push_back({e.physical, e.len});
  std::sort(out.begin(), out.end(), [](const Range& a, const Range& b) { return a.block < b.block; });
  std::vector<Range> merged;
  for (const Range& z : out) {
    if (!merged.empty() && z.block <= merged.back().block + merged.back().count)
      merged.back().count =
          std::max(merged.back().block + merged.back().count, z.block + z.count) - merged.back().block;
    else merged.push_back(z);
  }
  return merged;
}

// One block (or the GDT's run of blocks) to write in phase 2.
struct Item {
  enum Kind : std::uint8_t { fixed, gdt, block_bitmap, inode_bitmap } kind;
  std::uint64_t block;
  std::uint32_t group = 0;
  std::span<const std::byte> data = {};
};

std::vector<Item> data_items(const MkfsBuilder& b, const MkfsPlan& plan) {
  const Layout& l = b.layout();
  std::vector<Item> items;
  for (const auto& [blk, data] : b.blocks()) items.push_back({Item::fixed, blk, 0, data});
  for (std::uint32_t g = 0; g < l.group_count; ++g) {
    const MkfsGroup& d = plan.layout.groups[g];
    if (l.group_has_super(g)) items.push_back({Item::gdt, g ? l.group_first_block(g) + 1 : l.descriptor_block(0), g});
    if (b.writes_block_bitmap(g)) items.push_back({Item::block_bitmap, d.block_bitmap, g});
    if (b.writes_inode_bitmap(g)) items.push_back({Item::inode_bitmap, d.inode_bitmap, g});
  }
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.block < y.block; });
  return items;
}

// Phase 1: no superblock of the old filesystem may describe a half-new
// one. Bytes 0-4095 (zap_sector: 0-1023 kept under a BSD disklabel), and
// every group-1 backup e2fsck would fall back to (one per block size),
// read in one batch and written in another; only those not zero already.
fsio::Status invalidate(fsio::IoQueue& q, MkfsReport& rep) {
  std::vector<std::pair<std::uint64_t, std::size_t>> where{{0, 4096}};
  for (std::uint64_t bs = 1024; bs <= 65536; bs *= 2) {
    const std::uint64_t off = (bs * 8 + (bs == 1024 ? 1 : 0)) * bs;
    if (off + 1024 <= q.device().size()) where.push_back({off, 1024});
  }
  auto now = FSIO_TRY_CTX(read_ranges(q, where), "reading the old superblocks");
  std::vector<Patch> patches;
  std::uint32_t bsd = 0;
  std::memcpy(&bsd, now[0].data() + 64, 4);
  const std::size_t from = (bsd == 0x82564557 || bsd == 0x57455682) ? 1024 : 0;
  const auto& head = now[0];
  if (std::any_of(head.begin() + std::ptrdiff_t(from), head.end(), [](std::byte x) { return x != std::byte{0}; }))
    patches.push_back({from, std::vector<std::byte>(4096 - from)});
  for (std::size_t k = 1; k < where.size(); ++k)
    if (now[k][0x38] == std::byte{0x53} && now[k][0x39] == std::byte{0xEF})
      patches.push_back({where[k].first, std::vector<std::byte>(1024)});
  // Nothing to erase (a new file, a discarded or zeroed target): no write,
  // and no flush to wait for.
  if (patches.empty()) return {};
  FSIO_TRY(write_patches(q, patches, "erasing the old superblocks"));
  FSIO_TRY_CTX(q.flush(), "flush after erasing the old superblocks");
  ++rep.flushes;
  return {};
}

// Phase 2: zeroing, then every block but the superblocks, sorted.
fsio::Status write_tables(fsio::IoQueue& q, const MkfsPlan& plan, const MkfsBuilder& b, fsio::Progress* progress,
                          MkfsReport& rep) {
  const Layout& l = b.layout();
  const std::uint64_t bs = l.block_size;
  for (const Range& z : zero_ranges(plan)) {
    FSIO_TRY(zero_bytes(q, z.block * bs, z.count * bs, &rep.bytes_zeroed, &rep.zero_writes));
    if (progress) progress->add(z.count * bs);
    if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "");
  }
  fsio::AlignedBuffer gdt(b.gdt().size());
  std::memcpy(gdt.data(), b.gdt().data(), gdt.size());
  const std::vector<Item> items = data_items(b, plan);
  std::uint64_t copied = 0;  // bytes built into the arena: the bitmaps
  for (const Item& it : items) copied += it.kind == Item::block_bitmap || it.kind == Item::inode_bitmap ? bs : 0;
  WriteBatch batch(q, std::size_t(std::clamp<std::uint64_t>(copied, bs, kArenaBytes)), kArenaBytes, progress,
                   "writing the group tables");
  for (const Item& it : items) {
    const std::uint64_t off = it.block * bs;
    switch (it.kind) {
      case Item::fixed: FSIO_TRY(batch.write(off, it.data)); break;
      case Item::gdt: FSIO_TRY(batch.write(off, gdt.span())); break;
      case Item::block_bitmap: b.block_bitmap(it.group, FSIO_TRY(batch.take(off, bs))); break;
      case Item::inode_bitmap: b.inode_bitmap(it.group, FSIO_TRY(batch.take(off, bs))); break;
    }
  }
  FSIO_TRY(batch.finish());
  rep.plugs += batch.plugs();
  FSIO_TRY_CTX(q.flush(), "flush after writing the group tables");
  ++rep.flushes;
  return {};
}

// Phases 3 and 4: the backups (and the primary's second sector, which
// holds no magic) in one batch, then the primary's first sector.
fsio::Status write_superblocks(fsio::IoQueue& q, const MkfsBuilder& b, MkfsReport& rep,
                               std::vector<std::byte>* held_primary) {
  const Layout& l = b.layout();
  const auto primary = b.superblock(0);
  if (held_primary) {
    // mkext4 -d: no superblock yet, the backups neither; the fill's commit
    // writes them all (ext/commit.cpp), so until it does no filesystem is
    // visible, not even to e2fsck's search of the backups.
    held_primary->assign(primary.begin(), primary.end());
    return {};
  }
  const bool halves = io_unit(q) == 512;
  std::vector<Patch> patches;
  for (std::uint32_t g = 1; g < l.group_count; ++g)
    if (l.group_has_super(g)) {
      const auto sb = b.superblock(g);
      patches.push_back({l.group_first_block(g) * l.block_size, {sb.begin(), sb.end()}});
    }
  if (halves) patches.push_back({kSuperblockOffset + 512, {primary.begin() + 512, primary.end()}});
  if (!patches.empty()) {
    FSIO_TRY(write_patches(q, patches, "writing the backup superblocks"));
    FSIO_TRY_CTX(q.flush(), "flush after the backup superblocks");
    ++rep.flushes;
  }
  const std::span<const std::byte> first(primary.data(), halves ? 512 : primary.size());
  FSIO_TRY(write_bytes(q, kSuperblockOffset, first, "writing the superblock"));
  FSIO_TRY_CTX(q.flush(), "flush after the superblock");
  ++rep.flushes;
  return {};
}

fsio::Error interrupted_at(int phase) {
  static const char* const what[] = {
      "interrupted before anything was written; the target is unchanged",
      "interrupted after the old superblock was erased: whatever filesystem the target held is gone and the new "
      "one is not complete, so it holds no filesystem; make it again to finish",
  };
  return make_error(Errc::interrupted, what[phase ? 1 : 0]);
}

}  // namespace

fsio::Result<MkfsReport> write_mkfs(fsio::IoQueue& q, MkfsPlan& plan, fsio::Progress* progress,
                                    std::vector<std::byte>* held_primary) {
  MkfsReport rep;
  if (fsio::InterruptGuard::requested()) return interrupted_at(0);
  if (plan.fs_bytes() > q.device().size())
    return make_error(Errc::invalid_argument, "the filesystem (" + std::to_string(plan.fs_bytes()) +
                                                  " bytes) does not fit the target (" +
                                                  std::to_string(q.device().size()) + " bytes)");
  if (plan.discard) {
    if (auto d = discard_target(q.device(), 0, plan.fs_bytes()); d) {
      rep.discarded = true;
    } else {
      rep.discard_error = d.error().message();
      FSIO_TRY(replan_not_zeroed(plan));
    }
    if (!plan.discard_zeroes) FSIO_TRY(replan_not_zeroed(plan));
  }
  const MkfsBuilder b(plan.layout, plan.files, plan.params, plan.kbytes);
  int phase = 1;
  fsio::Status st = invalidate(q, rep);
  if (st) st = (phase = 2, write_tables(q, plan, b, progress, rep));
  if (st) st = (phase = 3, write_superblocks(q, b, rep, held_primary));
  if (!st) {
    if (st.error().code == Errc::interrupted) return interrupted_at(phase);
    return std::move(st).error();
  }
  rep.bytes_written = q.stats().bytes_written;
  return rep;
}

std::uint64_t mkfs_work_bytes(const MkfsPlan& plan) {
  const Layout& l = plan.layout.l;
  std::uint64_t blocks = 0;
  for (const Range& z : zero_ranges(plan)) blocks += z.count;
  std::uint64_t backups = 0;
  for (std::uint32_t g = 0; g < l.group_count; ++g) backups += l.group_has_super(g);
  blocks += backups * l.gdt_blocks + 2ull * l.group_count;
  return blocks * l.block_size;
}

}  // namespace ext
