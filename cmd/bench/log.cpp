#include "cmd/bench/log.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

const char* bench_log_suffix(BenchLogKind kind) {
  switch (kind) {
    case BenchLogKind::bw: return "bw";
    case BenchLogKind::iops: return "iops";
    case BenchLogKind::lat: return "lat";
    case BenchLogKind::clat: return "clat";
    case BenchLogKind::slat: return "slat";
  }
  return "?";
}

namespace {

// The priority column as fio 3.33 prints it: with log_prio the request's
// priority value ("0x6000"; 0x0000: none set), else 1 when its class is
// realtime (fio's high-priority bit), 0 otherwise.
std::string prio_column(std::uint16_t ioprio, bool log_prio) {
  if (!log_prio) return ioprio_class(ioprio) == ioprio_class_rt ? "1" : "0";
  char b[16];
  std::snprintf(b, sizeof b, "0x%04x", unsigned(ioprio));
  return b;
}

void line(std::string& out, std::uint64_t t_ms, std::uint64_t value, unsigned dir, std::uint64_t bs,
          const std::uint64_t* offset, const std::string& prio) {
  char b[160];
  if (offset)
    std::snprintf(b, sizeof b, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", %" PRIu64 ", %s\n", t_ms, value, dir, bs,
                  *offset, prio.c_str());
  else
    std::snprintf(b, sizeof b, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", %s\n", t_ms, value, dir, bs, prio.c_str());
  out += b;
}

// A window's value: averages over what completed in it. A latency log has
// no line for a window without requests (there is nothing to average).
bool window_value(const BenchSample& s, BenchLogKind kind, unsigned window_ms, std::uint64_t& value) {
  switch (kind) {
    case BenchLogKind::bw: value = std::uint64_t(s.bw_kib(window_ms)); return true;
    case BenchLogKind::iops: value = std::uint64_t(s.iops(window_ms)); return true;
    case BenchLogKind::lat: value = s.ios ? std::uint64_t(s.lat_sum / double(s.ios)) : 0; return s.ios > 0;
    case BenchLogKind::clat: value = s.ios ? std::uint64_t(s.clat_sum / double(s.ios)) : 0; return s.ios > 0;
    case BenchLogKind::slat:
      value = s.ios ? std::uint64_t(s.slat_sum / double(s.ios)) : 0;
      return s.ios > 0 && s.slat_sum > 0;
  }
  return false;
}

// One request's value; its bandwidth is its bytes over its total latency.
bool event_value(const BenchIoEvent& e, BenchLogKind kind, std::uint64_t& value) {
  const std::uint64_t lat = e.clat + e.slat;
  switch (kind) {
    case BenchLogKind::bw: value = lat ? std::uint64_t(double(e.bytes) * 1e9 / double(lat) / 1024.0) : 0; return true;
    case BenchLogKind::iops: value = 1; return true;
    case BenchLogKind::lat: value = lat; return true;
    case BenchLogKind::clat: value = e.clat; return true;
    case BenchLogKind::slat: value = e.slat; return e.slat > 0;
  }
  return false;
}

}  // namespace

std::string format_bench_log(const BenchResult& r, BenchLogKind kind, bool windowed, bool log_offset, bool log_prio) {
  std::string out;
  const std::uint64_t zero = 0;
  if (windowed) {
    // fio logs a window's average with no priority (0).
    const std::string prio = prio_column(0, log_prio);
    for (const auto& s : r.log_samples) {
      std::uint64_t v = 0;
      if (window_value(s, kind, r.log_window_ms, v)) line(out, s.t_ms, v, s.dir, 0, log_offset ? &zero : nullptr, prio);
    }
    return out;
  }
  for (const auto& e : r.io_events) {
    std::uint64_t v = 0;
    if (event_value(e, kind, v))
      line(out, e.t_ns / 1000000u, v, e.dir, e.bytes, log_offset ? &e.offset : nullptr,
           prio_column(e.ioprio, log_prio));
  }
  return out;
}

std::string format_fio_iolog(const BenchResult& result, const std::string& file) {
  // Queued at completion minus the request's total latency (clat + slat).
  std::vector<std::pair<std::uint64_t, const BenchIoEvent*>> queued;
  queued.reserve(result.io_events.size());
  for (const auto& e : result.io_events) queued.emplace_back(e.t_ns - std::min(e.t_ns, e.clat + e.slat), &e);
  std::stable_sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "fio version 3 iolog\n0 " + file + " add\n0 " + file + " open\n";
  char b[96];
  for (const auto& [t, e] : queued) {
    std::snprintf(b, sizeof b, "%" PRIu64 " ", t / 1000);
    out += b + file;
    std::snprintf(b, sizeof b, " %s %" PRIu64 " %" PRIu32 "\n", bench_dir_name(e->dir), e->offset, e->bytes);
    out += b;
  }
  return out + std::to_string(result.runtime_ms() * 1000) + " " + file + " close\n";
}

}  // namespace bench
