// Opening a filesystem, the metadata cache, inodes, path lookup.
#include "ext/fs.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>

#include "ext/hash.hpp"
#include "ext/journal.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

Filesystem::~Filesystem() = default;

fsio::Result<std::unique_ptr<Filesystem>> Filesystem::open(const std::string& path, const OpenOptions& o) {
  std::unique_ptr<Filesystem> fs(new Filesystem());
  fsio::OpenOptions oo;
  oo.write = o.write;
  oo.check_write = o.check_write;
  oo.direct = o.direct;
  oo.offset = o.offset;
  fs->dev_ = std::make_unique<fsio::Device>(FSIO_TRY(fsio::Device::open(path, oo)));
  fsio::QueueOptions qo;
  qo.engine = o.engine;
  fs->q_ = std::make_unique<fsio::IoQueue>(FSIO_TRY(fsio::IoQueue::create(*fs->dev_, qo)));
  fs->writable_ = o.write;
  if (auto st = fs->load(o); !st) return std::move(st).error().at(path);
  return fs;
}

fsio::Result<std::unique_ptr<Filesystem>> Filesystem::adopt(std::unique_ptr<fsio::Device> device,
                                                            std::unique_ptr<fsio::IoQueue> queue,
                                                            const std::string& name,
                                                            std::span<const std::byte> superblock,
                                                            const OpenOptions& o) {
  std::unique_ptr<Filesystem> fs(new Filesystem());
  fs->dev_ = std::move(device);
  fs->q_ = std::move(queue);
  fs->writable_ = o.write;
  if (auto st = fs->load(o, superblock); !st) return std::move(st).error().at(name);
  return fs;
}

fsio::Status Filesystem::load(const OpenOptions& o, std::span<const std::byte> superblock) {
  // The superblock sits at byte 1024 whatever the block size; one aligned
  // 4 KiB read covers it (zero-filled past the end of a tiny device).
  fsio::AlignedBuffer head(4096);
  if (superblock.size() == kSuperblockSize)
    std::memcpy(head.data() + kSuperblockOffset, superblock.data(), kSuperblockSize);
  else FSIO_TRY(q_->read(0, head.span()));
  const auto sb_bytes = head.span().subspan(kSuperblockOffset, kSuperblockSize);
  l_ = FSIO_TRY(decode_layout(sb_bytes, dev_->size()));
  sb_ = fsio::load<Ext4SuperBlock>(sb_bytes);
  FSIO_TRY(check_readable(l_));
  const auto& topo = dev_->topology();
  if (dev_->direct() && l_.block_size % topo.dio_offset_align != 0)
    return make_error(Errc::unsupported, "block size " + std::to_string(l_.block_size) +
                                             " is smaller than the device's direct-I/O alignment " +
                                             std::to_string(topo.dio_offset_align) + "; use --buffered");
  FSIO_TRY(load_groups());
  if (o.write || o.check_write) FSIO_TRY(write_gate());
  return {};
}

fsio::Status Filesystem::load_groups() {
  const std::uint32_t bs = l_.block_size;
  fsio::AlignedBuffer table(std::size_t(l_.gdt_blocks) * bs);
  {
    auto plug = q_->plug();
    for (std::uint32_t i = 0; i < l_.gdt_blocks; ++i) {
      const std::uint64_t blk = l_.descriptor_block(i);
      if (blk >= l_.blocks_count)
        return make_error(Errc::corrupt, "ext descriptor block " + std::to_string(i) + " at " +
                                             fsio::format_hex(blk, true) + " is outside the filesystem");
      plug.read(blk * bs, table.span().subspan(std::size_t(i) * bs, bs));
    }
    FSIO_TRY(plug.finish());
  }
  gdt_raw_.assign(table.data(), table.data() + std::size_t(l_.group_count) * l_.desc_size);
  groups_.resize(l_.group_count);
  dirty_groups_.assign(l_.group_count, false);
  for (std::uint32_t g = 0; g < l_.group_count; ++g) {
    const auto raw = std::span<const std::byte>(gdt_raw_).subspan(std::size_t(g) * l_.desc_size, l_.desc_size);
    groups_[g] = decode_group_desc(raw, l_);
    if (l_.group_csum()) {
      const std::uint16_t want = group_desc_checksum(raw, g, l_, sb_.s_uuid);
      if (groups_[g].checksum != want)
        return make_error(Errc::corrupt, "ext group descriptor " + std::to_string(g) + ": bg_checksum " +
                                             fsio::format_hex(groups_[g].checksum, true) +
                                             " does not match the contents (" + fsio::format_hex(want, true) + ")");
    }
    FSIO_TRY(check_group_desc(groups_[g], g, l_));
  }
  unused_from_.resize(l_.group_count, l_.inodes_per_group);
  if (l_.group_csum())
    for (std::uint32_t g = 0; g < l_.group_count; ++g)
      unused_from_[g] = groups_[g].flags & EXT4_BG_INODE_UNINIT ? 0 : l_.inodes_per_group - groups_[g].itable_unused;
  return {};
}

fsio::Status Filesystem::write_gate() {
  FSIO_TRY(check_writable(l_, sb_));
  if (!l_.has_compat(EXT3_FEATURE_COMPAT_HAS_JOURNAL)) return {};
  // A journal with s_start != 0 is replayed by the next mount, over our writes.
  auto journal = FSIO_TRY_CTX(read_inode(sb_.s_journal_inum), "ext journal inode");
  std::uint64_t first = 0;
  FSIO_TRY(walk_mapping(journal, l_, reader(), [&](const Extent& e) -> fsio::Status {
    if (e.logical == 0 && first == 0) first = e.physical;
    return {};
  }));
  if (first == 0)
    return make_error(Errc::corrupt, "ext journal inode " + std::to_string(sb_.s_journal_inum) + " has no block 0");
  auto block = FSIO_TRY(meta(first));
  return check_journal_clean(block);
}

fsio::Result<std::span<std::byte>> Filesystem::meta(std::uint64_t block) {
  if (auto it = cache_.find(block); it != cache_.end()) return it->second.buf.span();
  if (block >= l_.blocks_count)
    return make_error(Errc::corrupt,
                      "ext: metadata block " + fsio::format_hex(block, true) + " is outside the filesystem");
  Cached c;
  c.buf = fsio::AlignedBuffer(l_.block_size);
  FSIO_TRY(q_->read(block * l_.block_size, c.buf.span()));
  auto [it, inserted] = cache_.emplace(block, std::move(c));
  return it->second.buf.span();
}

fsio::Status Filesystem::prefetch(const std::vector<Extent>& runs, std::uint64_t max_blocks) {
  auto plug = q_->plug();
  std::vector<std::pair<std::uint64_t, fsio::AlignedBuffer>> got;
  std::uint64_t n = 0;
  for (const Extent& e : runs) {
    if (e.unwritten) continue;
    for (std::uint32_t i = 0; i < e.len && n < max_blocks; ++i, ++n) {
      const std::uint64_t b = e.physical + i;
      if (cache_.count(b) || b >= l_.blocks_count) continue;
      got.emplace_back(b, fsio::AlignedBuffer(l_.block_size));
    }
  }
  for (auto& [b, buf] : got) plug.read(b * l_.block_size, buf.span());
  FSIO_TRY(plug.finish());
  for (auto& [b, buf] : got) {
    Cached c;
    c.buf = std::move(buf);
    cache_.emplace(b, std::move(c));
  }
  return {};
}

std::span<std::byte> Filesystem::meta_new(std::uint64_t block, MetaKind kind) {
  spilled_freed_.erase(block);  // metadata again: written with its new bytes
  freed_old_.erase(block);
  Cached& c = cache_[block];
  if (c.buf.size() == 0) c.buf = fsio::AlignedBuffer(l_.block_size);
  else c.buf.zero();
  c.dirty = true;
  c.kind = kind;
  return c.buf.span();
}

void Filesystem::mark_dirty(std::uint64_t block, MetaKind kind) {
  auto it = cache_.find(block);
  FSIO_ASSERT(it != cache_.end());
  // A block allocated in this transaction stays "fresh" whatever else
  // touches it; otherwise the latest stage wins.
  Cached& c = it->second;
  if (!c.dirty) c.kind = spilled_fresh_.count(block) ? MetaKind::fresh : kind;
  else if (c.kind != MetaKind::fresh && kind > c.kind) c.kind = kind;
  c.dirty = true;
}

bool Filesystem::is_fresh(std::uint64_t block) const {
  auto it = cache_.find(block);
  if (it != cache_.end() && it->second.dirty && it->second.kind == MetaKind::fresh) return true;
  return spilled_fresh_.count(block) != 0;
}

std::vector<std::uint64_t> Filesystem::dirty_blocks(MetaKind kind) const {
  std::vector<std::uint64_t> out;
  for (const auto& [block, c] : cache_)
    if (c.dirty && c.kind == kind) out.push_back(block);
  std::sort(out.begin(), out.end());
  return out;
}

void Filesystem::mark_clean(std::uint64_t block) {
  if (auto it = cache_.find(block); it != cache_.end()) it->second.dirty = false;
}

void Filesystem::forget(std::uint64_t block) {
  const bool fresh = is_fresh(block);
  cache_.erase(block);
  spilled_fresh_.erase(block);
  if (spilled_.erase(block)) spilled_freed_.insert(block);
  else if (!fresh) freed_old_.insert(block);
}

fsio::Status Filesystem::zero_spilled_frees(bool old_too) {
  std::vector<std::uint64_t> blocks(spilled_freed_.begin(), spilled_freed_.end());
  if (old_too) blocks.insert(blocks.end(), freed_old_.begin(), freed_old_.end());
  if (blocks.empty()) return {};
  std::sort(blocks.begin(), blocks.end());
  const fsio::AlignedBuffer zeros(l_.block_size);
  auto plug = q_->plug();
  for (std::uint64_t b : blocks) plug.write(b * l_.block_size, zeros.span());
  FSIO_TRY(plug.finish());
  spilled_freed_.clear();
  if (old_too) freed_old_.clear();
  return {};
}

fsio::Status Filesystem::spill() {
  // Every cached block, clean ones too: a bitmap the allocator built for a
  // BLOCK_UNINIT group is cached clean but is on no disk, and one read back
  // must find it. A block read from the device is written as it was.
  std::vector<std::uint64_t> all;
  all.reserve(cache_.size());
  for (const auto& [block, c] : cache_) all.push_back(block);
  return write_and_drop(std::move(all));
}

fsio::Status Filesystem::write_and_drop(std::vector<std::uint64_t> blocks) {
  std::sort(blocks.begin(), blocks.end());
  auto plug = q_->plug();
  for (std::uint64_t b : blocks) plug.write(b * l_.block_size, cache_.at(b).buf.span());
  FSIO_TRY(plug.finish());
  for (std::uint64_t b : blocks) {
    if (const Cached& c = cache_.at(b); c.dirty && c.kind == MetaKind::fresh) spilled_fresh_.insert(b);
    spilled_.insert(b);
    cache_.erase(b);
  }
  return {};
}

fsio::Status Filesystem::spill_unseen() {
  // Where each group's inode table starts, to find a table block's group.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tables(l_.group_count);
  for (std::uint32_t g = 0; g < l_.group_count; ++g) tables[g] = {groups_[g].inode_table, g};
  std::sort(tables.begin(), tables.end());
  const std::uint64_t per_block = l_.block_size / l_.inode_size;
  auto unseen_inodes = [&](std::uint64_t block) {
    auto it = std::upper_bound(tables.begin(), tables.end(), std::pair{block, UINT32_MAX});
    if (it == tables.begin()) return false;
    --it;
    const std::uint64_t first = (block - it->first) * per_block;  // first inode index the block holds
    return first < l_.inodes_per_group && first >= unused_from_[it->second];
  };
  std::vector<std::uint64_t> out;
  for (const auto& [block, c] : cache_)
    if (c.dirty && (c.kind == MetaKind::fresh || (c.kind == MetaKind::inode_table && unseen_inodes(block))))
      out.push_back(block);
  return write_and_drop(std::move(out));
}

BlockReader Filesystem::reader() {
  return [this](std::uint64_t block) -> fsio::Result<std::span<const std::byte>> {
    auto b = FSIO_TRY(meta(block));
    return std::span<const std::byte>(b);
  };
}

std::pair<std::uint64_t, std::uint32_t> Filesystem::inode_location(std::uint32_t ino) const {
  const std::uint32_t g = l_.group_of_inode(ino);
  const std::uint64_t byte = std::uint64_t((ino - 1) % l_.inodes_per_group) * l_.inode_size;
  return {groups_[g].inode_table + byte / l_.block_size, std::uint32_t(byte % l_.block_size)};
}

fsio::Result<Inode> Filesystem::read_inode(std::uint32_t ino) {
  if (ino == 0 || ino > l_.inodes_count)
    return make_error(Errc::corrupt,
                      "ext: inode number " + std::to_string(ino) + " is outside 1.." + std::to_string(l_.inodes_count));
  const std::uint32_t g = l_.group_of_inode(ino);
  const std::uint32_t index = (ino - 1) % l_.inodes_per_group;
  const GroupDesc& d = groups_[g];
  if (l_.group_csum() && ((d.flags & EXT4_BG_INODE_UNINIT) || index >= l_.inodes_per_group - d.itable_unused))
    return make_error(Errc::corrupt, "ext: inode " + std::to_string(ino) + " lies in the unused part of group " +
                                         std::to_string(g) + "'s inode table");
  auto [block, off] = inode_location(ino);
  auto data = FSIO_TRY(meta(block));
  Inode inode;
  inode.ino = ino;
  inode.raw.assign(data.begin() + off, data.begin() + off + l_.inode_size);
  FSIO_TRY(check_inode(inode, l_));
  return inode;
}

fsio::Status Filesystem::write_inode(Inode& inode, MetaKind kind) {
  set_inode_checksum(inode, l_);
  auto [block, off] = inode_location(inode.ino);
  auto data = FSIO_TRY(meta(block));
  std::memcpy(data.data() + off, inode.raw.data(), inode.raw.size());
  mark_dirty(block, kind);
  return {};
}

fsio::Result<std::vector<Extent>> Filesystem::extents(const Inode& inode) {
  std::vector<Extent> out;
  FSIO_TRY(walk_mapping(inode, l_, reader(), [&](const Extent& e) -> fsio::Status {
    out.push_back(e);
    return {};
  }));
  return out;
}

fsio::Status Filesystem::for_each_entry(const Inode& dir,
                                        const std::function<fsio::Result<bool>(const DirEntry&)>& fn) {
  if (!dir.is_dir())
    return make_error(Errc::invalid_argument, "ext: inode " + std::to_string(dir.ino) + " is not a directory");
  const bool indexed = dir.flags() & EXT4_INDEX_FL;
  const auto list = FSIO_TRY(extents(dir));
  const std::uint64_t nblocks = (dir.size() + l_.block_size - 1) / l_.block_size;
  FSIO_TRY(prefetch(list, nblocks));
  bool stop = false;
  for (const Extent& e : list) {
    for (std::uint32_t i = 0; i < e.len && !stop; ++i) {
      const std::uint32_t logical = e.logical + i;
      if (logical >= nblocks) break;
      if (e.unwritten) continue;
      auto block = FSIO_TRY(meta(e.physical + i));
      FSIO_TRY(for_each_dirent(block, dir.ino, dir.generation(), logical, indexed, l_,
                               [&](const DirEntry& d) -> fsio::Status {
                                 if (stop) return {};
                                 stop = !FSIO_TRY(fn(d));
                                 return {};
                               }));
    }
    if (stop) break;
  }
  return {};
}

// Hashed lookup (ext4's dx_probe): root, at most one node level, then the
// leaf the hash selects and the next ones while the index marks the hash as
// continued there. nullopt when the index cannot be followed (then the
// caller reads the directory linearly, as ext2 would).
fsio::Result<std::optional<std::uint32_t>> Filesystem::find_hashed(const Inode& dir, std::string_view name,
                                                                   const std::vector<Extent>& list) {
  using Found = std::optional<std::uint32_t>;
  auto phys = [&](std::uint32_t logical) -> std::uint64_t {
    for (const Extent& e : list)
      if (!e.unwritten && logical >= e.logical && logical - e.logical < e.len)
        return e.physical + (logical - e.logical);
    return 0;
  };
  auto root = FSIO_TRY(meta(phys(0)));
  const auto info = fsio::load<DxRootInfo>(root, kDxRootInfoOffset);
  if (phys(0) == 0 || info.info_length != 8 || info.indirect_levels > 1) return Found();
  auto h = dx_hash(name, effective_hash_version(info.hash_version, l_.unsigned_hash), l_.hash_seed);
  if (!h) return Found();
  std::span<const std::byte> node = root;
  std::size_t co = kDxRootCountOffset;
  for (int level = 0;; ++level) {
    const auto cl = fsio::load<DxCountLimit>(node, co);
    if (cl.count == 0 || co + 8 * std::size_t(cl.count) > node.size()) return Found();
    std::size_t at = 0;
    for (std::size_t i = 1; i < cl.count; ++i)
      if (fsio::load<le32>(node, co + 8 * i) <= h->major) at = i;
    if (level == info.indirect_levels) {
      // Leaves from `at` on, while the next entry continues the same hash.
      for (std::size_t i = at; i < cl.count; ++i) {
        if (i > at && (fsio::load<le32>(node, co + 8 * i) & ~1u) != h->major) break;
        const std::uint32_t logical = fsio::load<le32>(node, co + 8 * i + 4);
        if (phys(logical) == 0) return Found();
        auto leaf = FSIO_TRY(meta(phys(logical)));
        std::uint32_t found = 0;
        FSIO_TRY(
            for_each_dirent(leaf, dir.ino, dir.generation(), logical, true, l_, [&](const DirEntry& d) -> fsio::Status {
              if (d.name == name) found = d.inode;
              return {};
            }));
        if (found) return Found(found);
        if (i + 1 < cl.count && !(fsio::load<le32>(node, co + 8 * (i + 1)) & 1)) break;
      }
      return Found(0);
    }
    const std::uint32_t child = fsio::load<le32>(node, co + 8 * at + 4);
    if (phys(child) == 0) return Found();
    node = FSIO_TRY(meta(phys(child)));
    FSIO_TRY(for_each_dirent(node, dir.ino, dir.generation(), child, true, l_,
                             [](const DirEntry&) -> fsio::Status { return {}; }));
    co = kDxNodeCountOffset;
  }
}

fsio::Result<std::uint32_t> Filesystem::find_entry(const Inode& dir, std::string_view name) {
  if ((dir.flags() & EXT4_INDEX_FL) && dir.is_dir()) {
    const auto list = FSIO_TRY(extents(dir));
    if (auto hashed = FSIO_TRY(find_hashed(dir, name, list))) return *hashed;
  }
  std::uint32_t found = 0;
  FSIO_TRY(for_each_entry(dir, [&](const DirEntry& d) -> fsio::Result<bool> {
    if (d.name == name) found = d.inode;
    return found == 0;
  }));
  return found;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto part = path.substr(0, slash);
    if (!part.empty()) out.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

fsio::Result<std::uint32_t> Filesystem::lookup(std::string_view path) {
  std::uint32_t ino = EXT2_ROOT_INO;
  std::string walked;
  for (std::string_view part : split_path(path)) {
    auto dir = FSIO_TRY(read_inode(ino));
    if (!dir.is_dir())
      return make_error(Errc::not_found,
                        "ext: " + (walked.empty() ? std::string("/") : walked) + " is not a directory");
    walked += "/";
    walked += part;
    ino = FSIO_TRY(find_entry(dir, part));
    if (ino == 0) return make_error(Errc::not_found, "ext: " + walked + ": no such file or directory");
  }
  return ino;
}

fsio::Status Filesystem::read_file(const Inode& inode,
                                   const std::function<fsio::Status(std::span<const std::byte>)>& sink,
                                   std::uint64_t chunk) {
  const std::uint64_t bs = l_.block_size;
  const std::uint64_t size = inode.size();
  // No bigger a buffer than the file needs: reading a small file or a
  // directory must not allocate and zero a whole chunk.
  const std::uint64_t blocks = size / bs + (size % bs != 0);
  chunk = std::max<std::uint64_t>(std::min(chunk / bs, blocks), 1) * bs;
  const auto list = FSIO_TRY(extents(inode));
  fsio::AlignedBuffer buf(chunk);
  std::size_t next = 0;  // first extent that may reach the current window
  for (std::uint64_t pos = 0; pos < size; pos += chunk) {
    const std::uint64_t len = std::min(chunk, size - pos);
    const std::uint64_t first = pos / bs, last = (pos + len + bs - 1) / bs;  // logical blocks [first, last)
    std::memset(buf.data(), 0, len);  // holes and unwritten extents read as zeros
    auto plug = q_->plug();
    while (next < list.size() && list[next].logical + std::uint64_t(list[next].len) <= first) ++next;
    for (std::size_t k = next; k < list.size() && list[k].logical < last; ++k) {
      const Extent& e = list[k];
      if (e.unwritten) continue;
      const std::uint64_t a = std::max<std::uint64_t>(e.logical, first);
      const std::uint64_t b = std::min<std::uint64_t>(e.logical + std::uint64_t(e.len), last);
      if (a >= b) continue;
      plug.read((e.physical + (a - e.logical)) * bs, buf.span().subspan((a - first) * bs, (b - a) * bs));
    }
    FSIO_TRY(plug.finish());
    FSIO_TRY(sink(buf.span().first(len)));
  }
  return {};
}

std::uint64_t Filesystem::free_blocks_from_groups() const {
  std::uint64_t n = 0;
  for (const auto& g : groups_) n += g.free_blocks;
  return n;
}

std::uint64_t Filesystem::free_inodes_from_groups() const {
  std::uint64_t n = 0;
  for (const auto& g : groups_) n += g.free_inodes;
  return n;
}

}  // namespace ext
