// ddbench's options and their checks, the byte range a run covers and the
// order it visits blocks in. Pure parts, no I/O: opening the target is in
// target.cpp, the run itself in run.cpp.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "cmd/bench/run.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace bench {

using fsio::Errc;
using fsio::make_error;

// ---- options -------------------------------------------------------------

fsio::Result<BenchRw> parse_bench_rw(std::string_view text) {
  if (text == "read") return BenchRw::read;
  if (text == "write") return BenchRw::write;
  if (text == "randread") return BenchRw::randread;
  if (text == "randwrite") return BenchRw::randwrite;
  if (text == "rw" || text == "readwrite") return BenchRw::rw;
  if (text == "randrw") return BenchRw::randrw;
  if (text == "trimwrite") return BenchRw::trimwrite;
  if (text == "randtrimwrite") return BenchRw::randtrimwrite;
  // fio's trim and randtrim only discard: not supported.
  return make_error(Errc::invalid_argument, "rw '" + std::string(text) +
                                                "': expected read, write, randread, randwrite, rw (readwrite), "
                                                "randrw, trimwrite or randtrimwrite (ddbench does not trim alone)");
}

const char* bench_rw_name(BenchRw rw) {
  switch (rw) {
    case BenchRw::read: return "read";
    case BenchRw::write: return "write";
    case BenchRw::randread: return "randread";
    case BenchRw::randwrite: return "randwrite";
    case BenchRw::rw: return "rw";
    case BenchRw::randrw: return "randrw";
    case BenchRw::trimwrite: return "trimwrite";
    case BenchRw::randtrimwrite: return "randtrimwrite";
  }
  return "?";
}

// Trim sizes count only where the job trims: bs=R,W,T's third value is
// unused otherwise. There the smallest is the trims' (fio's random offsets
// are multiples of the direction's own min_bs, and only trims pick them).
std::uint64_t BenchOptions::max_bs() const {
  std::uint64_t m = 0;
  for (unsigned d = 0; d < (bench_trims(rw) ? 3u : 2u); ++d) {
    if (!bssplit[d].empty())
      for (const auto& s : bssplit[d]) m = std::max(m, s.bs);
    else m = std::max(m, bsrange[d].max ? bsrange[d].max : bs);
  }
  return m;
}

std::uint64_t BenchOptions::min_bs() const {
  std::uint64_t m = ~std::uint64_t{0};
  for (unsigned d = bench_trims(rw) ? 2u : 0u; d < (bench_trims(rw) ? 3u : 2u); ++d) {
    if (!bssplit[d].empty()) {
      for (const auto& s : bssplit[d])
        if (s.percent > 0) m = std::min(m, s.bs);
    } else {
      m = std::min(m, bsrange[d].max ? bsrange[d].min : bs);
    }
  }
  return m;
}

namespace {
// Bounds that keep one run's buffers (iodepth x bs, allocated up front) sane,
// and io_uring's own ring limit (IORING_MAX_ENTRIES is 32768).
constexpr std::uint64_t max_bs = 256u << 20;
constexpr std::uint64_t max_buffer_bytes = 4ull << 30;
constexpr unsigned max_iodepth = 32768;

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

fsio::Error usage(std::string what) { return make_error(Errc::invalid_argument, std::move(what)); }

fsio::Status validate_bs(const BenchOptions& o) {
  if (o.bs == 0 || o.bs > max_bs) return usage("bs " + std::to_string(o.bs) + ": must be 1 byte to 256 MiB");
  for (const auto& r : o.bsrange)
    if (r.max && (r.min == 0 || r.min > r.max || r.max > max_bs))
      return usage("bsrange " + std::to_string(r.min) + "-" + std::to_string(r.max) +
                   ": must be 1 byte to 256 MiB, low end first");
  for (unsigned d = 0; d < bench_dirs; ++d) {
    if (o.bssplit[d].empty()) continue;
    unsigned total = 0;
    for (const auto& s : o.bssplit[d]) {
      if (s.bs == 0 || s.bs > max_bs)
        return usage("bssplit: block size " + std::to_string(s.bs) + " must be 1 byte to 256 MiB");
      total += s.percent;
    }
    if (total != 100) return usage("bssplit: the percentages add up to " + std::to_string(total) + ", not 100");
  }
  return {};
}

// Seconds: 0 (none) or a millisecond to ~4 months. Below a millisecond the
// deadline in nanoseconds would round to 0, "no cap".
fsio::Status validate_seconds(const char* name, double v) {
  if (!(v == 0 || (v >= 1e-3 && v <= 1e7)))
    return usage(std::string(name) + " " + number_text(v) + ": must be 0 (none) or 0.001 to 1e7 seconds");
  return {};
}
}  // namespace

bool ErrorPolicy::ignorable(unsigned kind_bit, int err) const {
  if (!(continue_mask & kind_bit)) return false;
  const auto& list = ignore[std::countr_zero(kind_bit)];
  if (list.empty()) return err == EIO || err == EILSEQ;  // fio's default non-fatal errors
  return std::find(list.begin(), list.end(), err) != list.end();
}

fsio::Status validate(const BenchOptions& o) {
  FSIO_TRY(validate_bs(o));
  if (o.iodepth == 0 || o.iodepth > max_iodepth)
    return usage("iodepth " + std::to_string(o.iodepth) + ": must be 1 to " + std::to_string(max_iodepth));
  if (o.max_bs() * o.iodepth > max_buffer_bytes)
    return usage("bs x iodepth = " + fsio::format_size(o.max_bs() * o.iodepth) + " of buffers: more than " +
                 fsio::format_size(max_buffer_bytes));
  if (o.batch > o.iodepth)
    return usage("batch " + std::to_string(o.batch) + ": more than iodepth " + std::to_string(o.iodepth));
  FSIO_TRY(validate_seconds("runtime", o.runtime));
  FSIO_TRY(validate_seconds("ramp_time", o.ramp_time));
  if (o.time_based && o.runtime == 0) return usage("--time-based needs --runtime: it runs until the runtime is up");
  if (o.sync && !bench_writes(o.rw)) return usage("--sync applies to write workloads only");
  if (o.fsync_every && !bench_writes(o.rw)) return usage("fsync/fdatasync apply to write workloads only");
  if (o.rwmixread > 100) return usage("rwmixread " + std::to_string(o.rwmixread) + ": must be 0 to 100");
  if (o.loops == 0 || o.loops > 1000000) return usage("loops " + std::to_string(o.loops) + ": must be 1 to 1000000");
  if (o.stat_window_ms == 0 || o.stat_window_ms > 3600000)
    return usage("bw_avg_time " + std::to_string(o.stat_window_ms) + ": must be 1 to 3600000 ms");
  if (o.log_window_ms > 3600000)
    return usage("log_avg_msec " + std::to_string(o.log_window_ms) + ": must be 0 to 3600000 ms");
  if (o.create_size && *o.create_size == 0) return usage("create size 0: nothing to create");
  // Verify replays the writes of the pass as reads; in a mixed workload its
  // reads are not checked (fio checks them only in the verify phase).
  if (o.verify && bench_mixed(o.rw) && o.loops > 1)
    return usage("verify with rw=" + std::string(bench_rw_name(o.rw)) + " and loops " + std::to_string(o.loops) +
                 ": ddbench replays the writes of one pass only");
  if (o.seq_add < 0 && o.offset != 0)
    return usage("rw=" + std::string(bench_rw_name(o.rw)) + ":" + std::to_string(o.seq_add) + " with offset " +
                 std::to_string(o.offset) + ": backwards I/O from an offset is not supported");
  if (o.serialize_overlap && o.iodepth > 1)
    return usage("serialize_overlap with iodepth " + std::to_string(o.iodepth) +
                 ": ddbench does not serialize overlapping requests (at iodepth=1 none overlap in flight)");
  if (o.verify && o.distribution.kind != RandomDistribution::Kind::uniform)
    return usage("verify with a random_distribution other than random: a block written twice cannot be replayed");
  if (o.zone_size && (bench_random(o.rw) || o.seq_add))
    return usage("zonemode=strided with random I/O or an offset modifier is not supported (sequential I/O only)");
  if (o.verify && o.null_engine) return usage("verify with ioengine=null: the null engine moves no data to check");
  if (o.verify && o.ftruncate_engine) return usage("verify with ioengine=ftruncate: the engine moves no data to check");
  if (o.verify && o.norandommap) return usage("verify with norandommap: a block written twice cannot be replayed");
  // A trim workload is checked by its counts, as fio's t/jobs t0023 and t0024:
  // ddbench replays no trims, and paces no trims either.
  if (o.verify && bench_trims(o.rw))
    return usage("verify with rw=" + std::string(bench_rw_name(o.rw)) + ": not supported");
  if (o.ftruncate_engine && bench_trims(o.rw))
    return usage("ioengine=ftruncate with rw=" + std::string(bench_rw_name(o.rw)) + ": fio's engine fails trims");
  if (o.rate.limits() && bench_trims(o.rw))
    return usage("rate limits with rw=" + std::string(bench_rw_name(o.rw)) + ": not supported");
  if (o.verify && o.blockalign && o.blockalign != o.min_bs() && bench_random(o.rw))
    return usage("verify with blockalign: fio turns the random map off, and a block written twice cannot be replayed");
  return {};
}

fsio::Result<BenchRange> resolve_range(const BenchOptions& o, std::uint64_t device_size, std::uint32_t align) {
  FSIO_TRY(validate(o));
  if (align == 0) align = 1;
  if (o.offset >= device_size)
    return usage("offset " + std::to_string(o.offset) + " is at or past the end of the target (" +
                 std::to_string(device_size) + " bytes)");
  BenchRange r;
  r.begin = o.offset;
  if (o.size == 0) {
    r.end = device_size;
  } else {
    if (o.size > device_size - o.offset)
      return usage("size " + std::to_string(o.size) + " at offset " + std::to_string(o.offset) +
                   " runs past the end of the target (" + std::to_string(device_size) +
                   " bytes; --create makes a file bigger)");
    r.end = o.offset + o.size;
  }
  const std::uint64_t bs_min = o.min_bs();
  bool sizes_aligned = o.bs % align == 0;
  for (const auto& split : o.bssplit)
    for (const auto& s : split) sizes_aligned = sizes_aligned && s.bs % align == 0;
  for (const auto& r : o.bsrange)  // every size drawn is a multiple of min, or max itself
    sizes_aligned = sizes_aligned && r.min % align == 0 && r.max % align == 0;
  if (o.offset % align || !sizes_aligned)
    return usage("direct I/O needs offset and bs in multiples of " + std::to_string(align) + " bytes (offset " +
                 std::to_string(o.offset) + ", bs " + std::to_string(o.bs) + "); use --buffered");
  if (r.end != device_size && (r.end - r.begin) % align)
    return usage("direct I/O needs size in multiples of " + std::to_string(align) + " bytes (size " +
                 std::to_string(r.end - r.begin) + ")");
  r.blocks = (r.end - r.begin + bs_min - 1) / bs_min;
  return r;
}

// ---- the order blocks are visited in -------------------------------------

BlockOrder::BlockOrder(std::uint64_t n, bool random, std::uint64_t key) : n_(n), random_(random && n > 1) {
  const auto bits = unsigned(std::bit_width(n > 0 ? n - 1 : 0));
  mask_ = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  shift_ = std::max(1u, bits / 2);
  std::uint64_t k = key;
  for (auto& r : keys_) {
    k += 0x9e3779b97f4a7c15ULL;
    r = (k ^ (k >> 29)) * 0xbf58476d1ce4e5b9ULL;
  }
}

std::uint64_t BlockOrder::step(std::uint64_t x) const {
  // Each round: multiply by an odd number, xor-shift right, add; every one a
  // bijection modulo 2^bits, so their composition is one too.
  for (auto k : keys_) {
    x = (x * (k | 1)) & mask_;
    x ^= x >> shift_;
    x = (x + (k >> 17)) & mask_;
  }
  return x;
}

}  // namespace bench
