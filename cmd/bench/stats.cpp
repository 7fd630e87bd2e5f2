// ddbench's measurements: latency statistics and fio's histogram, fio's
// latency and depth tables. Pure arithmetic, no I/O.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "cmd/bench/jobs.hpp"
#include "cmd/bench/run.hpp"

namespace bench {

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
      return std::clamp(bucket_value(i), min(), max());
    }
  }
  return max();
}

namespace {
// The upper bounds of fio's latency tables (stat.c io_u_lat_n/u/m), in ns:
// a value below bounds[k] and not below bounds[k-1] lands in entry k; the
// last entry (ms: ">=2000") takes everything else.
constexpr std::uint64_t us = 1000, ms = 1000000;
constexpr std::uint64_t lat_bounds[LatencyBuckets::ns_n + LatencyBuckets::us_n + LatencyBuckets::ms_n - 1] = {
    2,       4,       10,      20,       50,       100,      250,      500,       750,       1000,   2 * us,
    4 * us,  10 * us, 20 * us, 50 * us,  100 * us, 250 * us, 500 * us, 750 * us,  1000 * us, 2 * ms, 4 * ms,
    10 * ms, 20 * ms, 50 * ms, 100 * ms, 250 * ms, 500 * ms, 750 * ms, 1000 * ms, 2000 * ms};

// For each bit width w of a value (values in [2^(w-1), 2^w)), the entry of
// the smallest such value; a value's own entry is at most two bounds further
// (no power-of-two range holds more than two bounds). So add() is a table
// lookup and a compare or two, not a search: it runs once per request.
struct FirstEntry {
  std::array<std::uint8_t, 65> k{};
  constexpr FirstEntry() {
    for (unsigned w = 0; w <= 64; ++w) {
      const std::uint64_t low = w == 0 ? 0 : std::uint64_t{1} << (w - 1);
      std::uint8_t e = 0;
      while (e < std::size(lat_bounds) && low >= lat_bounds[e]) ++e;
      k[w] = e;
    }
  }
};
constexpr FirstEntry first_entry;
}  // namespace

void LatencyBuckets::add(std::uint64_t ns, std::uint64_t n) {
  std::size_t k = first_entry.k[std::bit_width(ns)];
  while (k < std::size(lat_bounds) && ns >= lat_bounds[k]) ++k;
  count[k] += n;
}

void LatencyBuckets::merge(const LatencyBuckets& o) {
  for (std::size_t i = 0; i < count.size(); ++i) count[i] += o.count[i];
}

void DepthCounts::add_level(unsigned in_flight, std::uint64_t requests) {
  // 1, 2, 4, 8, 16, 32, >=64: the largest power of two not above it.
  unsigned k = 0;
  while (k < 6 && in_flight >= (2u << k)) ++k;
  level[k] += requests;
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

namespace {
void merge_samples(std::vector<BenchSample>& into, const std::vector<BenchSample>& from) {
  // Windows of several jobs started together line up by their end time.
  for (const auto& s : from) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const BenchSample& x) { return x.t_ms == s.t_ms && x.dir == s.dir; });
    if (it == into.end()) {
      into.push_back(s);
      continue;
    }
    it->bytes += s.bytes;
    it->ios += s.ios;
    it->lat_sum += s.lat_sum;
    it->clat_sum += s.clat_sum;
    it->slat_sum += s.slat_sum;
  }
  std::sort(into.begin(), into.end(), [](const BenchSample& a, const BenchSample& b) {
    return a.t_ms != b.t_ms ? a.t_ms < b.t_ms : a.dir < b.dir;
  });
}

void merge_verify(std::optional<VerifyResult>& into, const std::optional<VerifyResult>& from) {
  if (!from) return;
  if (!into) {
    into = from;
    return;
  }
  into->complete = into->complete && from->complete;
  into->bytes_checked += from->bytes_checked;
  into->bad_blocks += from->bad_blocks;
  if (from->first && (!into->first || from->first->offset < into->first->offset)) into->first = from->first;
}

// fio's clat_prio_stat_add_samples: by priority value, new ones appended.
void merge_prios(std::vector<BenchDirResult::Prio>& into, const std::vector<BenchDirResult::Prio>& from) {
  for (const auto& p : from) {
    auto it = std::find_if(into.begin(), into.end(), [&](const auto& q) { return q.ioprio == p.ioprio; });
    if (it == into.end()) into.push_back(p);
    else it->clat.merge(p.clat);
  }
}
}  // namespace

BenchResult merge_results(const std::vector<const BenchResult*>& rs) {
  BenchResult m = *rs.front();
  m.io_events.clear();
  for (std::size_t k = 1; k < rs.size(); ++k) {
    const BenchResult& r = *rs[k];
    for (unsigned d = 0; d < bench_dirs; ++d) {
      m.dir[d].io_bytes += r.dir[d].io_bytes;
      m.dir[d].ios += r.dir[d].ios;
      m.dir[d].dropped += r.dir[d].dropped;
      m.dir[d].clat.merge(r.dir[d].clat);
      m.dir[d].slat.merge(r.dir[d].slat);
      m.dir[d].lat.merge(r.dir[d].lat);
      merge_prios(m.dir[d].prios, r.dir[d].prios);
    }
    m.clat.merge(r.clat);
    m.sync_lat.merge(r.sync_lat);
    m.lat_buckets.merge(r.lat_buckets);
    m.depths.merge(r.depths);
    m.cpu.usr += r.cpu.usr;
    m.cpu.sys += r.cpu.sys;
    m.cpu.ctx += r.cpu.ctx;
    m.cpu.majf += r.cpu.majf;
    m.cpu.minf += r.cpu.minf;
    m.io_bytes += r.io_bytes;
    m.ios += r.ios;
    m.eod_truncated += r.eod_truncated;
    if (m.total_err == 0) m.first_error = r.first_error;
    m.total_err += r.total_err;
    m.elapsed = std::max(m.elapsed, r.elapsed);
    m.verify_elapsed = std::max(m.verify_elapsed, r.verify_elapsed);
    m.backlog_reads = m.backlog_reads || r.backlog_reads;
    m.interrupted = m.interrupted || r.interrupted;
    m.runtime_capped = m.runtime_capped || r.runtime_capped;
    m.stats.requests_queued += r.stats.requests_queued;
    m.stats.requests_submitted += r.stats.requests_submitted;
    m.stats.syscalls += r.stats.syscalls;
    m.stats.bytes_read += r.stats.bytes_read;
    m.stats.bytes_written += r.stats.bytes_written;
    m.stats.flushes += r.stats.flushes;
    m.stats.retries += r.stats.retries;
    m.stats.peak_in_flight += r.stats.peak_in_flight;
    m.stats.elapsed_seconds = std::max(m.stats.elapsed_seconds, r.stats.elapsed_seconds);
    merge_samples(m.stat_samples, r.stat_samples);
    merge_samples(m.log_samples, r.log_samples);
    merge_verify(m.verify, r.verify);
  }
  return m;
}

}  // namespace bench
