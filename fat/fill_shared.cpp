// Before a replaced file's old chain is freed (fill.hpp step 4): no other
// entry's chain may reach any of its clusters. On a damaged volume two
// chains can share clusters (a cross-link: one entry starts inside the
// other's chain, or its chain runs into it); freeing them would hand
// clusters the other file still uses to the next allocation, which would
// then overwrite that file. fsck.fat and fatck find and repair cross-links;
// fatfill only refuses, before anything is written.
//
// Cost: every directory is read and every chain walked once, so the check
// runs only when a run replaces files (--force).
#include <unordered_set>

#include "fat/bitmap.hpp"
#include "fat/fill_plan.hpp"

namespace fat::fill_detail {

namespace {

using fsio::Errc;
using fsio::make_error;

struct Replaced {
  std::string path;
  std::uint32_t dir_cluster = 0;  // the directory holding its entry (DirRef::cluster)
  std::uint32_t slot = 0;
  const std::vector<Extent>* extents = nullptr;
};

bool holds(const Replaced& r, std::uint32_t cluster) {
  for (const Extent& e : *r.extents)
    if (cluster >= e.first && cluster - e.first < e.count) return true;
  return false;
}

fsio::Error shared(const std::string& replaced, const std::string& other, std::uint32_t cluster) {
  return make_error(Errc::corrupt, "'" + replaced + "' is cross-linked with '" + other +
                                       "' (both chains hold cluster " + std::to_string(cluster) +
                                       "): replacing it would free clusters '" + other +
                                       "' still uses; nothing was written; repair the volume with fatck -a "
                                       "(or fsck.fat) first");
}

class SharedCheck {
 public:
  SharedCheck(Volume& v, std::vector<Replaced> r)
      : vol_(v), replaced_(std::move(r)), freed_(v.layout().entry_count()), dirs_seen_(v.layout().entry_count()) {
    for (const Replaced& x : replaced_) entries_.insert(key(x.dir_cluster, x.slot));
  }

  fsio::Status run();

 private:
  fsio::Status mark_freed();
  fsio::Status check_chain(std::uint32_t first, const std::string& path);
  fsio::Status check_dir(Directory dir, const std::string& path,
                         std::vector<std::pair<std::uint32_t, std::string>>& subdirs);
  static std::uint64_t key(std::uint32_t dir_cluster, std::uint32_t slot) {
    return std::uint64_t(dir_cluster) << 32 | slot;
  }
  const Replaced* owner(std::uint32_t cluster) const {
    for (const Replaced& r : replaced_)
      if (holds(r, cluster)) return &r;
    return nullptr;
  }

  Volume& vol_;
  std::vector<Replaced> replaced_;
  std::unordered_set<std::uint64_t> entries_;  // the replaced files' entries (key()), skipped by the walk
  ClusterBitmap freed_;                        // clusters the run will free
  ClusterBitmap dirs_seen_;                    // directories opened, by first cluster: a damaged tree may loop
};

// Two replaced files sharing a cluster would free it twice: the same refusal.
fsio::Status SharedCheck::mark_freed() {
  for (const Replaced& r : replaced_)
    for (const Extent& e : *r.extents)
      for (std::uint32_t c = e.first; c - e.first < e.count; ++c) {
        if (freed_.test_and_set(c)) {
          const Replaced* o = owner(c);
          return shared(o->path, r.path, c);
        }
      }
  return {};
}

fsio::Status SharedCheck::check_chain(std::uint32_t first, const std::string& path) {
  std::uint32_t hit = 0;
  FSIO_TRY(walk_chain(vol_.fat(), first, [&](std::uint32_t run, std::uint32_t n) {
    for (std::uint32_t c = run; c - run < n; ++c)
      if (freed_.test(c)) {
        hit = c;
        return false;
      }
    return true;
  }));
  if (hit) return shared(owner(hit)->path, path, hit);
  return {};
}

fsio::Status SharedCheck::check_dir(Directory dir, const std::string& path,
                                    std::vector<std::pair<std::uint32_t, std::string>>& subdirs) {
  dir.read_past_end();  // entries after a 0x00 slot are files to Linux and fsck.fat: theirs count too
  for (const Entry& e : dir.entries()) {
    if (e.is_dot() || e.is_label() || e.first_cluster == 0) continue;
    if (entries_.count(key(dir.first_cluster(), e.slot))) continue;  // a replaced file's own entry
    const std::string full = join(path, e.name);
    FSIO_TRY(check_chain(e.first_cluster, full));
    if (e.is_directory() && vol_.layout().is_cluster(e.first_cluster) && !dirs_seen_.test_and_set(e.first_cluster))
      subdirs.emplace_back(e.first_cluster, full);
  }
  return {};
}

fsio::Status SharedCheck::run() {
  FSIO_TRY(mark_freed());
  const Layout& l = vol_.layout();
  if (l.type == FatType::fat32) {
    FSIO_TRY(check_chain(l.root_cluster, "/ (the root directory)"));
    if (l.is_cluster(l.root_cluster)) dirs_seen_.set(l.root_cluster);
  }
  std::vector<std::pair<std::uint32_t, std::string>> todo;
  FSIO_TRY(check_dir(FSIO_TRY_CTX(Directory::open_root(vol_), "root directory"), "/", todo));
  while (!todo.empty()) {
    const auto [cluster, path] = std::move(todo.back());
    todo.pop_back();
    FSIO_TRY(check_dir(FSIO_TRY_CTX(Directory::open(vol_, cluster), "directory '" + path + "'"), path, todo));
  }
  return {};
}

}  // namespace

fsio::Status check_unshared(Volume& volume, const Plan& plan) {
  std::vector<Replaced> replaced;
  for (const Item& it : plan.items)
    if (it.replace && !it.old_extents.empty())
      replaced.push_back(
          {join(plan.dirs[it.parent].path, it.name), plan.dirs[it.parent].cluster, it.slot, &it.old_extents});
  if (replaced.empty()) return {};
  return SharedCheck(volume, std::move(replaced)).run();
}

}  // namespace fat::fill_detail
