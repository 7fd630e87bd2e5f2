// Internal to the benchmark runner: which request comes next. fio's rules
// (io_u.c get_next_offset, get_rw_ddir): sequential offsets advance per
// direction, each wrapping at the end of the range; random offsets walk one
// keyed permutation of the range's blocks shared by both directions (fio's
// random map), or plain random blocks with norandommap; a mixed workload
// draws each request's direction against rwmixread; bssplit draws its size.
// A loop (fio's size, or io_size) is done when its bytes have been issued;
// loops start over at the beginning. A time-based pass never runs out.
// trimwrite and randtrimwrite: see next_trimwrite.
#pragma once

#include <cstdint>
#include <limits>

#include <optional>

#include "cmd/bench/run.hpp"

namespace bench::detail {

struct NextIo {
  BenchDir dir = dir_read;
  std::uint64_t offset = 0;  // bytes into the target
  std::uint64_t full = 0;    // bytes of it inside the range (the last block may be short)
};

class Workload {
 public:
  // `readback`: replay the write pass as reads, `budget` bytes of it (the
  // verify read-back). Otherwise the options' own workload; `endless` for a
  // time-based measured pass.
  Workload(const BenchOptions& o, const BenchRange& r, bool readback, std::uint64_t budget, bool endless);

  bool more() const { return left_ > 0 || loops_left_ > 1; }
  // next() has nothing more to give: the last loop's bytes are issued (and
  // no random trim waits for its write).
  bool exhausted() const;
  bool next(NextIo& out);
  bool wrapped() const { return wrapped_; }  // went over (part of) the range again
  // How often the range was started over (a time-based wrap, a new loop):
  // fio drops the page cache each time (it reopens the file per loop).
  std::uint64_t restarts() const { return restarts_; }
  std::uint64_t issued_bytes() const { return issued_; }

 private:
  std::uint64_t rand() {
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545F4914F6CDD1DULL;
  }
  std::uint64_t pick_size(BenchDir d);
  std::uint64_t holed_offset(BenchDir d);
  std::uint64_t place(BenchDir dir, std::uint64_t size);
  void start_loop();
  void enter_zone(BenchDir dir);
  bool next_trimwrite(BenchDir& dir, std::uint64_t& size, std::uint64_t& off);

  const BenchOptions& o_;
  BenchRange range_;
  BlockOrder order_;
  std::optional<BlockPicker> picker_;  // random_distribution other than uniform
  std::uint64_t len_ = 0;
  std::uint64_t unit_ = 0;    // random offsets are multiples of this
  std::uint64_t blocks_ = 0;  // of unit_, in the range
  bool no_map_ = false;       // blockalign turned the random map off
  bool random_ = false;
  bool readback_ = false;
  bool endless_ = false;
  std::uint64_t loop_bytes_ = 0;
  std::uint64_t left_ = 0;
  std::uint64_t loops_left_ = 1;
  std::uint64_t cursor_[bench_dirs] = {0, 0, 0};
  // trimwrite: where the last trim and the last write started, and the
  // trim's size (fio's f->last_start, last_pos).
  // Both start unset, as fio's -1, so the first request trims.
  static constexpr std::uint64_t unset = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t last_start_[bench_dirs] = {unset, unset, unset};
  std::uint64_t last_trim_size_ = 0;
  // trimwrite: the trims' and the writes' sizes come from two generators
  // seeded alike (fio's init.c: trim_seed = write_seed), so sequential writes
  // of bsrange sizes land where the trims did.
  std::uint64_t size_rng_[bench_dirs] = {0, 0, 0};
  std::uint64_t rnext_ = 0;
  std::uint64_t zone_start_ = 0, zone_bytes_ = 0;  // zonemode=strided: the zone, and bytes issued in it
  std::uint64_t rng_ = 1;
  std::uint64_t issued_ = 0;
  bool wrapped_ = false;
  bool at_end_ = false;  // an offset modifier's pass reached the end of the range
  std::uint64_t restarts_ = 0;
};

}  // namespace bench::detail
