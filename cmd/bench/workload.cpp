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
  blocks_ = r.blocks;
  if (random_ && o.blockalign && o.blockalign != unit_) {
    // fio's last_block: the blocks of blockalign that fit, less what a
    // smallest request would need past a smaller alignment; no random map.
    const std::uint64_t tail = unit_ > o.blockalign ? unit_ - o.blockalign : 0;
    blocks_ = std::max<std::uint64_t>((len_ > tail ? len_ - tail : 0) / o.blockalign, 1);
    unit_ = o.blockalign;
    no_map_ = true;
  }
  if (random_ && o.distribution.kind != RandomDistribution::Kind::uniform)
    picker_.emplace(o.distribution, blocks_, o.seed + o.order_salt * 0x9e3779b97f4a7c15ULL);
  readback_ = readback;
  endless_ = endless;
  // Replays draw the same sizes in the same order as the pass they check.
  rng_ = ((o.seed + o.order_salt * 0x9e3779b97f4a7c15ULL) ^ 0x6a09e667f3bcc908ULL) | 1;
  size_rng_[dir_write] = size_rng_[dir_trim] = rng_ ^ 0x3c6ef372fe94f82bULL;
  if (readback) {
    loop_bytes_ = budget;
    loops_left_ = 1;
  } else {
    loop_bytes_ = o.io_size ? o.io_size : len_;
    // fio (backend.c, do_io): each byte is trimmed, then written.
    if (bench_trims(o.rw)) loop_bytes_ *= 2;
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
  cursor_[0] = cursor_[1] = cursor_[2] = 0;
  last_start_[dir_write] = last_start_[dir_trim] = unset;
  rnext_ = 0;
  zone_start_ = zone_bytes_ = 0;
}

// fio's setup_strided_zone_mode (io_u.c): once zone_size bytes went to a
// zone, the next zone starts zone_range + zone_skip further on (from the
// start again past the end), and the direction's next request goes to its
// start; a request past the zone's range starts over at the zone's start.
void Workload::enter_zone(BenchDir dir) {
  if (zone_bytes_ >= o_.zone_size) {
    zone_bytes_ = 0;
    zone_start_ += o_.zone_range + o_.zone_skip;
    if (zone_start_ >= len_) zone_start_ = 0;
    cursor_[dir] = zone_start_;
  }
  if (cursor_[dir] >= zone_start_ + o_.zone_range) cursor_[dir] = zone_start_;
}

std::uint64_t Workload::pick_size(BenchDir d) {
  const auto& split = o_.bssplit[d];
  if (split.empty()) {  // a bssplit wins over a bsrange, as in fio
    if (const BsRange& r = o_.bsrange[d]; r.max) {
      if (r.min == r.max) return r.min;
      // fio's get_next_buflen: min + max x U[0,1), down to a multiple of min, at most max.
      const double u = double(rand() >> 11) / 9007199254740992.0;  // 53 random bits in [0, 1)
      std::uint64_t len = r.min + std::uint64_t(double(r.max) * u);
      len -= len % r.min;
      return std::min(len, r.max);
    }
    return o_.bs;
  }
  auto roll = unsigned(rand() % 100);
  for (const auto& s : split) {
    if (roll < s.percent) return s.bs;
    roll -= s.percent;
  }
  return split.back().bs;
}

// fio's get_next_seq_offset with an offset modifier: the first request at
// the start, each later one N bytes after the end of the one before; past
// the end it wraps to the start (N > 0) or to N before the end (N < 0).
// But a request that ended at the end of the range ends the pass (fio finds
// no next offset then), unless it is time-based.
std::uint64_t Workload::holed_offset(BenchDir dir) {
  const std::uint64_t last_end = cursor_[dir];
  if (last_end == 0) return 0;
  if (o_.seq_add > 0 && last_end >= len_ && !endless_) {
    at_end_ = true;
    return 0;
  }
  const auto len = std::int64_t(len_);
  std::int64_t pos = std::int64_t(last_end) + o_.seq_add;
  if (pos < 0 || pos >= len) {
    wrapped_ = true;
    ++restarts_;
    pos = o_.seq_add > 0 ? 0 : std::max<std::int64_t>(len + o_.seq_add, 0);
  }
  return std::uint64_t(pos);
}

// Where the next request of `size` in direction `dir` goes, in the window.
std::uint64_t Workload::place(BenchDir dir, std::uint64_t size) {
  if (random_) {
    std::uint64_t block = 0;
    if (picker_) {
      block = picker_->next(double(rand() >> 11) / 9007199254740992.0, rand());
    } else if (o_.norandommap || no_map_) {
      block = rand() % blocks_;
    } else {
      if (rnext_ == range_.blocks) {
        rnext_ = 0;  // every block done once: start the same order over
        wrapped_ = true;
        ++restarts_;
      }
      block = order_(rnext_++);
    }
    return block * unit_;
  }
  if (o_.seq_add) {
    const std::uint64_t off = holed_offset(dir);
    cursor_[dir] = off + size;
    return off;
  }
  if (o_.zone_size) enter_zone(dir);
  if (cursor_[dir] >= len_) {
    cursor_[dir] = 0;
    wrapped_ = true;
    ++restarts_;
  }
  const std::uint64_t off = cursor_[dir];
  cursor_[dir] += size;
  zone_bytes_ += size;
  return off;
}

// fio's set_rw_ddir and get_next_block for trimwrite (io_u.c): a trim when
// the last write started where the last trim did, else a write. Sequential:
// each direction has its own cursor and sizes (bs=R,W,T), so writes catch up
// with the trim before it; the pass ends where the next trim would start past
// the end (fio finds no offset). Random: every trim (the random map's) is
// followed by a write of the same block, offset and size. False: the pass is
// over.
bool Workload::next_trimwrite(BenchDir& dir, std::uint64_t& size, std::uint64_t& off) {
  dir = last_start_[dir_write] == last_start_[dir_trim] ? dir_trim : dir_write;
  if (random_ && dir == dir_write) {
    size = last_trim_size_;
    off = last_start_[dir_trim];
    last_start_[dir_write] = off;
    return true;
  }
  if (!random_ && dir == dir_trim && cursor_[dir_trim] >= len_ && !endless_) return false;
  std::swap(rng_, size_rng_[dir]);
  size = pick_size(dir);
  std::swap(rng_, size_rng_[dir]);
  off = place(dir, size);
  last_start_[dir] = off;
  if (dir == dir_trim) {
    last_trim_size_ = size;
    if (random_) last_start_[dir_write] = off + 1;  // fio: a repeated offset is still a new pair
  }
  return true;
}

bool Workload::exhausted() const {
  // A random trim is followed by its write even past the budget: fio's
  // random map shortens the last requests to fit, so its pairs end at the
  // budget together; ddbench's map does not shorten them.
  const bool trim_open = bench_trims(o_.rw) && last_start_[dir_write] != last_start_[dir_trim] && random_;
  return left_ == 0 && !trim_open && loops_left_ <= 1;
}

bool Workload::next(NextIo& out) {
  while (true) {
    if (exhausted()) return false;
    const bool trim_open = bench_trims(o_.rw) && last_start_[dir_write] != last_start_[dir_trim] && random_;
    if (left_ == 0 && !trim_open) start_loop();
    BenchDir dir = dir_read;
    std::uint64_t size = 0, off = 0;
    if (bench_trims(o_.rw)) {
      if (!next_trimwrite(dir, size, off)) at_end_ = true;
    } else {
      if (bench_mixed(o_.rw)) dir = rand() % 100 < o_.rwmixread ? dir_read : dir_write;
      else dir = bench_writes(o_.rw) || readback_ ? dir_write : dir_read;
      // A read-back draws its sizes (and a mixed one its directions) as the
      // pass it replays did, and reads where that pass wrote, skipping its reads.
      size = pick_size(dir);
      off = place(dir, size);
    }
    if (at_end_) {  // fio: no next offset; the loop is over
      at_end_ = false;
      left_ = 0;
      continue;
    }
    const std::uint64_t full = std::min(size, len_ - off);
    left_ -= std::min(full, left_);
    if (readback_ && dir == dir_read) continue;
    out.dir = readback_ ? dir_read : dir;
    out.offset = range_.begin + off;
    out.full = full;
    issued_ += out.full;
    return true;
  }
}

}  // namespace bench::detail
