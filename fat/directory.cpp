// Directory: loading, slot positions, in-memory edits, write-back (see
// directory.hpp). Parsing lives in dir_parse.cpp.
#include <algorithm>
#include <cstring>

#include "fat/directory.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

Directory::Directory(const Layout& layout, bool root, std::uint32_t first_cluster)
    : layout_(layout), root_(root), first_cluster_(first_cluster) {}

fsio::Result<Directory> Directory::open_root(Volume& v) {
  const Layout& l = v.layout();
  Directory d(l, true, l.type == FatType::fat32 ? l.root_cluster : 0);
  FSIO_TRY(d.load(v));
  return d;
}

fsio::Result<Directory> Directory::open(Volume& v, std::uint32_t first_cluster) {
  const Layout& l = v.layout();
  Directory d(l, l.type == FatType::fat32 && first_cluster == l.root_cluster, first_cluster);
  FSIO_TRY(d.load(v));
  return d;
}

fsio::Result<Directory> Directory::open(Volume& v, const Entry& e) {
  if (!e.is_directory()) return make_error(Errc::invalid_argument, "'" + e.name + "' is not a directory");
  if (e.first_cluster == 0) return open_root(v);
  return open(v, e.first_cluster);
}

Directory Directory::create(const Layout& l, std::uint32_t cluster, std::uint32_t parent_cluster, DosDateTime when) {
  FSIO_ASSERT(l.is_cluster(cluster));
  Directory d(l, false, cluster);
  d.bytes_ = l.cluster_bytes();
  d.data_ = fsio::AlignedBuffer(std::size_t(d.bytes_));  // zero-filled
  const auto dots = make_dot_entries(l, cluster, parent_cluster, when);
  fsio::store(d.data_.span(), dots[0], 0);
  fsio::store(d.data_.span(), dots[1], 32);
  d.clusters_ = {cluster};
  d.chain_ = Chain{cluster, 1, cluster, ChainEnd::end_of_chain, end_of_chain(l.type)};
  d.dirty_.assign(d.bytes_ / l.sector_size, true);
  d.stale_ = true;
  return d;
}

fsio::Status Directory::load(Volume& v) {
  const std::uint32_t ss = layout_.sector_size;
  if (root_ && layout_.type != FatType::fat32) {
    bytes_ = std::uint64_t(layout_.root_entries) * 32;
    data_ = fsio::AlignedBuffer(std::size_t(layout_.root_dir_sectors()) * ss);
    FSIO_TRY_CTX(v.queue().read(layout_.root_dir_offset(), data_.span()), "read the root directory");
    chain_.end = ChainEnd::end_of_chain;
  } else {
    const std::uint64_t cb = layout_.cluster_bytes();
    const std::uint64_t max_clusters = std::max<std::uint64_t>(kMaxDirBytes / cb, 1);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
    std::uint64_t taken = 0;
    chain_ = FSIO_TRY(walk_chain(v.fat(), first_cluster_, [&](std::uint32_t first, std::uint32_t count) {
      const auto n = std::uint32_t(std::min<std::uint64_t>(count, max_clusters - taken));
      runs.emplace_back(first, n);
      taken += n;
      return taken < max_clusters;
    }));
    truncated_ = chain_.length > max_clusters;
    bytes_ = taken * cb;
    if (bytes_) data_ = fsio::AlignedBuffer(std::size_t(bytes_));
    auto plug = v.queue().plug();
    std::uint64_t at = 0;
    for (auto [first, count] : runs) {
      plug.read(layout_.cluster_offset(first), data_.span().subspan(at, count * cb));
      for (std::uint32_t i = 0; i < count; ++i) clusters_.push_back(first + i);
      at += count * cb;
    }
    FSIO_TRY_CTX(plug.finish(), "read directory at cluster " + std::to_string(first_cluster_));
  }
  dirty_.assign((data_.size() + ss - 1) / ss, false);
  stale_ = true;
  return {};
}

SlotPosition Directory::position(std::uint32_t index) const {
  SlotPosition p;
  p.index = index;
  const std::uint64_t byte = std::uint64_t(index) * 32;
  const std::uint32_t ss = layout_.sector_size;
  if (clusters_.empty()) {  // the FAT12/16 root region
    p.sector = layout_.root_dir_sector() + byte / ss;
  } else {
    const std::uint64_t cb = layout_.cluster_bytes();
    p.cluster = clusters_[byte / cb];
    p.sector = layout_.cluster_sector(p.cluster) + (byte % cb) / ss;
  }
  p.offset_in_sector = std::uint32_t(byte % ss);
  p.device_offset = layout_.sector_offset(p.sector) + p.offset_in_sector;
  return p;
}

void Directory::mark(std::uint32_t index, std::uint32_t count) {
  const std::uint32_t ss = layout_.sector_size;
  for (std::uint64_t s = index * 32ull / ss; s <= ((index + count) * 32ull - 1) / ss; ++s) dirty_[s] = true;
}

fsio::Status Directory::check_range(std::uint32_t index, std::size_t bytes) const {
  if (bytes == 0 || bytes % 32 || index + bytes / 32 > slot_count())
    return make_error(Errc::invalid_argument, std::to_string(bytes) + " bytes at slot " + std::to_string(index) +
                                                  " are not whole slots inside the " + std::to_string(slot_count()) +
                                                  "-slot directory");
  return {};
}

bool Directory::is_free(std::uint32_t index) const {
  const auto b0 = std::to_integer<std::uint8_t>(slot(index)[0]);
  if (past_end_) return b0 == kDirEntryFree || b0 == kDirEntryEnd;
  return (end_ && index >= *end_) || b0 == kDirEntryFree;
}

// A run never starts right after a live LFN slot: an 8.3 entry there could
// pick up a stale long name whose checksum happens to match.
// Every slot before free_hint_ is in use (a writer adding thousands of
// names does not rescan them each time); overwrite() resets the hint.
std::optional<std::uint32_t> Directory::find_free(std::uint32_t count, std::uint32_t within) {
  refresh();
  const bool aligned = within > 0 && count <= within;
  std::uint32_t run = 0;
  bool seen_free = false;
  for (std::uint32_t i = free_hint_; i < slot_count(); ++i) {
    if (!is_free(i)) {
      run = 0;
      continue;
    }
    if (aligned && i % within == 0) run = 0;  // a run starts afresh in each unit
    if (!seen_free) {
      free_hint_ = i;
      seen_free = true;
    }
    if (run == 0 && i > 0 && !is_free(i - 1) &&
        (std::to_integer<std::uint8_t>(slot(i - 1)[11]) & attr::long_name_mask) == attr::long_name)
      continue;
    if (++run == count) return i + 1 - count;
  }
  return std::nullopt;
}

fsio::Status Directory::add(std::uint32_t index, std::span<const std::byte> slots) {
  FSIO_TRY(check_range(index, slots.size()));
  refresh();
  const auto n = std::uint32_t(slots.size() / 32);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!is_free(index + i))
      return make_error(Errc::invalid_argument, "slot " + std::to_string(index + i) + " is in use");
    const auto b0 = std::to_integer<std::uint8_t>(slots[i * 32]);
    if (b0 == kDirEntryEnd || b0 == kDirEntryFree)
      return make_error(Errc::invalid_argument, "slot " + std::to_string(i) +
                                                    " of the new entry starts with 0x00 or 0xE5, "
                                                    "which readers take for free");
  }
  if (end_ && index > *end_) {  // the 0x00 slots before the new entry become deleted ones
    for (std::uint32_t i = *end_; i < index; ++i) {
      // Read past the end, a slot there may be a live entry: only a 0x00 one changes.
      if (past_end_ && std::to_integer<std::uint8_t>(slot(i)[0]) != kDirEntryEnd) continue;
      data_.data()[i * 32ull] = std::byte(kDirEntryFree);
      mark(i, 1);
    }
  }
  std::memcpy(data_.data() + index * 32ull, slots.data(), slots.size());
  mark(index, n);
  if (end_ && index + n > *end_) {  // the end moves: make sure nothing stale shows after it
    end_ = index + n;
    if (*end_ < slot_count() && is_free(*end_)) {  // a live entry there (read past the end) stays
      std::memset(data_.data() + *end_ * 32ull, 0, 32);
      mark(*end_, 1);
    } else {
      end_.reset();
    }
  }
  parse(index, index + n, false);
  return {};
}

fsio::Status Directory::overwrite(std::uint32_t index, std::span<const std::byte> slots) {
  FSIO_TRY(check_range(index, slots.size()));
  std::memcpy(data_.data() + index * 32ull, slots.data(), slots.size());
  mark(index, std::uint32_t(slots.size() / 32));
  stale_ = true;
  free_hint_ = 0;
  return {};
}

fsio::Status Directory::append_cluster(std::uint32_t cluster) {
  if (clusters_.empty() && root_ && layout_.type != FatType::fat32)
    return make_error(Errc::unsupported, "the FAT12/16 root directory has a fixed size (" +
                                             std::to_string(layout_.root_entries) + " entries)");
  if (!layout_.is_cluster(cluster))
    return make_error(Errc::invalid_argument, "cluster " + std::to_string(cluster) + " is not a cluster");
  refresh();
  const std::uint64_t cb = layout_.cluster_bytes();
  const std::uint32_t old_slots = slot_count();
  fsio::AlignedBuffer grown(std::size_t(bytes_ + cb));  // zero-filled
  if (bytes_) std::memcpy(grown.data(), data_.data(), bytes_);
  data_ = std::move(grown);
  bytes_ += cb;
  clusters_.push_back(cluster);
  dirty_.resize(bytes_ / layout_.sector_size, false);
  mark(old_slots, std::uint32_t(cb / 32));  // a new cluster is written whole: zeros
  if (!end_) end_ = old_slots;
  chain_.length++;
  chain_.last = cluster;
  if (chain_.first == 0) chain_.first = cluster;
  return {};
}

std::uint64_t Directory::dirty_sectors() const { return std::uint64_t(std::count(dirty_.begin(), dirty_.end(), true)); }

std::size_t Directory::queue_dirty(fsio::IoQueue::Plug& plug) const {
  const std::uint32_t ss = layout_.sector_size;
  const std::uint64_t per_cluster = clusters_.empty() ? dirty_.size() : layout_.sectors_per_cluster;
  std::size_t requests = 0;
  for (std::uint64_t s = 0; s < dirty_.size();) {
    if (!dirty_[s]) {
      ++s;
      continue;
    }
    const std::uint64_t start = s;
    while (s < dirty_.size() && dirty_[s] && (s == start || s % per_cluster != 0)) ++s;  // not across clusters
    plug.write(position(std::uint32_t(start * ss / 32)).device_offset,
               data_.span().subspan(start * ss, (s - start) * ss));
    ++requests;
  }
  return requests;
}

void Directory::clear_dirty() { std::fill(dirty_.begin(), dirty_.end(), false); }

}  // namespace fat
