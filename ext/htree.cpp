// htree insertion, leaf and node splits, and conversion of a full linear directory.
#include "ext/htree.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "ext/dir_write.hpp"
#include "ext/extent_build.hpp"
#include "ext/hash.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// A dx_root or dx_node held in the cache: limit/count at `co`, then entries
// of {hash, block}; entry 0's hash slot holds limit/count.
struct DxBlock {
  std::span<std::byte> data;
  std::size_t co = 0;
  std::uint64_t physical = 0;
  bool fresh = false;

  std::uint16_t limit() const { return fsio::load<DxCountLimit>(data, co).limit; }
  std::uint16_t count() const { return fsio::load<DxCountLimit>(data, co).count; }
  void set_count_limit(std::uint16_t count, std::uint16_t limit) {
    DxCountLimit cl{};
    cl.limit = limit;
    cl.count = count;
    fsio::store(data, cl, co);
  }
  std::uint32_t hash(std::size_t i) const { return i == 0 ? 0 : std::uint32_t(fsio::load<le32>(data, co + 8 * i)); }
  std::uint32_t block(std::size_t i) const { return fsio::load<le32>(data, co + 8 * i + 4); }
  void set(std::size_t i, std::uint32_t hash, std::uint32_t block) {
    if (i != 0) fsio::store(data, le32(hash), co + 8 * i);
    fsio::store(data, le32(block), co + 8 * i + 4);
  }
  // The entry whose range holds `h`: the last with hash <= h.
  std::size_t find(std::uint32_t h) const {
    std::size_t at = 0;
    for (std::size_t i = 1; i < count(); ++i)
      if (hash(i) <= h) at = i;
    return at;
  }
  // Inserts {hash, block} after entry `at` (count < limit is the caller's check).
  void insert_after(std::size_t at, std::uint32_t hash, std::uint32_t block) {
    const std::size_t n = count();
    std::memmove(data.data() + co + 8 * (at + 2), data.data() + co + 8 * (at + 1), 8 * (n - at - 1));
    set(at + 1, hash, block);
    set_count_limit(std::uint16_t(n + 1), limit());
  }
};

std::uint16_t dx_limit(const Layout& l, std::size_t co) {
  return std::uint16_t((l.block_size - co) / sizeof(DxEntry) - (l.metadata_csum() ? 1 : 0));
}

void seal_dx(Filesystem& fs, DxBlock& b, const Inode& dir) {
  const Layout& l = fs.layout();
  if (l.metadata_csum()) {
    DxTail t{};
    t.dt_checksum = dx_checksum(b.data, b.co, dir.ino, dir.generation(), l);
    fsio::store(b.data, t, b.co + std::size_t(b.limit()) * sizeof(DxEntry));
  }
  fs.mark_dirty(b.physical, b.fresh ? MetaKind::fresh : MetaKind::directory);
}

// A new interior node: the fake entry spanning the block, then limit/count.
DxBlock new_node(const Layout& l, const NewDirBlock& nb) {
  std::fill(nb.data.begin(), nb.data.end(), std::byte{0});
  Ext4DirEntryHead fake{};
  fake.rec_len = rec_len_to_disk(l.block_size, l.block_size);
  fsio::store(nb.data, fake);
  DxBlock b{nb.data, kDxNodeCountOffset, nb.physical, true};
  b.set_count_limit(0, dx_limit(l, kDxNodeCountOffset));
  return b;
}

struct Named {
  std::string name;
  std::uint32_t ino;
  std::uint8_t type;
  std::uint32_t hash;
};

// The block mapped at `logical` by `map`, the directory's extents.
fsio::Result<std::uint64_t> physical_in(const std::vector<Extent>& map, const Inode& dir, std::uint32_t logical) {
  for (const Extent& e : map)
    if (logical >= e.logical && logical - e.logical < e.len) return e.physical + (logical - e.logical);
  return make_error(Errc::corrupt, "ext directory inode " + std::to_string(dir.ino) + ": htree names block " +
                                       std::to_string(logical) + ", which is not mapped");
}

fsio::Result<std::uint64_t> physical_of(Filesystem& fs, const Inode& dir, std::uint32_t logical) {
  return physical_in(FSIO_TRY(fs.extents(dir)), dir, logical);
}

// Lays `names` out in a leaf block, the last entry reaching the end.
void write_leaf(std::span<std::byte> block, const std::vector<Named>& names, std::size_t from, std::size_t to,
                const Inode& dir, const Layout& l) {
  std::fill(block.begin(), block.end(), std::byte{0});
  const std::uint32_t end = leaf_end(l);
  std::uint32_t off = 0;
  if (from == to) put_entry(block, 0, 0, end, {}, 0, l);
  for (std::size_t i = from; i < to; ++i) {
    const std::uint32_t rec = i + 1 == to ? end - off : dirent_size(std::uint32_t(names[i].name.size()));
    put_entry(block, off, names[i].ino, rec, names[i].name, names[i].type, l);
    off += rec;
  }
  seal_leaf_block(block, dir, l);
}

// Where to split hash-sorted names: about half the bytes below.
std::size_t split_point(const std::vector<Named>& names) {
  std::uint64_t total = 0, acc = 0;
  for (const auto& n : names) total += dirent_size(std::uint32_t(n.name.size()));
  std::size_t s = 0;
  while (s < names.size() && acc < total / 2) acc += dirent_size(std::uint32_t(names[s++].name.size()));
  return std::clamp<std::size_t>(s, 1, names.size() - 1);
}

fsio::Result<std::vector<Named>> leaf_names(Filesystem& fs, const Inode& dir, std::span<const std::byte> block,
                                            std::uint32_t logical, std::uint8_t version) {
  std::vector<Named> out;
  FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), logical, true, fs.layout(),
                           [&](const DirEntry& d) -> fsio::Status {
                             const DxHash h = FSIO_TRY(dx_hash(d.name, version, fs.layout().hash_seed));
                             out.push_back(Named{std::string(d.name), d.inode, d.file_type, h.major});
                             return {};
                           }));
  return out;
}

// Makes room for one more entry in the last frame: a full root gains a
// level, a full node is split into two under the root.
fsio::Status make_room(Filesystem& fs, Allocator& alloc, Inode& dir, std::vector<DxBlock>& frames,
                       std::vector<std::size_t>& at) {
  const Layout& l = fs.layout();
  DxBlock& last = frames.back();
  if (last.count() < last.limit()) return {};
  if (frames.size() == 1) {  // the root: push its entries down into a new node
    const auto nb = FSIO_TRY(grow_dir(fs, alloc, dir));
    DxBlock node = new_node(l, nb);
    DxBlock& root = frames[0];
    std::memcpy(node.data.data() + node.co + 4, root.data.data() + root.co + 4, 8 * std::size_t(root.count()) - 4);
    node.set_count_limit(root.count(), node.limit());
    root.set_count_limit(1, root.limit());
    root.set(0, 0, nb.logical);
    auto info = fsio::load<DxRootInfo>(root.data, kDxRootInfoOffset);
    info.indirect_levels = 1;
    fsio::store(root.data, info, kDxRootInfoOffset);
    frames.push_back(node);
    at.push_back(at[0]);
    at[0] = 0;
    return {};
  }
  DxBlock& root = frames[0];
  if (root.count() >= root.limit())
    return make_error(Errc::unsupported, "ext directory inode " + std::to_string(dir.ino) +
                                             ": the htree index is full (a third level needs large_dir)");
  const auto nb = FSIO_TRY(grow_dir(fs, alloc, dir));
  DxBlock right = new_node(l, nb);
  DxBlock& node = frames[1];
  const std::size_t n = node.count(), half = n / 2;
  const std::uint32_t key = node.hash(half);
  for (std::size_t i = half; i < n; ++i) right.set(i - half, node.hash(i), node.block(i));
  right.set_count_limit(std::uint16_t(n - half), right.limit());
  node.set_count_limit(std::uint16_t(half), node.limit());
  root.insert_after(at[0], key, nb.logical);
  seal_dx(fs, node, dir);
  if (at[1] >= half) {
    frames[1] = right;
    at[0] += 1;
    at[1] -= half;
  } else {
    seal_dx(fs, right, dir);
  }
  return {};
}

// Hash-sorted names cut about half way by bytes. The upper half's first
// hash keys it in the index, with the low "continued" bit when a run of
// equal hashes straddles the cut.
struct Cut {
  std::size_t at = 0;
  std::uint32_t hash = 0;
  bool continued = false;
  std::uint32_t key() const { return hash | (continued ? 1 : 0); }
};

Cut sort_and_cut(std::vector<Named>& names) {
  std::stable_sort(names.begin(), names.end(), [](const Named& a, const Named& b) { return a.hash < b.hash; });
  const std::size_t s = split_point(names);
  const std::uint32_t hash2 = names[s].hash;
  const bool continued = names[s - 1].hash == hash2;
  return {s, hash2, continued};
}

std::string dir_where(const Inode& dir) { return "ext directory inode " + std::to_string(dir.ino) + ": "; }

// The index blocks a name's hash passes through: the dx_root and, with
// indirect_levels 1, the dx_node under it; `at` is the entry taken in each.
struct IndexPath {
  std::vector<DxBlock> frames;
  std::vector<std::size_t> at;
  std::uint8_t version = 0;  // the hash the directory uses
  std::uint32_t hash = 0;    // the name's (major)
  std::vector<Extent> map;   // the directory's extents, read once for the whole path
};

// Reads the dx_root (and dx_node), each block checked, down to the leaf `name` belongs in.
fsio::Result<IndexPath> index_path(Filesystem& fs, const Inode& dir, std::string_view name) {
  const Layout& l = fs.layout();
  IndexPath path;
  path.map = FSIO_TRY(fs.extents(dir));
  const std::uint64_t root_phys = FSIO_TRY(physical_in(path.map, dir, 0));
  auto root_data = FSIO_TRY(fs.meta(root_phys));
  FSIO_TRY(for_each_dirent(root_data, dir.ino, dir.generation(), 0, true, l,
                           [](const DirEntry&) -> fsio::Status { return {}; }));
  const auto info = fsio::load<DxRootInfo>(root_data, kDxRootInfoOffset);
  if (info.indirect_levels > 1)
    return make_error(Errc::unsupported, dir_where(dir) + "htree with " + std::to_string(info.indirect_levels + 1) +
                                             " levels (large_dir) is not supported");
  path.version = effective_hash_version(info.hash_version, l.unsigned_hash);
  path.hash = FSIO_TRY(dx_hash(name, path.version, l.hash_seed)).major;
  path.frames = {DxBlock{root_data, kDxRootCountOffset, root_phys, false}};
  path.at = {path.frames[0].find(path.hash)};
  if (info.indirect_levels == 1) {
    const std::uint32_t logical = path.frames[0].block(path.at[0]);
    const std::uint64_t phys = FSIO_TRY(physical_in(path.map, dir, logical));
    auto data = FSIO_TRY(fs.meta(phys));
    FSIO_TRY(for_each_dirent(data, dir.ino, dir.generation(), logical, true, l,
                             [](const DirEntry&) -> fsio::Status { return {}; }));
    if (classify_dir_block(data, logical, true, l) != DirBlockKind::dx_node)
      return make_error(Errc::corrupt,
                        dir_where(dir) + "htree index names block " + std::to_string(logical) + ", not a dx_node");
    path.frames.push_back(DxBlock{data, kDxNodeCountOffset, phys, false});
    path.at.push_back(path.frames[1].find(path.hash));
  }
  return path;
}

// Every index block on the path copied (copy_dir_block) before the split
// changes it, so the directory changes all at once when the inode that maps
// the copies is written, whatever write a crash stops at.
fsio::Status copy_index_path(Filesystem& fs, Allocator& alloc, Inode& dir, IndexPath& path) {
  std::vector<std::uint32_t> frame_logical{0};
  if (path.frames.size() == 2) frame_logical.push_back(path.frames[0].block(path.at[0]));
  for (std::size_t k = 0; k < path.frames.size(); ++k) {
    const auto copy = FSIO_TRY(copy_dir_block(fs, alloc, dir, frame_logical[k]));
    path.frames[k].data = copy.data;
    path.frames[k].physical = copy.physical;
    path.frames[k].fresh = true;
  }
  return {};
}

// A full leaf split in two by hash (a copy of it and a new block), the new
// block keyed in the index, and the name added to the half its hash selects.
fsio::Status split_leaf(Filesystem& fs, Allocator& alloc, Inode& dir, IndexPath& path, std::uint32_t leaf_logical,
                        std::vector<Named> names, std::string_view name, std::uint32_t ino, std::uint8_t file_type) {
  const Layout& l = fs.layout();
  if (names.size() < 2)
    return make_error(Errc::unsupported, dir_where(dir) + "a full leaf with one name cannot be split");
  FSIO_TRY(copy_index_path(fs, alloc, dir, path));
  FSIO_TRY(make_room(fs, alloc, dir, path.frames, path.at));
  const Cut cut = sort_and_cut(names);
  const auto leaf = FSIO_TRY(copy_dir_block(fs, alloc, dir, leaf_logical)).data;
  const auto nb = FSIO_TRY(grow_dir(fs, alloc, dir));
  write_leaf(leaf, names, 0, cut.at, dir, l);
  write_leaf(nb.data, names, cut.at, names.size(), dir, l);
  path.frames.back().insert_after(path.at.back(), cut.key(), nb.logical);
  for (auto& f : path.frames) seal_dx(fs, f, dir);
  auto target = path.hash >= cut.hash ? nb.data : leaf;
  if (!insert_in_block(target, name, ino, file_type, l))
    return make_error(Errc::invalid_argument, dir_where(dir) + "no room for '" + std::string(name) + "' after a split");
  seal_leaf_block(target, dir, l);
  return {};
}

// The names of a linear directory's one block but . and .., hashed; `parent` from "..".
fsio::Result<std::vector<Named>> linear_names(Filesystem& fs, const Inode& dir, std::span<const std::byte> block,
                                              std::uint8_t version, std::uint32_t& parent) {
  const Layout& l = fs.layout();
  std::vector<Named> names;
  FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), 0, false, l, [&](const DirEntry& d) -> fsio::Status {
    if (d.name == "..") parent = d.inode;
    if (d.name == "." || d.name == "..") return {};
    const DxHash h = FSIO_TRY(dx_hash(d.name, version, l.hash_seed));
    names.push_back(Named{std::string(d.name), d.inode, d.file_type, h.major});
    return {};
  }));
  return names;
}

// The directory remapped to three new blocks (root at logical 0, two
// leaves), its old block and tree freed after the commit; i_size and
// EXT4_INDEX_FL set. Returns the new blocks' physical numbers by logical.
fsio::Result<std::array<std::uint64_t, 3>> remap_to_three_blocks(Filesystem& fs, Allocator& alloc, Inode& dir,
                                                                 std::uint64_t old_phys) {
  const Layout& l = fs.layout();
  const auto old = FSIO_TRY(fs.extents(dir));
  std::vector<Extent> extents;
  std::uint64_t goal = old_phys;
  for (std::uint32_t logical = 0; logical < 3;) {
    const BlockRun run = FSIO_TRY(alloc.alloc_blocks(goal, 3 - logical));
    extents.push_back(Extent{logical, run.len, run.start, false});
    logical += run.len;
    goal = run.start + run.len;
  }
  for (std::uint64_t b : FSIO_TRY(extent_tree_blocks(fs, dir))) {
    alloc.free_blocks(b, 1);
    fs.forget(b);
  }
  for (const Extent& e : old) alloc.free_blocks(e.physical, e.len);
  const auto tree = FSIO_TRY(build_extent_tree(fs, alloc, dir, extents, goal));
  FSIO_TRY(set_inode_blocks(dir, 3 + tree.size(), l));
  auto f = dir.fields();
  f.i_size_lo = 3 * l.block_size;
  f.i_size_high = 0;
  f.i_flags = f.i_flags | EXT4_INDEX_FL;
  dir.set_fields(f);

  std::array<std::uint64_t, 3> phys{};
  for (const Extent& e : extents)
    for (std::uint32_t i = 0; i < e.len; ++i) phys[e.logical + i] = e.physical + i;
  return phys;
}

// A dx_root holding . and .. and two entries, for leaves 1 and 2.
void write_dx_root(Filesystem& fs, const Inode& dir, std::uint64_t phys, std::uint32_t parent, const Cut& cut) {
  const Layout& l = fs.layout();
  auto root = fs.meta_new(phys, MetaKind::fresh);
  const std::uint8_t dt = file_type_for(S_IFDIR_, l);
  put_entry(root, 0, dir.ino, 12, ".", dt, l);
  put_entry(root, 12, parent, l.block_size - 12, "..", dt, l);
  DxRootInfo info{};
  info.hash_version = l.def_hash_version;
  info.info_length = 8;
  fsio::store(root, info, kDxRootInfoOffset);
  DxBlock r{root, kDxRootCountOffset, phys, true};
  r.set_count_limit(2, dx_limit(l, kDxRootCountOffset));
  r.set(0, 0, 1);
  r.set(1, cut.key(), 2);
  seal_dx(fs, r, dir);
}

}  // namespace

fsio::Status htree_add(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                       std::uint8_t file_type) {
  const Layout& l = fs.layout();
  IndexPath path = FSIO_TRY(index_path(fs, dir, name));
  const std::uint32_t leaf_logical = path.frames.back().block(path.at.back());
  const std::uint64_t leaf_phys = FSIO_TRY(physical_in(path.map, dir, leaf_logical));
  std::span<std::byte> leaf = FSIO_TRY(fs.meta(leaf_phys));
  // The leaf is checked before it is changed, unless this transaction made
  // it (a tree fill adds every name to blocks it made: checking each again
  // at every add was a tenth of its time); its names are hashed only when
  // it must split (most adds fit, and hashing every name of the leaf on
  // each add made a tree fill spend most of its time here).
  if (!fs.is_fresh(leaf_phys))
    FSIO_TRY(for_each_dirent(leaf, dir.ino, dir.generation(), leaf_logical, true, l,
                             [](const DirEntry&) -> fsio::Status { return {}; }));
  if (insert_in_block(leaf, name, ino, file_type, l)) {
    seal_leaf_block(leaf, dir, l);
    fs.mark_dirty(leaf_phys, MetaKind::directory);
    return {};
  }
  auto names = FSIO_TRY(leaf_names(fs, dir, leaf, leaf_logical, path.version));
  return split_leaf(fs, alloc, dir, path, leaf_logical, std::move(names), name, ino, file_type);
}

fsio::Status htree_convert(Filesystem& fs, Allocator& alloc, Inode& dir, std::string_view name, std::uint32_t ino,
                           std::uint8_t file_type) {
  const Layout& l = fs.layout();
  const std::uint8_t version = effective_hash_version(l.def_hash_version, l.unsigned_hash);
  const std::uint64_t old_phys = FSIO_TRY(physical_of(fs, dir, 0));
  auto block = FSIO_TRY(fs.meta(old_phys));
  std::uint32_t parent = 0;
  std::vector<Named> names = FSIO_TRY(linear_names(fs, dir, block, version, parent));
  const DxHash h = FSIO_TRY(dx_hash(name, version, l.hash_seed));
  names.push_back(Named{std::string(name), ino, file_type, h.major});
  const Cut cut = sort_and_cut(names);
  const auto phys = FSIO_TRY(remap_to_three_blocks(fs, alloc, dir, old_phys));
  write_leaf(fs.meta_new(phys[1], MetaKind::fresh), names, 0, cut.at, dir, l);
  write_leaf(fs.meta_new(phys[2], MetaKind::fresh), names, cut.at, names.size(), dir, l);
  write_dx_root(fs, dir, phys[0], parent, cut);
  fs.forget(old_phys);
  return {};
}

}  // namespace ext
