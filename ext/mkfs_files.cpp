// make_files (see mkfs_files.hpp).
#include "ext/mkfs_files.hpp"

#include "ext/group_desc.hpp"
#include "ext/mkfs_tables.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

fsio::Error full(const std::string& what) {
  return make_error(Errc::invalid_argument, "no free block left for " + what);
}

// ext2fs_new_block2 (clear_block_uninit, then the caller's alloc stats).
fsio::Result<std::uint64_t> alloc_block(MkfsLayout& m, std::uint64_t goal, const std::string& what) {
  auto b = m.used.new_block(goal);
  if (!b) return full(what);
  claim_blocks(m, *b, 1);
  return *b;
}

// ext2fs_find_inode_goal for an inode without blocks: the first block of
// its (flex) group.
std::uint64_t inode_goal(const MkfsLayout& m, std::uint32_t ino, std::uint32_t log_flex) {
  std::uint32_t g = m.l.group_of_inode(ino);
  if (log_flex) g &= ~((1u << log_flex) - 1);
  return m.l.group_first_block(g);
}

// ext2fs_new_inode: the first free inode from the parent's group (at least
// s_first_ino), group by group; check_inode_uninit clears a group's
// INODE_UNINIT and BLOCK_UNINIT as it looks there.
fsio::Result<std::uint32_t> new_inode(MkfsLayout& m, std::uint32_t dir) {
  const Layout& l = m.l;
  const std::uint32_t ipg = l.inodes_per_group;
  std::uint32_t start = dir ? l.group_of_inode(dir) * ipg + 1 : 0;
  if (start < l.first_ino) start = l.first_ino;
  std::uint32_t i = start;
  do {
    const std::uint32_t g = (i - 1) / ipg;
    MkfsGroup& d = m.groups[g];
    if (l.group_csum() && (d.flags & EXT4_BG_INODE_UNINIT)) d.flags &= ~(EXT4_BG_INODE_UNINIT | EXT4_BG_BLOCK_UNINIT);
    std::uint64_t upto = std::uint64_t(i) + (ipg - (i - 1) % ipg);
    if (i < start && upto >= start) upto = start - 1;
    if (upto > l.inodes_count) upto = l.inodes_count;
    for (std::uint64_t k = i; k <= upto; ++k)
      if (!m.inodes.count(std::uint32_t(k))) return std::uint32_t(k);
    i = std::uint32_t(upto + 1);
    if (i > l.inodes_count) i = l.first_ino;
  } while (i != start);
  return make_error(Errc::invalid_argument, "no free inode left");
}

// get_midpoint_journal_block: the emptiest of the groups around the
// middle (with flex_bg, from the middle flex group's first non-full group).
std::uint64_t journal_goal(const MkfsLayout& m, std::uint32_t log_flex) {
  const Layout& l = m.l;
  const std::uint64_t mid = (l.blocks_count - l.first_data_block) / 2;
  std::uint32_t group = l.group_of_block(mid);
  const std::uint32_t flex = 1u << log_flex;
  std::uint32_t start;
  if (log_flex && group > flex) {
    group &= ~(flex - 1);
    while (group < l.group_count && m.groups[group].free_blocks == 0) ++group;
    if (group == l.group_count) group = 0;
    start = group;
  } else {
    start = group > 0 ? group - 1 : group;
  }
  const std::uint32_t end = group + 1 < l.group_count ? group + 1 : group;
  group = start;
  for (std::uint32_t i = start + 1; i <= end; ++i)
    if (m.groups[i].free_blocks > m.groups[group].free_blocks) group = i;
  return l.group_first_block(group);
}

// ext2fs_fallocate for the new journal inode: each extent the next free
// run from the goal (at most 32768 blocks); the root holds 4, and the
// fifth insert moves them to a leaf allocated from just before the first.
fsio::Status allocate_journal(MkfsLayout& m, std::uint32_t log_flex, MkfsFiles& f) {
  const Layout& l = m.l;
  std::uint64_t pblk = journal_goal(m, log_flex);
  if (auto b = m.used.first_free(pblk, l.blocks_count - 1)) pblk = *b;
  std::uint64_t left = std::uint64_t(f.journal_blocks) + f.fc_blocks;
  std::uint32_t lblk = 0;
  const std::uint32_t leaf_max = extent_node_max(l.block_size);
  while (left) {
    const std::uint64_t want = std::min<std::uint64_t>(left, kMaxInitExtentLen);
    if (pblk >= l.blocks_count) pblk = l.first_data_block;
    auto start = m.used.first_free(pblk, l.blocks_count - 1);
    if (!start) start = m.used.first_free(l.first_data_block, l.blocks_count - 1);
    if (!start) return full("the journal");
    const std::uint64_t last = std::min(*start + want - 1, l.blocks_count - 1);
    const std::uint64_t end = m.used.first_used(*start, last).value_or(last + 1);
    claim_blocks(m, *start, end - *start);
    f.journal_extents.push_back({lblk, std::uint32_t(end - *start), *start, false});
    if (f.journal_extents.size() == 5)
      f.journal_leaf = FSIO_TRY(alloc_block(m, f.journal_extents[0].physical - 1, "the journal's extent block"));
    if (f.journal_extents.size() > leaf_max)
      return make_error(Errc::unsupported, "the journal would need more than one extent block");
    lblk += std::uint32_t(end - *start);
    left -= end - *start;
    pblk = end;
  }
  return {};
}

// ext2fs_create_orphan_file: blocks first-fit from the first data block,
// each after the previous one, merged into extents.
fsio::Status allocate_orphan(MkfsLayout& m, MkfsFiles& f) {
  f.orphan_ino = FSIO_TRY(new_inode(m, EXT2_ROOT_INO));
  claim_inode(m, f.orphan_ino, false);
  std::uint64_t last = 0;
  for (std::uint32_t k = 0; k < f.orphan_blocks; ++k) {
    last = FSIO_TRY(alloc_block(m, last, "the orphan file"));
    auto& e = f.orphan_extents;
    if (!e.empty() && e.back().physical + e.back().len == last && e.back().len < kMaxInitExtentLen) ++e.back().len;
    else e.push_back({k, 1, last, false});
  }
  if (f.orphan_extents.size() > kExtentRootMax)
    return make_error(Errc::unsupported, "the orphan file would need an extent block");
  return {};
}

}  // namespace

fsio::Result<JournalSize> journal_size(const MkfsLayout& m, const MkfsParams& p) {
  std::uint32_t j = default_journal_blocks(m.l.blocks_count);
  if (!j) return JournalSize{};  // "Filesystem too small for a journal"
  const bool fc = m.l.has_compat(EXT4_FEATURE_COMPAT_FAST_COMMIT);
  std::uint32_t fcb = fc ? j / 64 : 0;
  if (p.journal_mib > 0 || (fc && p.journal_fc_kib > 0)) {
    if (p.journal_mib > 0) j = std::uint32_t(std::uint64_t(p.journal_mib) * 1024 / (p.block_size / 1024));
    if (fc && p.journal_fc_kib > 0) fcb = std::uint32_t(std::uint64_t(p.journal_fc_kib) * 1024 / p.block_size);
    const std::uint64_t total = std::uint64_t(j) + fcb;
    if (total < 1024 || total > 10240000)
      return make_error(Errc::invalid_argument,
                        "the journal of " + std::to_string(total) + " blocks must be from 1024 to 10240000 blocks");
    if (total > m.initial_free_blocks / 2)
      return make_error(Errc::invalid_argument, "the journal of " + std::to_string(total) +
                                                    " blocks is more than half the free blocks (" +
                                                    std::to_string(m.initial_free_blocks) + ")");
  }
  return JournalSize{j, fcb};
}

fsio::Result<MkfsFiles> make_files(MkfsLayout& m, const MkfsParams& p, const ItableInit& init) {
  MkfsFiles f;
  const Layout& l = m.l;
  const std::uint32_t log_flex = p.log_groups_per_flex;
  const bool want_journal = p.journal_mib != 0 || l.has_compat(EXT3_FEATURE_COMPAT_HAS_JOURNAL);
  if (want_journal) {
    const JournalSize js = FSIO_TRY(journal_size(m, p));
    f.journal_blocks = js.blocks;
    f.fc_blocks = js.fc_blocks;
  }
  for (auto& g : m.groups)
    if (!init.lazy || init.zeroed) g.flags |= EXT4_BG_INODE_ZEROED;
  f.root_block = FSIO_TRY(alloc_block(m, inode_goal(m, EXT2_ROOT_INO, log_flex), "the root directory"));
  claim_inode(m, EXT2_ROOT_INO, true);
  f.lpf_ino = FSIO_TRY(new_inode(m, EXT2_ROOT_INO));
  f.lpf_blocks.push_back(FSIO_TRY(alloc_block(m, inode_goal(m, f.lpf_ino, log_flex), "lost+found")));
  claim_inode(m, f.lpf_ino, true);
  for (std::uint32_t size = l.block_size, i = 1; i < 12; ++i, size += l.block_size) {
    if (size >= 16384 && size >= 2 * l.block_size) break;
    f.lpf_blocks.push_back(FSIO_TRY(alloc_block(m, f.lpf_blocks.back(), "lost+found")));
  }
  for (std::uint32_t ino = EXT2_ROOT_INO + 1; ino < l.first_ino; ++ino) claim_inode(m, ino, false);
  claim_inode(m, 1, false);  // the bad blocks inode
  if (l.has_compat(EXT2_FEATURE_COMPAT_RESIZE_INODE)) {
    const std::uint64_t goal =
        l.first_data_block + std::uint64_t(l.gdt_blocks) + l.reserved_gdt_blocks + 2 + l.inode_table_blocks;
    f.resize_dind = FSIO_TRY(alloc_block(m, goal, "the resize inode"));
  }
  f.overhead = m.overhead + f.journal_blocks + f.fc_blocks + l.first_data_block;
  if (want_journal && f.journal_blocks) {
    FSIO_TRY(allocate_journal(m, log_flex, f));
  } else if (want_journal) {
    m.l.compat &= ~(EXT3_FEATURE_COMPAT_HAS_JOURNAL | EXT4_FEATURE_COMPAT_ORPHAN_FILE);
  }
  if (l.has_compat(EXT4_FEATURE_COMPAT_ORPHAN_FILE)) {
    const std::uint64_t n = l.blocks_count;
    f.orphan_blocks = p.orphan_file_blocks  ? p.orphan_file_blocks
                      : n < 128 * 1024      ? 32
                      : n < 2 * 1024 * 1024 ? std::uint32_t(n / 4096)
                                            : 512;
    FSIO_TRY(allocate_orphan(m, f));
  }
  return f;
}

}  // namespace ext
