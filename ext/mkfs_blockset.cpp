// BlockSet (see mkfs_blockset.hpp).
#include "ext/mkfs_blockset.hpp"

#include <algorithm>

namespace ext {

void BlockSet::mark(std::uint64_t b, std::uint64_t n) {
  if (n == 0) return;
  std::uint64_t e = b + n;
  auto it = runs_.upper_bound(b);
  if (it != runs_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= b) {  // overlaps or touches on the left
      b = prev->first;
      e = std::max(e, prev->second);
      it = runs_.erase(prev);
    }
  }
  while (it != runs_.end() && it->first <= e) {
    e = std::max(e, it->second);
    it = runs_.erase(it);
  }
  runs_.emplace(b, e);
}

bool BlockSet::used(std::uint64_t b) const {
  auto it = runs_.upper_bound(b);
  return it != runs_.begin() && std::prev(it)->second > b;
}

bool BlockSet::range_free(std::uint64_t b, std::uint64_t n) const { return !first_used(b, b + n - 1); }

std::optional<std::uint64_t> BlockSet::first_used(std::uint64_t start, std::uint64_t end) const {
  if (start > end) return std::nullopt;
  auto it = runs_.upper_bound(start);
  if (it != runs_.begin() && std::prev(it)->second > start) return start;
  if (it != runs_.end() && it->first <= end) return it->first;
  return std::nullopt;
}

std::optional<std::uint64_t> BlockSet::first_free(std::uint64_t start, std::uint64_t end) const {
  if (start > end) return std::nullopt;
  auto it = runs_.upper_bound(start);
  std::uint64_t b = start;
  if (it != runs_.begin() && std::prev(it)->second > start) b = std::prev(it)->second;
  if (b > end) return std::nullopt;
  return b;
}

std::uint64_t BlockSet::count_used(std::uint64_t start, std::uint64_t end) const {
  std::uint64_t n = 0;
  auto it = runs_.upper_bound(start);
  if (it != runs_.begin()) --it;
  for (; it != runs_.end() && it->first <= end; ++it) {
    const std::uint64_t a = std::max(it->first, start), z = std::min(it->second, end + 1);
    if (a < z) n += z - a;
  }
  return n;
}

std::optional<std::uint64_t> BlockSet::get_free_blocks(std::uint64_t start, std::uint64_t finish,
                                                       std::uint64_t num) const {
  std::uint64_t b = start ? start : first_;
  if (!finish) finish = start;
  if (!num) num = 1;
  // libext2fs tests b, then b + 1, ... until b == finish; a used block x
  // inside [b, b + num) fails every b' up to x, and a used run fails every
  // start inside it, so the scan jumps past the run.
  const std::uint64_t wrap_at = count_ >= num ? count_ - num + 1 : 0;  // the first b that wraps
  int wraps = 0;
  for (;;) {
    if (b + num - 1 >= count_) {
      if (finish > start || ++wraps > 1) return std::nullopt;
      b = first_;
    }
    const auto x = first_used(b, b + num - 1);
    if (!x) return b;
    // b + 1 .. next all fail; the loop condition (b != finish) is tested
    // before the wrap test at each of them.
    const std::uint64_t next = std::prev(runs_.upper_bound(*x))->second;
    const bool hits_finish = finish > b && finish <= next;
    const bool hits_wrap = wrap_at > b && wrap_at <= next;
    if (hits_finish && (!hits_wrap || finish <= wrap_at)) return std::nullopt;
    if (hits_wrap) {
      if (finish > start || ++wraps > 1) return std::nullopt;
      b = first_;
      continue;
    }
    b = next;
  }
}

std::optional<std::uint64_t> BlockSet::new_block(std::uint64_t goal) const {
  if (!goal || goal >= count_) goal = first_;
  if (auto b = first_free(goal, count_ - 1)) return b;
  if (goal != first_) return first_free(first_, goal - 1);
  return std::nullopt;
}

void BlockSet::bitmap(std::uint64_t start, std::uint32_t bits, std::span<std::uint8_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  const std::uint64_t end = start + bits;
  auto it = runs_.upper_bound(start);
  if (it != runs_.begin()) --it;
  for (; it != runs_.end() && it->first < end; ++it) {
    const std::uint64_t a = std::max(it->first, start), z = std::min({it->second, end, count_});
    std::uint64_t k = a - start;
    const std::uint64_t stop = z > a ? z - start : k;
    for (; k < stop && k % 8; ++k) out[k / 8] |= std::uint8_t(1u << (k % 8));
    if (stop - k >= 8) {
      std::fill(out.begin() + std::ptrdiff_t(k / 8), out.begin() + std::ptrdiff_t(stop / 8), std::uint8_t(0xFF));
      k = stop / 8 * 8;
    }
    for (; k < stop; ++k) out[k / 8] |= std::uint8_t(1u << (k % 8));
  }
}

}  // namespace ext
