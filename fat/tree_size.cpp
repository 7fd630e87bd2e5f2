// smallest_blocks (see tree_fill.hpp): the smallest volume mkfs.fat's rules
// make that holds a tree.
//
// As the size grows, compute_geometry's choice moves through runs of sizes
// with one FAT type and cluster size, in order: FAT12, FAT16, FAT32, and
// within a type ever larger clusters (mkfs.fat doubles the cluster until the
// count fits; FAT32's cluster grows with the size). Within a run the cluster
// count grows with the size, so whether the tree fits is a threshold there;
// across runs it is not (a run of larger clusters can hold fewer small
// files than the end of the run before it). So: find a size that fits,
// then walk the runs below it down to the smallest valid size, and in each
// run whose largest size fits, search for its smallest that does.
#include <map>
#include <utility>

#include "fat/tree_fill.hpp"
#include "libfsio/size.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint32_t kMinFat32Clusters = 65525;  // fatgen103 p.15: fewer is FAT16 to a reader

// (type, cluster bytes): ordered as mkfs.fat's choice moves with the size.
using SizeRun = std::pair<unsigned, std::uint64_t>;

class Search {
 public:
  Search(const fsio::Tree& t, const TreeNames& n, const TreeOptions& o, FormatOptions f, const DeviceFacts& d)
      : tree_(t), names_(n), opt_(o), fmt_(std::move(f)), facts_(d) {
    offset_bytes_ = fmt_.offset_sectors * logical_sector_size(fmt_, facts_);
  }

  struct Probe {
    bool valid = false;  // compute_geometry accepts the size
    SizeRun run{};
    bool fits = false;
    std::string why;  // check_tree_fits' refusal
  };

  Probe probe(std::uint64_t kib) {
    Probe p;
    FormatOptions f = fmt_;
    f.blocks = kib;
    auto g = compute_geometry(offset_bytes_ + kib * 1024, f, facts_);
    if (!g) return p;
    p.valid = true;
    p.run = {unsigned(g->type), g->cluster_bytes()};
    auto st = check_tree_fits(*g, needs(g->type, g->cluster_bytes()), 0);
    if (g->type == FatType::fat32 && g->cluster_count < kMinFat32Clusters)
      st = make_error(Errc::invalid_argument, "a FAT32 needs at least 65,525 clusters");
    p.fits = bool(st);
    if (!st) p.why = st.error().message();
    return p;
  }

  // The smallest k in [lo, hi] for which pred(k) holds, pred false below it
  // and true from it on (pred(hi) must hold).
  template <class Pred>
  static std::uint64_t first(std::uint64_t lo, std::uint64_t hi, Pred pred) {
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (pred(mid)) hi = mid;
      else lo = mid + 1;
    }
    return hi;
  }

  std::uint64_t limit_kib() const {
    const std::uint64_t ss = logical_sector_size(fmt_, facts_);
    return (0xFFFFFFFFull * ss) / 1024;  // 2^32 - 1 sectors: what BPB_TotSec32 counts
  }

 private:
  const TreeNeeds& needs(FatType type, std::uint64_t cb) {
    const auto key = std::make_pair(unsigned(type), cb);
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(key, tree_needs(tree_, names_, opt_, type, cb)).first;
    return it->second;
  }
  const fsio::Tree& tree_;
  const TreeNames& names_;
  const TreeOptions& opt_;
  FormatOptions fmt_;
  const DeviceFacts& facts_;
  std::uint64_t offset_bytes_ = 0;
  std::map<SizeRun, TreeNeeds> memo_;
};

// A size that fits: doubling from what the files alone take.
fsio::Result<std::uint64_t> some_fit(Search& s, const TreeNames& names, unsigned fat_type) {
  std::uint64_t kib = std::max<std::uint64_t>(64, names.bytes / 1024);
  std::string why = "no size gives a valid FAT" + (fat_type ? std::to_string(fat_type) : std::string());
  for (;; kib *= 2) {
    const std::uint64_t k = std::min(kib, s.limit_kib());
    const auto p = s.probe(k);
    if (p.fits) return k;
    if (p.valid) why = p.why;
    if (k == s.limit_kib())
      return make_error(Errc::busy, "no FAT" + (fat_type ? std::to_string(fat_type) : std::string()) +
                                        " volume holds the tree: at " + fsio::format_size(k * 1024) + ", " + why);
  }
}

}  // namespace

fsio::Result<std::uint64_t> smallest_blocks(const fsio::Tree& tree, const TreeNames& names, const TreeOptions& o,
                                            FormatOptions format, const DeviceFacts& facts) {
  Search s(tree, names, o, format, facts);
  const std::uint64_t fit = FSIO_TRY(some_fit(s, names, format.fat_type));
  std::uint64_t best = fit;
  // Walk the runs from the one holding `fit` down. `top` is the largest size of the current run.
  for (std::uint64_t top = fit; top >= 1;) {
    const auto at_top = s.probe(top);
    if (!at_top.valid) break;  // below the smallest valid size (or a gap mkfs.fat refuses)
    const SizeRun run = at_top.run;
    const std::uint64_t bottom = Search::first(1, top, [&](std::uint64_t k) {
      const auto p = s.probe(k);
      return p.valid && p.run >= run;
    });
    if (at_top.fits) {
      std::uint64_t k = Search::first(bottom, top, [&](std::uint64_t k) { return s.probe(k).fits; });
      // A FAT that grows by a sector can cost a cluster: step over such dips.
      for (int i = 0; i < 64 && k > bottom && s.probe(k - 1).fits; ++i) --k;
      best = std::min(best, k);
    }
    if (bottom <= 1) break;
    top = bottom - 1;
  }
  return best;
}

}  // namespace fat
