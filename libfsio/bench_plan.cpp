// ddbench's plan: options and their checks, the byte range a run covers,
// the order it visits blocks in, and fio's latency histogram. Pure parts, no
// I/O except opening the target; the run itself is in bench.cpp.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>

#include "libfsio/bench.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace fsio {

// ---- options -------------------------------------------------------------

Result<BenchRw> parse_bench_rw(std::string_view text) {
  if (text == "read") return BenchRw::read;
  if (text == "write") return BenchRw::write;
  if (text == "randread") return BenchRw::randread;
  if (text == "randwrite") return BenchRw::randwrite;
  return make_error(Errc::invalid_argument,
                    "rw '" + std::string(text) + "': expected read, write, randread or randwrite");
}

const char* bench_rw_name(BenchRw rw) {
  switch (rw) {
    case BenchRw::read: return "read";
    case BenchRw::write: return "write";
    case BenchRw::randread: return "randread";
    case BenchRw::randwrite: return "randwrite";
  }
  return "?";
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
}  // namespace

Status validate(const BenchOptions& o) {
  if (o.bs == 0 || o.bs > max_bs)
    return make_error(Errc::invalid_argument, "bs " + std::to_string(o.bs) + ": must be 1 byte to 256 MiB");
  if (o.iodepth == 0 || o.iodepth > max_iodepth)
    return make_error(Errc::invalid_argument,
                      "iodepth " + std::to_string(o.iodepth) + ": must be 1 to " + std::to_string(max_iodepth));
  if (o.bs * o.iodepth > max_buffer_bytes)
    return make_error(Errc::invalid_argument, "bs x iodepth = " + format_size(o.bs * o.iodepth) +
                                                  " of buffers: more than " + format_size(max_buffer_bytes));
  if (o.batch > o.iodepth)
    return make_error(Errc::invalid_argument, "batch " + std::to_string(o.batch) + ": more than iodepth " +
                                                  std::to_string(o.iodepth));
  // Below a millisecond the deadline in nanoseconds would round to 0, "no cap".
  if (!(o.runtime == 0 || (o.runtime >= 1e-3 && o.runtime <= 1e7)))
    return make_error(Errc::invalid_argument,
                      "runtime " + number_text(o.runtime) + ": must be 0 (no cap) or 0.001 to 1e7 seconds");
  if (o.time_based && o.runtime == 0)
    return make_error(Errc::invalid_argument, "--time-based needs --runtime: it runs until the runtime is up");
  if (o.sync && !bench_writes(o.rw))
    return make_error(Errc::invalid_argument, "--sync applies to write and randwrite only");
  if (o.create_size && *o.create_size == 0)
    return make_error(Errc::invalid_argument, "create size 0: nothing to create");
  return {};
}

Result<BenchRange> plan_range(const BenchOptions& o, std::uint64_t device_size, std::uint32_t align) {
  FSIO_TRY(validate(o));
  if (align == 0) align = 1;
  if (o.offset >= device_size)
    return make_error(Errc::invalid_argument, "offset " + std::to_string(o.offset) +
                                                  " is at or past the end of the target (" +
                                                  std::to_string(device_size) + " bytes)");
  BenchRange r;
  r.begin = o.offset;
  if (o.size == 0) {
    r.end = device_size;
  } else {
    if (o.size > device_size - o.offset)
      return make_error(Errc::invalid_argument,
                        "size " + std::to_string(o.size) + " at offset " + std::to_string(o.offset) +
                            " runs past the end of the target (" + std::to_string(device_size) +
                            " bytes; --create makes a file bigger)");
    r.end = o.offset + o.size;
  }
  if (o.offset % align || o.bs % align)
    return make_error(Errc::invalid_argument, "direct I/O needs offset and bs in multiples of " +
                                                  std::to_string(align) + " bytes (offset " +
                                                  std::to_string(o.offset) + ", bs " + std::to_string(o.bs) +
                                                  "); use --buffered");
  if (r.end != device_size && (r.end - r.begin) % align)
    return make_error(Errc::invalid_argument, "direct I/O needs size in multiples of " + std::to_string(align) +
                                                  " bytes (size " + std::to_string(r.end - r.begin) + ")");
  r.blocks = (r.end - r.begin + o.bs - 1) / o.bs;
  return r;
}

Result<Device> open_bench_target(const std::string& path, const BenchOptions& o) {
  FSIO_TRY(validate(o));
  OpenOptions open;
  open.write = bench_writes(o.rw) || o.create_size.has_value();
  open.direct = o.direct;
  open.create_size = o.create_size;
  // The refusals no option overrides come first (a mounted target must not
  // be met with "use --force"), then the signatures; both through read-only
  // opens, since opening for writing with create_size would grow the file.
  if (open.write && ::access(path.c_str(), F_OK) == 0) {
    OpenOptions check;
    check.check_write = true;
    check.direct = false;
    FSIO_TRY(Device::open(path, check));
  }
  if (bench_writes(o.rw) && !o.force) FSIO_TRY(check_overwrite(path, 0, std::nullopt, false, "writing"));
  return Device::open(path, open);
}

// ---- latency histogram ----------------------------------------------------

unsigned LatencyHistogram::bucket_of(std::uint64_t ns) {
  // Values below 2^(sub_bits+1) get a bucket each; above, a power of two
  // [2^m, 2^(m+1)) is split into sub_buckets equal parts (fio's plat_val_to_idx).
  if (ns < 2 * sub_buckets) return unsigned(ns);
  const unsigned msb = unsigned(std::bit_width(ns)) - 1;
  const unsigned shift = msb - sub_bits;
  const unsigned group = shift + 1;
  return group * sub_buckets + unsigned((ns >> shift) & (sub_buckets - 1));
}

std::uint64_t LatencyHistogram::bucket_low(unsigned index) {
  if (index < 2 * sub_buckets) return index;
  const unsigned group = index / sub_buckets;
  const unsigned shift = group - 1;
  return (std::uint64_t(sub_buckets) + index % sub_buckets) << shift;
}

std::uint64_t LatencyHistogram::bucket_high(unsigned index) {
  if (index < 2 * sub_buckets) return index;
  const unsigned shift = index / sub_buckets - 1;
  return bucket_low(index) + ((std::uint64_t{1} << shift) - 1);
}

void LatencyHistogram::add(std::uint64_t ns, std::uint64_t count) {
  hist_[bucket_of(ns)] += count;
  count_ += count;
  sum_ += double(ns) * double(count);
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

std::uint64_t LatencyHistogram::percentile(double pct) const {
  if (count_ == 0) return 0;
  pct = std::clamp(pct, 0.0, 100.0);
  // At least one sample: p0 is the smallest bucket that holds anything.
  const auto want = std::max<std::uint64_t>(1, std::uint64_t(pct / 100.0 * double(count_) + 0.9999999));
  std::uint64_t seen = 0;
  for (unsigned i = 0; i < buckets; ++i) {
    seen += hist_[i];
    if (seen >= want) {
      const std::uint64_t mid = bucket_low(i) + (bucket_high(i) - bucket_low(i)) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}


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

}  // namespace fsio
