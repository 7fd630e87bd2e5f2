#include "cmd/bench/buffer_fill.hpp"

#include <algorithm>
#include <cstring>

namespace bench {
namespace {

// splitmix64's output function: every seed and every 8 random bytes.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ULL;

void random_bytes(std::span<std::byte> out, std::uint64_t& state) {
  for (std::size_t at = 0; at < out.size(); at += 8) {
    const std::uint64_t v = mix(state += golden);
    std::memcpy(out.data() + at, &v, std::min<std::size_t>(8, out.size() - at));
  }
}

}  // namespace

BufferFill::BufferFill(const BufferContents& c, std::uint64_t seed, std::uint64_t size, std::uint64_t bs)
    : c_(c), seed_(seed), draw_state_(mix(seed ^ (std::uint64_t(c.job_index) << 32) ^ 0xded0)) {
  // fio's init: a fully compressible buffer is a zeroed one (zero_buffers),
  // which its dedupe path does not use: with dedupe, the data is random.
  if (c_.compress_percentage >= 100 && c_.dedupe_percentage) c_.compress_percentage = 0;
  if (c_.dedupe_percentage && c_.dedupe_mode == DedupeMode::working_set && bs)
    pages_ = size * c_.working_set_percentage / 100 / bs;
  c_.job_count = std::max(c_.job_count, 1u);
  last_unique_ = unique_seed(c_.job_index, 0);  // a duplicate before any unique buffer repeats the first
}

std::uint64_t BufferFill::unique_seed(unsigned job, std::uint64_t n) const {
  return mix(mix(seed_ + golden * (std::uint64_t(job) + 1)) + n * golden);
}

std::uint64_t BufferFill::page_seed(std::uint64_t i) const {
  if (!c_.global) return unique_seed(c_.job_index, i);
  // fio's init_dedupe_working_set_seeds: pages_per_seed pages from each job in turn, from this one on.
  const std::uint64_t per_job = std::max<std::uint64_t>(pages_ / c_.job_count, 1);
  const auto job = unsigned((c_.job_index + i / per_job) % c_.job_count);
  return unique_seed(job, i % per_job);
}

std::uint64_t BufferFill::draw() { return mix(draw_state_ += golden); }

std::uint64_t BufferFill::next_seed() {
  // fio's get_buf_state: a draw from 1 to 100 at or under dedupe_percentage duplicates.
  const bool duplicate =
      c_.dedupe_percentage >= 100 || (c_.dedupe_percentage && draw() % 100 + 1 <= c_.dedupe_percentage);
  if (duplicate && c_.dedupe_percentage < 100 && c_.dedupe_mode == DedupeMode::working_set && pages_)
    return page_seed(draw() % pages_);
  if (duplicate) return last_unique_;
  return last_unique_ = unique_seed(c_.job_index, next_unique_++);
}

void BufferFill::fill(std::span<std::byte> buf) {
  if (c_.compress_percentage >= 100) {
    std::fill(buf.begin(), buf.end(), std::byte{0});
    return;
  }
  std::uint64_t state = c_.dedupe_percentage ? next_seed() : unique_seed(c_.job_index, next_unique_++);
  const std::size_t chunk =
      c_.compress_chunk ? std::size_t(std::min<std::uint64_t>(c_.compress_chunk, buf.size())) : buf.size();
  for (std::size_t at = 0; at < buf.size(); at += chunk) {
    const std::size_t n = std::min(chunk, buf.size() - at);
    const std::size_t random = n * (100 - c_.compress_percentage) / 100;
    random_bytes(buf.subspan(at, random), state);
    std::fill(buf.begin() + std::ptrdiff_t(at + random), buf.begin() + std::ptrdiff_t(at + n), std::byte{0});
  }
}

}  // namespace bench
