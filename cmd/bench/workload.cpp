#include "cmd/bench/workload.hpp"

#include <algorithm>

namespace bench::detail {

Workload::Workload(const BenchOptions& o, const BenchRange& r, bool readback, std::uint64_t budget, bool endless)
    : o_(o),
      range_(r),
      order_(r.blocks, bench_random(o.rw) && !o.norandommap, o.seed + o.order_salt * 0x9e3779b97f4a7c15ULL) {
  len_ = r.end - r.begin;
  unit_ = o.min_bs();
  random_ = bench_random(o.rw);
  readback_ = readback;
  endless_ = endless;
  // Replays draw the same sizes in the same order as the pass they check.
  rng_ = ((o.seed + o.order_salt * 0x9e3779b97f4a7c15ULL) ^ 0x6a09e667f3bcc908ULL) | 1;
  if (readback) {
    loop_bytes_ = budget;
    loops_left_ = 1;
  } else {
    loop_bytes_ = o.io_size ? o.io_size : len_;
    loops_left_ = o.loops;
  }
  if (endless) loop_bytes_ = std::numeric_limits<std::uint64_t>::max();
  left_ = loop_bytes_;
}

void Workload::start_loop() {
  // fio's loops run the job again from the start of the range.
  --loops_left_;
  ++restarts_;
  left_ = loop_bytes_;
  cursor_[0] = cursor_[1] = 0;
  rnext_ = 0;
}

std::uint64_t Workload::pick_size(BenchDir d) {
  const auto& split = o_.bssplit[d];
  if (split.empty()) return o_.bs;
  auto roll = unsigned(rand() % 100);
  for (const auto& s : split) {
    if (roll < s.percent) return s.bs;
    roll -= s.percent;
  }
  return split.back().bs;
}

bool Workload::next(NextIo& out) {
  if (left_ == 0) {
    if (loops_left_ <= 1) return false;
    start_loop();
  }
  BenchDir dir = dir_read;
  if (readback_) dir = dir_read;
  else if (bench_mixed(o_.rw)) dir = rand() % 100 < o_.rwmixread ? dir_read : dir_write;
  else dir = bench_writes(o_.rw) ? dir_write : dir_read;
  // A read-back draws its sizes as the writes it replays did.
  const std::uint64_t size = pick_size(readback_ ? dir_write : dir);

  std::uint64_t off = 0;
  if (random_) {
    std::uint64_t block = 0;
    if (o_.norandommap) {
      block = rand() % range_.blocks;
    } else {
      if (rnext_ == range_.blocks) {
        rnext_ = 0;  // every block done once: start the same order over
        wrapped_ = true;
        ++restarts_;
      }
      block = order_(rnext_++);
    }
    off = block * unit_;
  } else {
    if (cursor_[dir] >= len_) {
      cursor_[dir] = 0;
      wrapped_ = true;
      ++restarts_;
    }
    off = cursor_[dir];
    cursor_[dir] += size;
  }
  out.dir = dir;
  out.offset = range_.begin + off;
  out.full = std::min(size, len_ - off);
  left_ -= std::min(out.full, left_);
  issued_ += out.full;
  return true;
}

}  // namespace bench::detail
