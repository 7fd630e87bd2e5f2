// make_plan: every refusal and every allocation before the first write
// (see fill_plan.hpp).
#include <algorithm>

#include "fat/chain.hpp"
#include "fat/fill_plan.hpp"

namespace fat::fill_detail {

namespace {

using fsio::Errc;
using fsio::make_error;

// A name's slots stay inside one 512-byte unit (16 slots): the fault
// engine tears writes on 512-byte boundaries and so can a disk, and a long
// name split across two units could be left with its first part only.
constexpr std::uint32_t kSlotsPerUnit = 512 / 32;

// What fill refuses to write on, and what it goes on with, saying so.
fsio::Status check_volume(Volume& v, FillReport& report) {
  const DirtyState& d = v.dirty();
  if (d.dirty())
    return make_error(Errc::busy, "the volume is marked dirty (" +
                                      std::string(d.state_flag ? "boot sector state flag" : "FAT[1] clean bit clear") +
                                      "): it was not cleanly unmounted; check it with fsck.fat or fatck first");
  const auto differ = FSIO_TRY(v.fat().compare_copies());
  if (!differ.empty()) {
    const CopyMismatch& m = differ.front();
    return make_error(Errc::busy, "FAT copy " + std::to_string(m.copy) + " differs from copy " +
                                      std::to_string(v.layout().active_fat()) + " (first at entry " +
                                      std::to_string(m.first_entry) + ", sector " + std::to_string(m.first_sector) +
                                      " of the copy); repair it with fatck or fsck.fat first");
  }
  for (const Finding& f : v.findings()) {
    using K = Finding::Kind;
    if (f.kind == K::mirroring_disabled) report.warnings.push_back(f.message + "; every copy is written anyway");
    else if (f.kind == K::fsinfo_signature || f.kind == K::fsinfo_missing)
      report.warnings.push_back(f.message + "; FSInfo is left alone");
    else if (f.kind == K::fat_io_errors || f.kind == K::backup_boot_differs || f.kind == K::linux_unmountable)
      report.warnings.push_back(f.message);
  }
  return {};
}

class Planner {
 public:
  Planner(Volume& v, const FillOptions& o, FillReport& r, Allocator a)
      : vol_(v), opt_(o), rep_(r), alloc_(std::move(a)), layout_(v.layout()) {}

  fsio::Status resolve_dir();
  fsio::Status plan_file(const std::string& name);
  Plan take() { return std::move(plan_); }
  const Allocator& allocator() const { return alloc_; }

 private:
  fsio::Result<NameSlots> make_room(Item& item);
  fsio::Status add_entry(const Item& item, const NameSlots& slots, std::uint32_t first, std::uint8_t attrs);
  fsio::Status plan_replace(Item& item, const Entry& old, const std::string& path);
  fsio::Status open_child(const Entry& e, const std::string& path);
  fsio::Status create_child(const std::string& name, const std::string& path);
  fsio::Result<std::uint32_t> take_one(const std::string& what);

  Volume& vol_;
  const FillOptions& opt_;
  FillReport& rep_;
  Allocator alloc_;
  const Layout& layout_;
  Plan plan_;
  std::vector<Directory> dirs_;  // planning copies, one per DirRef
  std::size_t cur_ = 0;          // the directory being resolved, then the one the files go to
};

// One cluster for a directory, by best fit: the smallest hole, so long runs
// stay whole for the files.
fsio::Result<std::uint32_t> Planner::take_one(const std::string& what) {
  auto e = alloc_.take_contiguous(1);
  if (!e) return make_error(Errc::busy, "no free cluster left for " + what);
  ++rep_.clusters_allocated;
  return e->first;
}

// Slots for the item's name in its parent: the parent grows a cluster at a
// time (in the planning copy) until they fit. Sets slot, short_name, growth.
fsio::Result<NameSlots> Planner::make_room(Item& item) {
  Directory& dir = dirs_[item.parent];
  const std::string& path = plan_.dirs[item.parent].path;
  const std::string full = join(path, item.name);
  NameSlots slots = FSIO_TRY_CTX(name_slots(dir, item.name), "'" + full + "'");
  auto at = dir.find_free(slots.slot_count(), kSlotsPerUnit);
  const bool fixed_root = dir.is_root() && layout_.type != FatType::fat32;
  while (!at) {
    if (fixed_root)
      return make_error(Errc::busy, "no room for '" + full + "': the " + fat_type_name(layout_.type) +
                                        " root directory is full (" + std::to_string(layout_.root_entries) +
                                        " slots, a fixed number); put the files in a directory (--dir)");
    if (!dir.chain().ok())
      return make_error(Errc::corrupt, "directory '" + path + "': " + describe(dir.chain()) +
                                           "; check the volume with fsck.fat or fatck first");
    if (std::uint64_t(dir.slot_count()) * 32 + layout_.cluster_bytes() > kMaxDirBytes)
      return make_error(Errc::busy,
                        "no room for '" + full + "': directory '" + path + "' has reached FAT's limit of 65536 slots");
    const std::uint32_t c = FSIO_TRY(take_one("directory '" + path + "' to grow"));
    FSIO_TRY(dir.append_cluster(c));
    item.growth.push_back(c);
    at = dir.find_free(slots.slot_count(), kSlotsPerUnit);
  }
  item.slot = *at;
  item.short_name = slots.short_name;
  return slots;
}

fsio::Status Planner::add_entry(const Item& item, const NameSlots& slots, std::uint32_t first, std::uint8_t attrs) {
  const DirEntry e = make_entry(slots, attrs, first, item.size, opt_.when, layout_.type);
  return dirs_[item.parent].add(item.slot, entry_slots(slots, e));
}

fsio::Status Planner::open_child(const Entry& e, const std::string& path) {
  if (!e.is_directory()) return make_error(Errc::invalid_argument, "'" + path + "' is a file, not a directory");
  dirs_.push_back(FSIO_TRY_CTX(Directory::open(vol_, e), "directory '" + path + "'"));
  dirs_.back().read_past_end();  // live entries after a 0x00 slot are files to Linux and fsck.fat
  plan_.dirs.push_back({path, dirs_.back().first_cluster(), dirs_.back().is_root(), false});
  cur_ = plan_.dirs.size() - 1;
  return {};
}

// A new directory: room for its name in the parent (which may grow), then
// its cluster, then its entry.
fsio::Status Planner::create_child(const std::string& name, const std::string& path) {
  Item item;
  item.kind = Item::Kind::directory;
  item.parent = cur_;
  item.name = name;
  const NameSlots slots = FSIO_TRY(make_room(item));
  const std::uint32_t c = FSIO_TRY(take_one("new directory '" + path + "'"));
  item.extents = {{c, 1}};
  FSIO_TRY(add_entry(item, slots, c, attr::directory));
  dirs_.push_back(Directory::create(layout_, c, plan_.dirs[cur_].cluster, opt_.when));
  plan_.dirs.push_back({path, c, false, true});
  cur_ = plan_.dirs.size() - 1;
  item.self = cur_;
  plan_.items.push_back(std::move(item));
  rep_.created_dirs.push_back(path);
  return {};
}

// Walks opts.dir from the root, opening what exists and planning the rest.
fsio::Status Planner::resolve_dir() {
  dirs_.push_back(FSIO_TRY_CTX(Directory::open_root(vol_), "root directory"));
  dirs_.back().read_past_end();
  plan_.dirs.push_back({"/", dirs_.back().first_cluster(), true, false});
  std::string walked;
  const std::string_view p = opt_.dir;
  for (std::size_t pos = 0; pos <= p.size();) {
    const std::size_t slash = std::min(p.find('/', pos), p.size());
    const std::string part(p.substr(pos, slash - pos));
    pos = slash + 1;
    if (part.empty()) continue;
    if (part == "." || part == "..")
      return make_error(Errc::invalid_argument, "--dir '" + opt_.dir + "': '.' and '..' are not supported");
    walked += "/" + part;
    const Entry* e = plan_.dirs[cur_].created ? nullptr : dirs_[cur_].find(part);
    if (e) FSIO_TRY(open_child(Entry(*e), walked));
    else FSIO_TRY(create_child(part, walked));
  }
  return {};
}

// --force on an existing file: the entry is rewritten in place, and its old
// chain is freed afterwards. Only a sound chain of the right length is
// freed: anything else is damage for a checker, not for us to spread.
fsio::Status Planner::plan_replace(Item& item, const Entry& old, const std::string& path) {
  const std::string as =
      fold_case(old.name) == fold_case(item.name) && old.name != item.name ? " as '" + old.name + "'" : "";
  if (old.is_directory())
    return make_error(Errc::busy, "'" + path + "' is a directory" + as + "; --force replaces files only");
  if (!opt_.force) return make_error(Errc::busy, "'" + path + "' exists" + as + " (--force replaces it)");
  item.replace = true;
  item.slot = old.slot;
  item.short_name = old.raw_name;
  const std::uint32_t want = clusters_for(layout_, old.size);
  if (old.first_cluster == 0 && want == 0) return {};
  const Chain c = FSIO_TRY(walk_chain(vol_.fat(), old.first_cluster, [&](std::uint32_t first, std::uint32_t n) {
    item.old_extents.push_back({first, n});
    return true;
  }));
  if (!c.ok() || c.length != want)
    return make_error(Errc::corrupt, "'" + path + "' (" + std::to_string(old.size) + " bytes, " + clusters_text(want) +
                                         "): " + describe(c) + "; check the volume with fsck.fat or fatck first");
  for (const Extent& e : item.old_extents) rep_.clusters_freed += e.count;
  return {};
}

fsio::Status Planner::plan_file(const std::string& name) {
  Item item;
  item.parent = cur_;
  item.name = name;
  item.size = std::uint32_t(opt_.size);
  item.file = rep_.files.size();
  const std::string path = join(plan_.dirs[cur_].path, name);
  const Entry* old = plan_.dirs[cur_].created ? nullptr : dirs_[cur_].find(name);
  NameSlots slots;
  if (old) FSIO_TRY(plan_replace(item, Entry(*old), path));
  else slots = FSIO_TRY(make_room(item));
  const std::uint32_t n = clusters_for(layout_, opt_.size);
  item.extents =
      FSIO_TRY_CTX(alloc_.take(n, opt_.contiguous), "'" + path + "'" + (opt_.contiguous ? " (--contiguous)" : ""));
  rep_.clusters_allocated += n;
  rep_.fragments += item.extents.size();
  if (!item.replace) FSIO_TRY(add_entry(item, slots, item.extents.empty() ? 0 : item.extents[0].first, attr::archive));
  rep_.files.push_back({path, item.size, item.extents, item.replace});
  plan_.items.push_back(std::move(item));
  return {};
}

}  // namespace

fsio::Result<Plan> make_plan(Volume& v, const FillOptions& o, FillReport& report) {
  FSIO_TRY(check_volume(v, report));
  report.fat_copies = v.layout().num_fats;
  Planner planner(v, o, report, FSIO_TRY(Allocator::scan(v.fat(), v.allocation_hint())));
  report.free_before = planner.allocator().free_clusters();
  // The whole request against the free space first, so the message gives the totals.
  const std::uint64_t per_file = clusters_for(v.layout(), o.size);
  const std::uint64_t need = per_file * o.names.size();
  if (need > report.free_before)
    return make_error(Errc::busy, std::to_string(o.names.size()) + (o.names.size() == 1 ? " file of " : " files of ") +
                                      clusters_text(per_file) + (o.names.size() == 1 ? " needs " : " need ") +
                                      clusters_text(need) + " (" + std::to_string(need * v.layout().cluster_bytes()) +
                                      " bytes), but only " + clusters_text(report.free_before) + " are free");
  FSIO_TRY(planner.resolve_dir());
  for (const std::string& name : o.names) FSIO_TRY(planner.plan_file(name));
  report.free_after = std::uint32_t(report.free_before - report.clusters_allocated + report.clusters_freed);
  return planner.take();
}

}  // namespace fat::fill_detail
