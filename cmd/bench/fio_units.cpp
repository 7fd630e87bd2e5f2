#include "cmd/bench/fio_units.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <string>

namespace bench {
namespace {

using fsio::Errc;
using fsio::make_error;

fsio::Error bad(std::string_view what, std::string_view text, const std::string& why) {
  return make_error(Errc::invalid_argument, std::string(what) + " '" + std::string(text) + "': " + why);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The number at the front of `text`: integer digits (or 0x hex), then an
// optional fraction. `int_part` is exact; `frac` is the fraction as a double.
struct Number {
  std::uint64_t int_part = 0;
  double frac = 0;
  bool has_frac = false;
  std::size_t end = 0;
};

fsio::Result<Number> leading_number(std::string_view text, std::string_view what) {
  Number n;
  std::size_t i = 0;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) {
    i = 2;
    while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) {
      const char c = char(std::tolower(static_cast<unsigned char>(text[i])));
      const auto d = std::uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
      if (n.int_part > (max - d) / 16) return bad(what, text, "too large (more than 2^64-1)");
      n.int_part = n.int_part * 16 + d;
      ++i;
    }
    if (i == 2) return bad(what, text, "no hex digits after 0x");
    n.end = i;
    return n;
  }
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const auto d = std::uint64_t(text[i] - '0');
    if (n.int_part > (max - d) / 10) return bad(what, text, "too large (more than 2^64-1)");
    n.int_part = n.int_part * 10 + d;
    ++i;
  }
  if (i == 0) return bad(what, text, "must start with a number");
  if (i < text.size() && text[i] == '.') {
    ++i;
    double scale = 0.1;
    const std::size_t first = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n.frac += (text[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == first) return bad(what, text, "no digits after the decimal point");
    n.has_frac = true;
  }
  n.end = i;
  return n;
}

int prefix_power(char c) {
  switch (c) {
    case 'k': return 1;
    case 'm': return 2;
    case 'g': return 3;
    case 't': return 4;
    case 'p': return 5;
    default: return 0;
  }
}

}  // namespace

fsio::Result<std::uint64_t> parse_fio_size(std::string_view text, unsigned kb_base) {
  if (text.empty()) return bad("size", text, "empty");
  if (kb_base != 1000 && kb_base != 1024) return bad("kb_base", std::to_string(kb_base), "must be 1000 or 1024");
  auto n = FSIO_TRY(leading_number(text, "size"));
  const std::string unit = lower(text.substr(n.end));
  std::uint64_t base = kb_base;
  int power = 0;
  if (unit.empty() || unit == "b") {
    power = 0;
  } else if (const int p = prefix_power(unit[0]); p > 0) {
    const std::string rest = unit.substr(1);
    if (rest.empty() || rest == "b") base = kb_base;
    else if (rest == "i" || rest == "ib") base = 1024;
    else return bad("size", text, "unknown unit '" + std::string(text.substr(n.end)) + "'");
    power = p;
  } else {
    return bad("size", text,
               "unknown unit '" + std::string(text.substr(n.end)) + "' (use k, m, g, t, p, with b, i or ib)");
  }
  std::uint64_t mult = 1;
  for (int k = 0; k < power; ++k) mult *= base;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  if (n.int_part != 0 && mult > max / n.int_part) return bad("size", text, "too large (more than 2^64-1 bytes)");
  std::uint64_t bytes = n.int_part * mult;
  if (n.has_frac) {
    const double extra = n.frac * double(mult);
    if (extra != std::floor(extra))
      return bad("size", text, "is not a whole number of bytes (" + std::to_string(extra) + " after the point)");
    if (double(max - bytes) < extra) return bad("size", text, "too large (more than 2^64-1 bytes)");
    bytes += std::uint64_t(extra);
  }
  return bytes;
}

std::uint64_t FioSize::resolve(std::uint64_t target, std::uint64_t granule) const {
  if (!is_percent()) return bytes;
  auto v = std::uint64_t(std::floor(double(target) * percent / 100.0));
  if (v > target) v = target;
  if (granule > 1) v -= v % granule;
  return v;
}

fsio::Result<FioSize> parse_fio_size_or_percent(std::string_view text, unsigned kb_base) {
  FioSize s;
  if (!text.empty() && text.back() == '%') {
    const std::string_view num = text.substr(0, text.size() - 1);
    auto n = FSIO_TRY(leading_number(num, "percentage"));
    if (n.end != num.size()) return bad("percentage", text, "expected a number before '%'");
    s.percent = double(n.int_part) + n.frac;
    if (s.percent <= 0 || s.percent > 100) return bad("percentage", text, "must be more than 0% and at most 100%");
    return s;
  }
  s.bytes = FSIO_TRY(parse_fio_size(text, kb_base));
  return s;
}

fsio::Result<double> parse_fio_time(std::string_view text, double default_unit) {
  if (text.empty()) return bad("time", text, "empty");
  auto n = FSIO_TRY(leading_number(text, "time"));
  const std::string unit = lower(text.substr(n.end));
  double scale = default_unit;
  if (unit.empty()) scale = default_unit;
  else if (unit == "d") scale = 86400;
  else if (unit == "h") scale = 3600;
  else if (unit == "m") scale = 60;
  else if (unit == "s" || unit == "sec") scale = 1;
  else if (unit == "ms" || unit == "msec") scale = 1e-3;
  else if (unit == "us" || unit == "usec") scale = 1e-6;
  else return bad("time", text, "unknown unit '" + std::string(text.substr(n.end)) + "' (use us, ms, s, m, h or d)");
  const double v = (double(n.int_part) + n.frac) * scale;
  if (!std::isfinite(v)) return bad("time", text, "too large");
  return v;
}

fsio::Result<bool> parse_fio_bool(std::string_view text) {
  const std::string t = lower(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return bad("boolean", text, "expected 1 or 0");
}

fsio::Result<std::uint64_t> parse_fio_uint(std::string_view text, std::uint64_t min, std::uint64_t max) {
  if (text.empty()) return bad("number", text, "empty");
  auto n = FSIO_TRY(leading_number(text, "number"));
  if (n.end != text.size() || n.has_frac) return bad("number", text, "expected a whole number");
  if (n.int_part < min || n.int_part > max)
    return bad("number", text, "must be " + std::to_string(min) + " to " + std::to_string(max));
  return n.int_part;
}

}  // namespace bench
