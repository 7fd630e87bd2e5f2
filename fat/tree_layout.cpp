// lay_out and tree_time (see tree_fill.hpp): every cluster of the new
// volume assigned, and the directories' and the FAT's bytes built in memory.
#include <algorithm>
#include <cstring>
#include <ctime>

#include "fat/boot.hpp"
#include "fat/directory.hpp"
#include "fat/tree_fill.hpp"

namespace fat {

namespace {

using fsio::NodeKind;

constexpr std::int64_t kUnix1980 = 315532800;  // 1980-01-01 00:00:00 UTC

// Hands out clusters from 2 upwards, skipping bad ones; each request in as
// few runs as the bad clusters allow.
class Cursor {
 public:
  Cursor(const std::vector<std::uint32_t>& bad) : bad_(bad) {}
  std::vector<Extent> take(std::uint64_t count) {
    std::vector<Extent> out;
    while (count > 0) {
      while (b_ < bad_.size() && bad_[b_] < next_) ++b_;
      if (b_ < bad_.size() && bad_[b_] == next_) {
        ++next_;
        continue;
      }
      const std::uint64_t room = b_ < bad_.size() ? bad_[b_] - next_ : count;
      const auto n = std::uint32_t(std::min(room, count));
      if (!out.empty() && out.back().end() == next_) out.back().count += n;
      else out.push_back({next_, n});
      next_ += n;
      count -= n;
      last_ = next_ - 1;
    }
    return out;
  }
  std::uint32_t last() const { return last_; }

 private:
  const std::vector<std::uint32_t>& bad_;
  std::size_t b_ = 0;
  std::uint32_t next_ = 2;
  std::uint32_t last_ = 2;
};

std::uint64_t dir_clusters(const PlannedNode& p, std::uint64_t cb) {
  return std::max<std::uint64_t>(1, (p.slots * 32ull + cb - 1) / cb);
}

// A directory's or file's 8.3 entry with the tree's times.
DirEntry entry_for(const fsio::TreeNode& n, const PlannedNode& p, std::uint32_t first, const Layout& l,
                   const TreeOptions& o) {
  const bool dir = n.kind == NodeKind::directory;
  const DosDateTime written = tree_time(n.mtime, o), made = tree_time(o.made, o);
  DirEntry e = make_entry(p.name, dir ? attr::directory : attr::archive, first, dir ? 0 : std::uint32_t(n.size),
                          written, l.type);
  e.create_time_tenth = made.tenths;
  e.create_time = made.time;
  e.create_date = made.date;
  e.access_date = written.date;
  return e;
}

// Every directory's clusters filled: '.' and '..', then its entries in order.
void build_dirs(const fsio::Tree& tree, const TreeNames& names, const TreeOptions& o, bool label, TreeLayout& out) {
  const Layout& l = out.layout;
  const std::uint64_t cb = l.cluster_bytes();
  const DosDateTime made = tree_time(o.made, o);
  std::vector<std::uint32_t> next_slot(tree.nodes.size(), 0);
  auto first_cluster = [&](std::uint32_t i) { return out.extents[i].empty() ? 0 : out.extents[i][0].first; };
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    if (i != 0 && !(names.nodes[i].kept && tree.nodes[i].kind == NodeKind::directory)) continue;
    const bool fixed_root = i == 0 && l.type != FatType::fat32;
    const std::uint64_t bytes =
        fixed_root ? std::uint64_t(l.root_dir_sectors()) * l.sector_size : dir_clusters(names.nodes[i], cb) * cb;
    out.dirs[i] = fsio::AlignedBuffer(std::size_t(bytes));
    if (i == 0) {
      next_slot[i] = label ? 1 : 0;  // format_volume writes the label entry into slot 0
      continue;
    }
    const std::uint32_t parent = tree.nodes[i].parent;
    const auto dots = make_dot_entries(l, first_cluster(i), parent == 0 ? 0 : first_cluster(parent), made);
    fsio::store(out.dirs[i].span(), dots[0], 0);
    fsio::store(out.dirs[i].span(), dots[1], 32);
    next_slot[i] = 2;
  }
  for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
    const PlannedNode& p = names.nodes[i];
    if (!p.kept) continue;
    const std::uint32_t parent = tree.nodes[i].parent;
    const auto slots = entry_slots(p.name, entry_for(tree.nodes[i], p, first_cluster(i), l, o));
    std::memcpy(out.dirs[parent].data() + next_slot[parent] * 32ull, slots.data(), slots.size());
    next_slot[parent] += p.name.slot_count();
  }
}

// The FAT's first bytes: the head, every chain, the bad marks.
void build_fat(const Geometry& g, const std::vector<std::uint32_t>& bad, std::uint32_t last, TreeLayout& out) {
  const std::uint32_t top = std::max(last, bad.empty() ? 0u : bad.back());
  const std::uint64_t bytes = round_up(entries_bytes(g.type, std::uint64_t(top) + 1), g.sector_size);
  out.fat = fsio::AlignedBuffer(std::size_t(bytes));
  const std::span<std::byte> fat = out.fat.span();
  fill_fat_head(g, fat.first(g.sector_size));
  for (std::uint32_t c : bad) set_entry(g.type, fat, c, bad_cluster(g.type));
  for (const auto& ex : out.extents) {
    for (std::size_t k = 0; k < ex.size(); ++k) {
      for (std::uint32_t c = ex[k].first; c + 1 < ex[k].end(); ++c) set_entry(g.type, fat, c, c + 1);
      const bool last_run = k + 1 == ex.size();
      // FAT32's root alone keeps the 0x0FFFFFF8 mkfs.fat writes (fill_fat_head).
      if (last_run && ex[k].end() - 1 == g.root_cluster && g.type == FatType::fat32 && ex.size() == 1 &&
          ex[k].count == 1)
        continue;
      set_entry(g.type, fat, ex[k].end() - 1, last_run ? end_of_chain(g.type) : ex[k + 1].first);
    }
  }
}

}  // namespace

DosDateTime tree_time(fsio::TimeSpec t, const TreeOptions& o) {
  std::int64_t sec = t.sec;
  std::uint32_t nsec = t.nsec;
  if (o.clamp && sec > *o.clamp) {
    sec = *o.clamp;
    nsec = 0;
  }
  std::tm tm{};
  const std::time_t tt = std::time_t(sec);
  const bool known = o.utc ? gmtime_r(&tt, &tm) : localtime_r(&tt, &tm);
  // Linux's fat_time_unix2fat: before 1980 is 1980-01-01 00:00:00, from
  // 2108 on 2107-12-31 23:59:58 and 199 hundredths.
  if (known ? tm.tm_year < 80 : sec < kUnix1980) return kDosEpoch;
  if (!known || tm.tm_year > 207)
    return {std::uint16_t(127 << 9 | 12 << 5 | 31), std::uint16_t(23 << 11 | 59 << 5 | 29), 199};
  DosDateTime dt = encode_dos_datetime(tm);
  dt.tenths = std::uint8_t((tm.tm_sec & 1) * 100 + nsec / 10000000);
  return dt;
}

fsio::Result<TreeLayout> lay_out(const fsio::Tree& tree, const TreeNames& names, const Geometry& g,
                                 const std::vector<std::uint32_t>& bad, const TreeOptions& o) {
  TreeLayout out;
  out.layout = g;
  out.bad = bad.size();
  const std::uint64_t cb = g.cluster_bytes();
  out.needs = tree_needs(tree, names, o, g.type, cb);
  FSIO_TRY(check_tree_fits(g, out.needs, bad.size()));
  out.extents.resize(tree.nodes.size());
  out.dirs.resize(tree.nodes.size());
  Cursor cursor(bad);
  // Directories first, in tree order (the FAT32 root first, at cluster 2),
  // then the files: the data is one stream after them.
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    const bool dir =
        i == 0 ? g.type == FatType::fat32 : names.nodes[i].kept && tree.nodes[i].kind == NodeKind::directory;
    if (!dir) continue;
    out.extents[i] = cursor.take(dir_clusters(names.nodes[i], cb));
    out.dir_clusters += dir_clusters(names.nodes[i], cb);
  }
  FSIO_ASSERT(g.type != FatType::fat32 || out.extents[0][0].first == g.root_cluster);
  std::uint32_t first_file = 0;
  for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
    if (!names.nodes[i].kept || tree.nodes[i].kind != NodeKind::file || tree.nodes[i].size == 0) continue;
    const std::uint64_t n = (tree.nodes[i].size + cb - 1) / cb;
    out.extents[i] = cursor.take(n);
    if (!first_file) first_file = out.extents[i][0].first;
    out.file_clusters += n;
  }
  const std::uint64_t used = out.dir_clusters + out.file_clusters;
  out.free_clusters = std::uint32_t(g.cluster_count - used - bad.size());
  out.last_allocated = cursor.last();
  out.data_begin = first_file ? g.cluster_offset(first_file) : 0;
  out.data_end = first_file ? g.cluster_offset(cursor.last()) + cb : 0;
  build_dirs(tree, names, o, names.label, out);
  build_fat(g, bad, cursor.last(), out);
  return out;
}

}  // namespace fat
