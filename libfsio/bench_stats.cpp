// ddbench's measurements: latency statistics and fio's histogram, fio's
// latency and depth tables. Pure arithmetic, no I/O.
#include <algorithm>
#include <cmath>

#include "libfsio/bench.hpp"

namespace fsio {

void LatencyStats::merge(const LatencyStats& o) {
  if (o.n_ == 0) return;
  n_ += o.n_;
  sum_ += o.sum_;
  sumsq_ += o.sumsq_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double LatencyStats::stddev() const {
  // fio divides by n - 1 (calc_lat); one sample has no spread.
  if (n_ < 2) return 0;
  const double n = double(n_);
  const double var = (sumsq_ - sum_ * sum_ / n) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
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

std::uint64_t LatencyHistogram::bucket_value(unsigned index) {
  if (index < 2 * sub_buckets) return index;
  const unsigned shift = index / sub_buckets - 1;
  return bucket_low(index) + (std::uint64_t{1} << shift) / 2;
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (unsigned i = 0; i < buckets; ++i) hist_[i] += o.hist_[i];
  stats_.merge(o.stats_);
}

std::uint64_t LatencyHistogram::percentile(double pct) const {
  const std::uint64_t n = count();
  if (n == 0) return 0;
  pct = std::clamp(pct, 0.0, 100.0);
  // At least one sample: p0 is the smallest bucket that holds anything.
  const auto want = std::max<std::uint64_t>(1, std::uint64_t(pct / 100.0 * double(n) + 0.9999999));
  std::uint64_t seen = 0;
  for (unsigned i = 0; i < buckets; ++i) {
    seen += hist_[i];
    if (seen >= want) {
      const std::uint64_t mid = bucket_low(i) + (bucket_high(i) - bucket_low(i)) / 2;
      return std::clamp(mid, min(), max());
    }
  }
  return max();
}

namespace {
// The upper bounds of fio's latency tables (stat.c io_u_lat_*): a value
// below bounds[k] and not below bounds[k-1] lands in entry k.
constexpr std::uint64_t lat_bounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};

unsigned lat_slot(std::uint64_t v) {
  unsigned k = 0;
  while (k < 9 && v >= lat_bounds[k]) ++k;
  return k;
}
}  // namespace

void LatencyBuckets::add(std::uint64_t ns) {
  if (ns < 1000) {
    ++count[lat_slot(ns)];
  } else if (ns < 1000000) {
    ++count[ns_n + lat_slot(ns / 1000)];
  } else {
    const std::uint64_t ms = ns / 1000000;
    unsigned k = ms < 1000 ? lat_slot(ms) : ms < 2000 ? 10 : 11;
    ++count[ns_n + us_n + k];
  }
}

void LatencyBuckets::merge(const LatencyBuckets& o) {
  for (std::size_t i = 0; i < count.size(); ++i) count[i] += o.count[i];
}

void DepthCounts::add_level(unsigned in_flight) {
  // 1, 2, 4, 8, 16, 32, >=64: the largest power of two not above it.
  unsigned k = 0;
  while (k < 6 && in_flight >= (2u << k)) ++k;
  ++level[k];
}

unsigned DepthCounts::batch_bucket(unsigned n) {
  if (n == 0) return 0;
  if (n <= 4) return 1;
  if (n <= 8) return 2;
  if (n <= 16) return 3;
  if (n <= 32) return 4;
  if (n <= 64) return 5;
  return 6;
}

void DepthCounts::merge(const DepthCounts& o) {
  for (unsigned i = 0; i < 7; ++i) {
    level[i] += o.level[i];
    submit[i] += o.submit[i];
    complete[i] += o.complete[i];
  }
}

}  // namespace fsio
