// Size arguments: digits, then an optional unit. The unit letter is
// case-insensitive (k/K, m/M, ...); "iB" or nothing after it means 1024-based,
// "B" after it means 1000-based, as mkfs.fat, dd and fio users expect
// ("4K" and "4KiB" are 4096, "4KB" is 4000). A lone "B" means bytes.
#include "libfsio/size.hpp"

#include <cstdio>
#include <limits>

namespace fsio {
namespace {

Error size_error(std::string_view text, const std::string& why) {
  return make_error(Errc::invalid_argument, "size '" + std::string(text) + "': " + why);
}

// Index of the unit letter in "KMGTP" (0 = K), or -1.
int unit_index(char c) {
  switch (c) {
    case 'k':
    case 'K': return 0;
    case 'm':
    case 'M': return 1;
    case 'g':
    case 'G': return 2;
    case 't':
    case 'T': return 3;
    case 'p':
    case 'P': return 4;
    default: return -1;
  }
}

bool is_b(char c) { return c == 'b' || c == 'B'; }

}  // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  if (text.empty()) return size_error(text, "empty");
  std::size_t i = 0;
  std::uint64_t value = 0;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    auto digit = std::uint64_t(text[i] - '0');
    if (value > (max - digit) / 10) return size_error(text, "too large (more than 2^64-1 bytes)");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return size_error(text, "must start with a number");
  if (i < text.size() && (text[i] == '.' || text[i] == ','))
    return size_error(text, "only whole numbers are accepted (use a smaller unit)");

  std::string_view suffix = text.substr(i);
  std::uint64_t multiplier = 1;
  if (suffix.empty() || (suffix.size() == 1 && is_b(suffix[0]))) {
    multiplier = 1;
  } else {
    int unit = unit_index(suffix[0]);
    std::string_view rest = suffix.substr(1);
    std::uint64_t base = 0;
    if (rest.empty() || ((rest.size() == 2) && (rest[0] == 'i' || rest[0] == 'I') && is_b(rest[1]))) base = 1024;
    else if (rest.size() == 1 && is_b(rest[0])) base = 1000;
    if (unit < 0 || base == 0) return size_error(text, "unknown suffix '" + std::string(suffix) + "'");
    for (int k = 0; k <= unit; ++k) multiplier *= base;
  }
  if (value != 0 && multiplier > max / value) return size_error(text, "too large (more than 2^64-1 bytes)");
  return value * multiplier;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  int unit = 0;
  // Pick the largest unit that the value reaches; long double keeps exact
  // powers of two exact up to EiB.
  long double value = static_cast<long double>(bytes);
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2Lf", value);
  // Trim "1.50" -> "1.5" and "4.00" -> "4": exact sizes read as exact.
  std::string number = buf;
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  return number + " " + units[unit];
}

std::string format_hex(std::uint64_t v, bool upper) {
  char buf[24];
  std::snprintf(buf, sizeof buf, upper ? "0x%llX" : "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string format_count(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace fsio
