// Reading extent trees and ext2/3 block maps, checking every node.
#include "ext/extent.hpp"

#include <cinttypes>
#include <cstdio>
#include <optional>

#include "ext/crc.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// Where in the tree a walk is: the root or an extent block, and
// an entry of it (or none). Made into words only for an error: a walk that
// built a string for every entry spent most of its time on them.
struct Where {
  std::optional<std::uint64_t> block;  // none: the root, in the inode
  std::int64_t entry = -1;

  std::string words() const {
    std::string s = block ? "block " + std::to_string(*block) : "root";
    if (entry >= 0) s += " entry " + std::to_string(entry);
    return s;
  }
};

struct Walk {
  const Inode& inode;
  const Layout& l;
  const BlockReader& read;
  const std::function<fsio::Status(const Extent&)>& on_extent;
  const std::function<void(std::uint64_t)>& on_tree_block;
  std::uint64_t next_logical = 0;  // extents must come in increasing logical order

  fsio::Error bad(Where where, const std::string& what) const {
    return make_error(Errc::corrupt,
                      "ext inode " + std::to_string(inode.ino) + ": extent " + where.words() + ": " + what);
  }

  // `node` is the header and entries; `capacity` how many entries fit.
  fsio::Status node(std::span<const std::byte> node, std::uint32_t capacity, int want_depth, Where where,
                    std::uint64_t lo, std::uint64_t hi) {
    const auto h = fsio::load<Ext4ExtentHeader>(node);
    if (h.eh_magic != kExtentMagic)
      return bad(where, "bad eh_magic " + fsio::format_hex(h.eh_magic, true) + " (expected 0xF30A)");
    if (h.eh_max == 0 || h.eh_max > capacity)
      return bad(where, "eh_max " + std::to_string(h.eh_max) + " (at most " + std::to_string(capacity) + ")");
    if (h.eh_entries > h.eh_max)
      return bad(where, "eh_entries " + std::to_string(h.eh_entries) + " exceeds eh_max " + std::to_string(h.eh_max));
    if (want_depth < 0 ? h.eh_depth > kMaxExtentDepth : h.eh_depth != want_depth)
      return bad(where, "eh_depth " + std::to_string(h.eh_depth) +
                            (want_depth < 0 ? " (at most 5)" : " (expected " + std::to_string(want_depth) + ")"));
    for (std::uint32_t i = 0; i < h.eh_entries; ++i) {
      const std::size_t at = 12 + 12 * std::size_t(i);
      const Where here{where.block, std::int64_t(i)};
      if (h.eh_depth == 0) {
        FSIO_TRY(leaf_entry(fsio::load<Ext4Extent>(node, at), here, lo, hi));
      } else {
        const auto idx = fsio::load<Ext4ExtentIdx>(node, at);
        std::uint64_t next_lo = idx.ei_block;
        std::uint64_t next_hi = hi;
        if (i + 1 < h.eh_entries) next_hi = fsio::load<Ext4ExtentIdx>(node, at + 12).ei_block;
        if (next_lo < lo || next_lo >= next_hi)
          return bad(here, "ei_block " + std::to_string(next_lo) + " is out of order");
        const std::uint64_t child = idx.ei_leaf_lo | std::uint64_t(idx.ei_leaf_hi) << 32;
        FSIO_TRY(child_block(child, h.eh_depth - 1, here, next_lo, next_hi));
      }
    }
    return {};
  }

  fsio::Status leaf_entry(const Ext4Extent& e, Where where, std::uint64_t lo, std::uint64_t hi) {
    Extent x;
    x.logical = e.ee_block;
    x.len = e.ee_len;
    if (x.len > kMaxInitExtentLen) {
      x.unwritten = true;
      x.len -= kMaxInitExtentLen;
    }
    x.physical = e.ee_start_lo | std::uint64_t(e.ee_start_hi) << 32;
    if (x.len == 0) return bad(where, "ee_len 0");
    if (x.logical < next_logical || x.logical < lo || std::uint64_t(x.logical) + x.len > hi)
      return bad(where, "ee_block " + std::to_string(x.logical) + " is out of order or outside its index range");
    if (x.physical < l.first_data_block || x.physical + x.len > l.blocks_count)
      return bad(where, "ee_start " + fsio::format_hex(x.physical, true) + " + " + std::to_string(x.len) +
                            " blocks is outside the filesystem");
    next_logical = std::uint64_t(x.logical) + x.len;
    return on_extent(x);
  }

  fsio::Status child_block(std::uint64_t block, int depth, Where where, std::uint64_t lo, std::uint64_t hi) {
    if (block < l.first_data_block || block >= l.blocks_count)
      return bad(where, "index points at block " + fsio::format_hex(block, true) + ", outside the filesystem");
    if (on_tree_block) on_tree_block(block);
    // A copy: the reader's buffer may be reused while the children are read.
    const auto span = FSIO_TRY(read(block));
    const std::vector<std::byte> data(span.begin(), span.end());
    const Where here{block};
    if (l.metadata_csum()) {
      const auto h = fsio::load<Ext4ExtentHeader>(data);
      const std::uint32_t cap = extent_node_max(l.block_size);
      if (h.eh_magic == kExtentMagic && h.eh_max <= cap) {
        const std::uint32_t stored = fsio::load<le32>(data, 12 + 12 * std::size_t(h.eh_max));
        const std::uint32_t want = extent_block_checksum(data, inode.ino, inode.generation(), l);
        if (stored != want)
          return bad(here, "checksum " + fsio::format_hex(stored, true) + " does not match the contents (" +
                               fsio::format_hex(want, true) + ")");
      }
    }
    return node(data, extent_node_max(l.block_size), depth, here, lo, hi);
  }
};

}  // namespace

std::uint32_t extent_block_checksum(std::span<const std::byte> block, std::uint32_t ino, std::uint32_t generation,
                                    const Layout& l) {
  const auto h = fsio::load<Ext4ExtentHeader>(block);
  std::uint32_t c = crc32c_raw_le32(l.csum_seed, ino);
  c = crc32c_raw_le32(c, generation);
  return crc32c_raw(c, block.first(12 + 12 * std::size_t(h.eh_max)));
}

fsio::Status walk_extents(const Inode& inode, const Layout& l, const BlockReader& read,
                          const std::function<fsio::Status(const Extent&)>& on_extent,
                          const std::function<void(std::uint64_t)>& on_tree_block) {
  Walk w{inode, l, read, on_extent, on_tree_block};
  return w.node(inode.i_block(), kExtentRootMax, -1, Where{}, 0, std::uint64_t(1) << 32);
}

namespace {

struct MapWalk {
  const Inode& inode;
  const Layout& l;
  const BlockReader& read;
  const std::function<fsio::Status(const Extent&)>& on_extent;
  const std::function<void(std::uint64_t)>& on_tree_block;
  Extent run;  // the contiguous run being gathered

  fsio::Status add(std::uint64_t logical, std::uint64_t physical) {
    if (physical < l.first_data_block || physical >= l.blocks_count)
      return make_error(Errc::corrupt, "ext inode " + std::to_string(inode.ino) + ": block map entry for block " +
                                           std::to_string(logical) + " points at " + fsio::format_hex(physical, true) +
                                           ", outside the filesystem");
    if (run.len > 0 && run.logical + std::uint64_t(run.len) == logical && run.physical + run.len == physical &&
        run.len < kMaxInitExtentLen) {
      ++run.len;
      return {};
    }
    FSIO_TRY(flush());
    run = Extent{std::uint32_t(logical), 1, physical, false};
    return {};
  }

  fsio::Status flush() {
    if (run.len == 0) return {};
    Extent done = run;
    run = {};
    return on_extent(done);
  }

  // The pointers of an indirect block at `level` (1 = single) covering
  // logical blocks from `logical`.
  fsio::Status indirect(std::uint64_t block, int level, std::uint64_t logical) {
    if (block < l.first_data_block || block >= l.blocks_count)
      return make_error(Errc::corrupt, "ext inode " + std::to_string(inode.ino) + ": indirect block " +
                                           fsio::format_hex(block, true) + " is outside the filesystem");
    if (on_tree_block) on_tree_block(block);
    auto data = FSIO_TRY(read(block));
    const std::uint64_t per = l.block_size / 4;
    std::uint64_t span = 1;
    for (int i = 1; i < level; ++i) span *= per;
    // Copy the pointers: the reader's buffer may be reused by the recursion.
    std::vector<std::uint32_t> ptrs(per);
    for (std::uint64_t i = 0; i < per; ++i) ptrs[i] = fsio::load<le32>(data, 4 * i);
    for (std::uint64_t i = 0; i < per; ++i) {
      if (ptrs[i] == 0) continue;
      if (level == 1) FSIO_TRY(add(logical + i, ptrs[i]));
      else FSIO_TRY(indirect(ptrs[i], level - 1, logical + i * span));
    }
    return {};
  }
};

}  // namespace

fsio::Status walk_block_map(const Inode& inode, const Layout& l, const BlockReader& read,
                            const std::function<fsio::Status(const Extent&)>& on_extent,
                            const std::function<void(std::uint64_t)>& on_tree_block) {
  MapWalk w{inode, l, read, on_extent, on_tree_block, {}};
  const auto f = inode.fields();
  const std::uint64_t per = l.block_size / 4;
  for (std::uint64_t i = 0; i < 12; ++i)
    if (f.i_block[i] != 0) FSIO_TRY(w.add(i, f.i_block[i]));
  std::uint64_t logical = 12, span = per;
  for (int level = 1; level <= 3; ++level) {
    if (f.i_block[11 + level] != 0) FSIO_TRY(w.indirect(f.i_block[11 + level], level, logical));
    logical += span;
    span *= per;
  }
  return w.flush();
}

fsio::Status walk_mapping(const Inode& inode, const Layout& l, const BlockReader& read,
                          const std::function<fsio::Status(const Extent&)>& on_extent,
                          const std::function<void(std::uint64_t)>& on_tree_block) {
  const std::uint32_t flags = inode.flags();
  const std::string who = "ext inode " + std::to_string(inode.ino) + ": ";
  if (flags & EXT4_INLINE_DATA_FL)
    return make_error(Errc::unsupported, who + "data inline in the inode (inline_data) is not supported");
  if (flags & EXT4_ENCRYPT_FL) return make_error(Errc::unsupported, who + "encrypted (encrypt)");
  if (flags & EXT4_COMPR_FL) return make_error(Errc::unsupported, who + "compressed (compression)");
  if (flags & EXT4_EXTENTS_FL) return walk_extents(inode, l, read, on_extent, on_tree_block);
  return walk_block_map(inode, l, read, on_extent, on_tree_block);
}

}  // namespace ext
