// The distributions of fio's random_distribution. zipf is drawn with Gray
// et al.'s method ("Quickly generating billion-record synthetic databases",
// SIGMOD 1994), zeta(n) summed over at most 10 million terms as fio does;
// pareto as n x u^(log h / log(1 - h)). The rank a draw gives (0: hottest)
// is scattered over the range by a 64-bit mixing function and a seeded
// offset, so the hot blocks are not all at the start.
#include "cmd/bench/distribution.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace bench {
namespace {

using fsio::Errc;
using fsio::make_error;

// The reason only: the caller names the option and its value.
fsio::Error bad(std::string_view, const std::string& why) { return make_error(Errc::invalid_argument, why); }

fsio::Result<double> number(std::string_view text, std::string_view whole) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    return bad(whole, "'" + std::string(text) + "' is not a number");
  return v;
}

fsio::Result<RandomDistribution> parse_zones(std::string_view spec, std::string_view whole) {
  RandomDistribution d;
  d.kind = RandomDistribution::Kind::zoned;
  unsigned access = 0, range = 0;
  while (!spec.empty()) {
    const std::string_view zone = spec.substr(0, spec.find(':'));
    spec = zone.size() < spec.size() ? spec.substr(zone.size() + 1) : std::string_view{};
    const auto slash = zone.find('/');
    if (slash == std::string_view::npos) return bad(whole, "expected ACCESS%/RANGE% zones, e.g. zoned:60/10:40/90");
    RandomDistribution::Zone z;
    const auto a = std::from_chars(zone.data(), zone.data() + slash, z.access);
    // A blank range in the last zone is the rest of the range (fio's examples/rand-zones.fio: "20/").
    const bool rest = slash + 1 == zone.size() && spec.empty() && range <= 100;
    if (rest) z.range = 100 - range;
    const auto r = rest ? std::from_chars_result{zone.data() + zone.size(), std::errc{}}
                        : std::from_chars(zone.data() + slash + 1, zone.data() + zone.size(), z.range);
    if (a.ec != std::errc{} || a.ptr != zone.data() + slash || r.ec != std::errc{} ||
        r.ptr != zone.data() + zone.size())
      return bad(whole, "zone '" + std::string(zone) + "' is not ACCESS%/RANGE% in whole percents");
    access += z.access;
    range += z.range;
    d.zones.push_back(z);
  }
  if (access != 100 || range != 100)
    return bad(whole, "the zones' accesses and ranges must each add up to 100 (" + std::to_string(access) + ", " +
                          std::to_string(range) + ")");
  return d;
}

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

fsio::Result<RandomDistribution> parse_random_distribution(std::string_view text) {
  if (text == "random") return RandomDistribution{};
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (kind == "zoned") return parse_zones(arg, text);
  if (kind != "zipf" && kind != "pareto")
    return bad(text, "ddbench has random, zipf, pareto and zoned (not normal or zoned_abs)");
  if (arg.empty()) return bad(text, std::string(kind) + " needs a value, e.g. " + std::string(kind) + ":0.8");
  if (arg.find(':') != std::string_view::npos) return bad(text, "a centre (a second value) is not supported");
  RandomDistribution d;
  d.param = FSIO_TRY(number(arg, text));
  if (kind == "zipf") {
    d.kind = RandomDistribution::Kind::zipf;
    if (d.param <= 0 || d.param == 1.0) return bad(text, "zipf's theta must be more than 0 and not 1");
  } else {
    d.kind = RandomDistribution::Kind::pareto;
    if (d.param <= 0 || d.param >= 1) return bad(text, "pareto's h must be between 0 and 1");
  }
  return d;
}

BlockPicker::BlockPicker(const RandomDistribution& d, std::uint64_t n, std::uint64_t seed)
    : d_(d), n_(n ? n : 1), offset_(mix64(seed) % n_) {
  if (d_.kind == RandomDistribution::Kind::zipf) {
    const std::uint64_t terms = std::min<std::uint64_t>(n_, 10'000'000);
    for (std::uint64_t i = 1; i <= terms; ++i) zetan_ += std::pow(1.0 / double(i), d_.param);
    zeta2_ = 1.0 + std::pow(0.5, d_.param);
  }
  if (d_.kind == RandomDistribution::Kind::pareto) pareto_pow_ = std::log(d_.param) / std::log(1.0 - d_.param);
}

std::uint64_t BlockPicker::scatter(std::uint64_t rank) const { return (mix64(rank) + offset_) % n_; }

std::uint64_t BlockPicker::next(double u, std::uint64_t r) const {
  const double n = double(n_);
  switch (d_.kind) {
    case RandomDistribution::Kind::zipf: {
      const double theta = d_.param;
      const double uz = u * zetan_;
      if (uz < 1.0) return scatter(0);
      if (uz < 1.0 + std::pow(0.5, theta)) return scatter(std::min<std::uint64_t>(1, n_ - 1));
      const double alpha = 1.0 / (1.0 - theta);
      const double eta = (1.0 - std::pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2_ / zetan_);
      const auto rank = std::uint64_t(n * std::pow(eta * u - eta + 1.0, alpha));
      return scatter(std::min(rank, n_ - 1));
    }
    case RandomDistribution::Kind::pareto: return scatter(std::uint64_t((n - 1) * std::pow(u, pareto_pow_)));
    case RandomDistribution::Kind::zoned: {
      // Pick the zone by its share of the accesses, then a block in it uniformly.
      unsigned roll = unsigned(u * 100.0), start = 0;
      for (const auto& z : d_.zones) {
        const std::uint64_t lo = n_ * start / 100, hi = n_ * (start + z.range) / 100;
        start += z.range;
        if (roll >= z.access) {
          roll -= z.access;
          continue;
        }
        return hi > lo ? lo + r % (hi - lo) : std::min(lo, n_ - 1);
      }
      return r % n_;
    }
    case RandomDistribution::Kind::uniform: break;
  }
  return r % n_;
}

}  // namespace bench
