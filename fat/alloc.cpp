// Allocator: free space from one FAT pass, best fit, fragments (see alloc.hpp).
#include "fat/alloc.hpp"

#include <algorithm>
#include <iterator>
#include <string>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

std::string clusters_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " cluster" : " clusters"); }

Allocator::Allocator(std::uint32_t cluster_count, std::uint32_t hint, const AllocatorOptions& o)
    : cluster_count_(cluster_count),
      max_runs_(std::max<std::size_t>(o.max_indexed_runs, 1)),
      used_(cluster_count + 2),
      hint_(hint >= 2 && hint < std::uint64_t(cluster_count) + 2 ? hint : 2),
      last_(hint_) {}

fsio::Result<Allocator> Allocator::scan(FatTable& fat, std::uint32_t hint, const AllocatorOptions& o) {
  Allocator a(fat.layout().cluster_count, hint, o);
  std::uint32_t run_first = 0, run_count = 0;
  FSIO_TRY(fat.scan([&](std::uint32_t first, std::span<const std::uint32_t> values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto n = std::uint32_t(first + i);
      if (n >= 2 && values[i] == 0) {
        if (run_count == 0) run_first = n;
        ++run_count;
        continue;
      }
      a.used_.set(n);
      if (run_count) a.add_run(run_first, run_count);
      run_count = 0;
    }
    return true;
  }));
  if (run_count) a.add_run(run_first, run_count);
  return a;
}

Allocator Allocator::from_runs(std::uint32_t cluster_count, const std::vector<Extent>& runs, std::uint32_t hint,
                               const AllocatorOptions& o) {
  Allocator a(cluster_count, hint, o);
  a.used_.set_range(0, cluster_count + 2);
  std::vector<Extent> sorted = runs;
  std::sort(sorted.begin(), sorted.end(), [](const Extent& x, const Extent& y) { return x.first < y.first; });
  for (const Extent& r : sorted) {
    FSIO_ASSERT(r.count > 0 && r.first >= 2 && std::uint64_t(r.first) + r.count <= std::uint64_t(cluster_count) + 2);
    for (std::uint32_t c = r.first; c < r.end(); ++c) {
      FSIO_ASSERT(a.used_.test(c));  // runs must not overlap
      a.used_.reset(c);
    }
    a.add_run(r.first, r.count);
  }
  return a;
}

// A run enters the index; past the bound, the shortest run leaves it (the
// bitmap keeps it).
void Allocator::add_run(std::uint32_t first, std::uint32_t count) {
  free_ += count;
  ++runs_;
  index_.emplace(count, first);
  if (index_.size() > max_runs_) {
    index_.erase(index_.begin());
    complete_ = false;
  }
}

std::uint32_t Allocator::longest_run() const {
  if (!index_.empty()) return std::prev(index_.end())->first;
  if (complete_) return 0;
  std::uint32_t best = 0;
  for (std::uint32_t c = used_.next_clear(2); c < used_.size();) {
    const std::uint32_t end = used_.next_set(c);
    best = std::max(best, end - c);
    c = used_.next_clear(end);
  }
  return best;
}

// Takes `count` clusters from the front of the run at `it`; the rest of the
// run stays in the index.
Extent Allocator::carve(std::set<std::pair<std::uint32_t, std::uint32_t>>::iterator it, std::uint32_t count) {
  const auto [length, first] = *it;
  FSIO_ASSERT(count >= 1 && count <= length);
  index_.erase(it);
  if (length > count) index_.emplace(length - count, first + count);
  used_.set_range(first, count);
  free_ -= count;
  last_ = first + count - 1;
  hint_ = std::uint64_t(last_) + 1 < std::uint64_t(cluster_count_) + 2 ? last_ + 1 : 2;
  return {first, count};
}

std::optional<Extent> Allocator::take_contiguous(std::uint32_t count) {
  FSIO_ASSERT(count >= 1);
  const auto fit = index_.lower_bound({count, 0});
  if (fit == index_.end()) return std::nullopt;
  // Among runs of the best-fitting length, the first at or after the hint.
  const auto after_hint = index_.lower_bound({fit->first, hint_});
  const bool same_length = after_hint != index_.end() && after_hint->first == fit->first;
  return carve(same_length ? after_hint : fit, count);
}

fsio::Result<std::vector<Extent>> Allocator::take(std::uint32_t count, bool contiguous_only) {
  if (count == 0) return std::vector<Extent>{};
  if (count > free_)
    return make_error(Errc::busy, "needs " + clusters_text(count) + " but only " + clusters_text(free_) + " are free");
  if (auto e = take_contiguous(count)) return std::vector<Extent>{*e};
  if (contiguous_only)
    return make_error(Errc::busy, "needs " + clusters_text(count) + " in one piece, but the longest free run is " +
                                      clusters_text(longest_run()));
  return take_fragments(count);
}

// Longest runs first; the piece that finishes the file by best fit.
std::vector<Extent> Allocator::take_fragments(std::uint32_t count) {
  std::vector<Extent> out;
  std::uint32_t left = count;
  while (left > 0 && !index_.empty()) {
    const auto longest = std::prev(index_.end());
    if (longest->first >= left) {
      out.push_back(*take_contiguous(left));
      left = 0;
    } else {
      left -= longest->first;
      out.push_back(carve(longest, longest->first));
    }
  }
  if (left > 0) take_from_bitmap(left, out);
  std::sort(out.begin(), out.end(), [](const Extent& a, const Extent& b) { return a.first < b.first; });
  std::vector<Extent> merged;
  for (const Extent& e : out) {
    if (!merged.empty() && merged.back().end() == e.first) merged.back().count += e.count;
    else merged.push_back(e);
  }
  return merged;
}

// Only once every indexed run is used: what is left free lies in runs the
// index dropped, which the bitmap still shows.
void Allocator::take_from_bitmap(std::uint32_t count, std::vector<Extent>& out) {
  FSIO_ASSERT(index_.empty() && !complete_ && count <= free_);
  std::uint32_t c = used_.next_clear(hint_);
  while (count > 0) {
    if (c >= used_.size()) c = used_.next_clear(2);
    FSIO_ASSERT(c < used_.size());
    const std::uint32_t n = std::min(used_.next_set(c) - c, count);
    used_.set_range(c, n);
    free_ -= n;
    count -= n;
    last_ = c + n - 1;
    out.push_back({c, n});
    c = used_.next_clear(c + n);
  }
  hint_ = std::uint64_t(last_) + 1 < std::uint64_t(cluster_count_) + 2 ? last_ + 1 : 2;
}

}  // namespace fat
