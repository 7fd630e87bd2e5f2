#include "cmd/bench/steadystate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "cmd/bench/fio_units.hpp"

namespace bench {

using fsio::Errc;
using fsio::make_error;

std::string SteadyStateOptions::name() const {
  char b[64];
  std::snprintf(b, sizeof b, "%s%s:%f%s", iops ? "iops" : "bw", slope ? "_slope" : "", double(float(limit)),
                percent ? "%" : "");
  return b;
}

fsio::Status parse_steadystate(std::string_view text, unsigned kb_base, SteadyStateOptions& o) {
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (kind != "iops" && kind != "iops_slope" && kind != "bw" && kind != "bw_slope")
    return make_error(Errc::invalid_argument, "expected iops, iops_slope, bw or bw_slope, then ':' and a limit");
  if (colon == std::string_view::npos || colon + 1 == text.size())
    return make_error(Errc::invalid_argument, "needs a limit after the criterion (as fio says)");
  o.iops = kind.substr(0, 4) == "iops";
  o.slope = kind.ends_with("_slope");
  std::string_view limit = text.substr(colon + 1);
  o.percent = limit.ends_with('%');
  if (o.percent || o.iops) {
    if (o.percent) limit.remove_suffix(1);
    auto v = parse_fio_time(limit, 1.0);  // a plain decimal number
    if (!v || limit.find_first_not_of("0123456789.") != std::string_view::npos)
      return make_error(Errc::invalid_argument, "the limit '" + std::string(limit) + "' is not a number");
    o.limit = *v;
  } else {
    o.limit = double(FSIO_TRY(parse_fio_size(limit, kb_base)));  // bytes per second
  }
  return {};
}

std::uint64_t SteadyStateReport::iops_mean() const {
  return options.duration_s ? std::accumulate(iops.begin(), iops.end(), std::uint64_t{0}) / options.duration_s : 0;
}

std::uint64_t SteadyStateReport::bw_mean() const {
  return options.duration_s ? std::accumulate(bw.begin(), bw.end(), std::uint64_t{0}) / options.duration_s : 0;
}

bool SteadyState::add(std::uint64_t iops, std::uint64_t bw) {
  SteadyStateReport& r = report_;
  const auto n = r.options.duration_s;
  r.iops.push_back(iops);
  r.bw.push_back(bw);
  if (r.iops.size() > n) {
    r.iops.erase(r.iops.begin());
    r.bw.erase(r.bw.begin());
  }
  if (r.iops.size() < n) return false;
  const auto& y = r.options.iops ? r.iops : r.bw;
  const double mean = double(std::accumulate(y.begin(), y.end(), std::uint64_t{0})) / n;
  if (r.options.slope) {
    // Least squares over x = 0 .. n-1, a second apart (as fio assumes).
    double sum_xy = 0;
    for (unsigned i = 0; i < n; ++i) sum_xy += double(i) * double(y[i]);
    const double sum_x = double(n) * (n - 1) / 2, sum_x2 = double(n - 1) * n * (2.0 * n - 1) / 6;
    r.slope = (sum_xy - sum_x * mean) / (sum_x2 - sum_x * sum_x / n);
    r.criterion = r.options.percent ? 100.0 * r.slope / mean : r.slope;
    r.attained = std::fabs(r.criterion) < r.options.limit;
  } else {
    r.deviation = 0;
    for (auto v : y) r.deviation = std::max(r.deviation, std::fabs(double(v) - mean));
    r.criterion = r.options.percent ? 100.0 * r.deviation / mean : r.deviation;
    r.attained = r.criterion < r.options.limit;
  }
  return r.attained;
}

SteadyStateReport SteadyState::final_report() const {
  SteadyStateReport r = report_;
  r.iops.resize(r.options.duration_s, 0);
  r.bw.resize(r.options.duration_s, 0);
  return r;
}

}  // namespace bench
