// ClusterBitmap: one bit per FAT entry, the most per-cluster memory a
// checker or allocator should need (8 MB for the 67 million clusters of a
// 2 TiB FAT32 volume with 32 KiB clusters). fatck marks the clusters every
// chain owns (a bit already set is a cross-link or a loop), then compares
// with the FAT's non-free entries to find lost clusters; fatfill can mark
// free clusters from FatTable::scan to find runs.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace fat {

class ClusterBitmap {
 public:
  ClusterBitmap() = default;
  explicit ClusterBitmap(std::uint32_t bits) : bits_(bits), words_((std::uint64_t(bits) + 63) / 64, 0) {}

  std::uint32_t size() const { return bits_; }
  bool test(std::uint32_t n) const { return (words_[n / 64] >> (n % 64)) & 1; }
  void set(std::uint32_t n) { words_[n / 64] |= bit(n); }
  void reset(std::uint32_t n) { words_[n / 64] &= ~bit(n); }
  // Sets bit n and says whether it was set already.
  bool test_and_set(std::uint32_t n) {
    const bool was = test(n);
    set(n);
    return was;
  }
  // Sets bits [first, first + count), a word at a time.
  void set_range(std::uint32_t first, std::uint32_t count) {
    std::uint64_t n = first;
    const std::uint64_t end = std::uint64_t(first) + count;
    for (; n < end && n % 64; ++n) set(std::uint32_t(n));
    for (; n + 64 <= end; n += 64) words_[n / 64] = ~std::uint64_t(0);
    for (; n < end; ++n) set(std::uint32_t(n));
  }
  std::uint64_t count() const {
    std::uint64_t c = 0;
    for (std::uint64_t w : words_) c += std::popcount(w);
    return c;
  }
  // The first set (or clear) bit at or after `from`, or size() if none.
  std::uint32_t next_set(std::uint32_t from) const { return next(from, 0); }
  std::uint32_t next_clear(std::uint32_t from) const { return next(from, ~std::uint64_t(0)); }

 private:
  static std::uint64_t bit(std::uint32_t n) { return std::uint64_t(1) << (n % 64); }
  // Scans whole words: `flip` turns the search for clear bits into one for set bits.
  std::uint32_t next(std::uint32_t from, std::uint64_t flip) const {
    if (from >= bits_) return bits_;
    std::uint64_t i = from / 64;
    std::uint64_t w = (words_[i] ^ flip) & (~std::uint64_t(0) << (from % 64));
    while (w == 0) {
      if (++i >= words_.size()) return bits_;
      w = words_[i] ^ flip;
    }
    const std::uint64_t n = i * 64 + std::countr_zero(w);
    return n < bits_ ? std::uint32_t(n) : bits_;
  }

  std::uint32_t bits_ = 0;
  std::vector<std::uint64_t> words_;
};

}  // namespace fat
