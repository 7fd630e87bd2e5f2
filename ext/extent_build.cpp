// Extent tree construction.
#include "ext/extent_build.hpp"

#include <cstring>

namespace ext {
namespace {

struct Entry {  // one entry of a level: an extent (leaves) or an index
  std::uint32_t logical;
  std::uint32_t len;       // leaves only
  std::uint64_t physical;  // data start, or the child block
};

void put_header(std::span<std::byte> node, std::uint16_t entries, std::uint16_t max, std::uint16_t depth) {
  Ext4ExtentHeader h{};
  h.eh_magic = kExtentMagic;
  h.eh_entries = entries;
  h.eh_max = max;
  h.eh_depth = depth;
  h.eh_generation = 0;
  fsio::store(node, h);
}

void put_entries(std::span<std::byte> node, const Entry* e, std::size_t n, bool leaf) {
  for (std::size_t i = 0; i < n; ++i) {
    if (leaf) {
      Ext4Extent x{};
      x.ee_block = e[i].logical;
      x.ee_len = std::uint16_t(e[i].len);
      x.ee_start_hi = std::uint16_t(e[i].physical >> 32);
      x.ee_start_lo = std::uint32_t(e[i].physical);
      fsio::store(node, x, 12 + 12 * i);
    } else {
      Ext4ExtentIdx x{};
      x.ei_block = e[i].logical;
      x.ei_leaf_lo = std::uint32_t(e[i].physical);
      x.ei_leaf_hi = std::uint16_t(e[i].physical >> 32);
      fsio::store(node, x, 12 + 12 * i);
    }
  }
}

}  // namespace

std::vector<Extent> normalize_extents(const std::vector<Extent>& in) {
  std::vector<Extent> out;
  for (Extent e : in) {
    if (!out.empty()) {
      Extent& last = out.back();
      if (!last.unwritten && !e.unwritten && std::uint64_t(last.logical) + last.len == e.logical &&
          last.physical + last.len == e.physical && last.len < kMaxInitExtentLen) {
        const std::uint32_t add = std::min(e.len, kMaxInitExtentLen - last.len);
        last.len += add;
        e.logical += add;
        e.physical += add;
        e.len -= add;
      }
    }
    while (e.len > 0) {
      const std::uint32_t n = std::min(e.len, e.unwritten ? kMaxUnwrittenExtentLen : kMaxInitExtentLen);
      out.push_back(Extent{e.logical, n, e.physical, e.unwritten});
      e.logical += n;
      e.physical += n;
      e.len -= n;
    }
  }
  return out;
}

fsio::Result<std::vector<std::uint64_t>> build_extent_tree(Filesystem& fs, Allocator& alloc, Inode& inode,
                                                           const std::vector<Extent>& extents, std::uint64_t goal) {
  const Layout& l = fs.layout();
  const std::uint32_t cap = extent_node_max(l.block_size);
  std::vector<Entry> level;
  for (const Extent& e : extents)
    level.push_back(Entry{e.logical, e.len + (e.unwritten ? kMaxInitExtentLen : 0), e.physical});
  std::vector<std::uint64_t> tree;
  std::uint16_t depth = 0;
  while (level.size() > kExtentRootMax) {
    std::vector<Entry> up;
    for (std::size_t i = 0; i < level.size(); i += cap) {
      const std::size_t n = std::min<std::size_t>(cap, level.size() - i);
      const BlockRun run = FSIO_TRY(alloc.alloc_blocks(goal, 1));
      goal = run.start + 1;
      auto node = fs.meta_new(run.start, MetaKind::fresh);
      put_header(node, std::uint16_t(n), std::uint16_t(cap), depth);
      put_entries(node, &level[i], n, depth == 0);
      fsio::store(node, le32(extent_block_checksum(node, inode.ino, inode.generation(), l)),
                  12 + 12 * std::size_t(cap));
      up.push_back(Entry{level[i].logical, 0, run.start});
      tree.push_back(run.start);
    }
    level = std::move(up);
    ++depth;
    if (depth > kMaxExtentDepth)
      return fsio::make_error(fsio::Errc::unsupported, "ext: extent tree deeper than 5 levels");
  }
  std::byte root[60] = {};
  put_header(root, std::uint16_t(level.size()), kExtentRootMax, depth);
  put_entries(root, level.data(), level.size(), depth == 0);
  std::memcpy(inode.raw.data() + offsetof(Ext4Inode, i_block), root, sizeof root);
  auto f = inode.fields();
  f.i_flags = f.i_flags | EXT4_EXTENTS_FL;
  inode.set_fields(f);
  return tree;
}

fsio::Result<std::vector<std::uint64_t>> extent_tree_blocks(Filesystem& fs, const Inode& inode) {
  std::vector<std::uint64_t> out;
  FSIO_TRY(walk_mapping(
      inode, fs.layout(), fs.reader(), [](const Extent&) -> fsio::Status { return {}; },
      [&](std::uint64_t b) { out.push_back(b); }));
  return out;
}

fsio::Status set_inode_blocks(Inode& inode, std::uint64_t blocks, const Layout& l) {
  auto f = inode.fields();
  std::uint64_t units = blocks * (l.block_size / 512);
  f.i_flags = f.i_flags & ~EXT4_HUGE_FILE_FL;
  const bool huge = l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_HUGE_FILE);
  if (units >= (std::uint64_t(1) << 32) && !huge)
    return fsio::make_error(fsio::Errc::unsupported,
                            "ext: a file of " + std::to_string(blocks) + " blocks needs the huge_file feature");
  if (units >= (std::uint64_t(1) << 48)) {
    units = blocks;  // HUGE_FILE_FL: counted in filesystem blocks
    f.i_flags = f.i_flags | EXT4_HUGE_FILE_FL;
  }
  f.i_blocks_lo = std::uint32_t(units);
  f.l_i_blocks_high = std::uint16_t(units >> 32);
  inode.set_fields(f);
  return {};
}

}  // namespace ext
