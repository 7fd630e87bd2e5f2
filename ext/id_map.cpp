// IdMap (see id_map.hpp).
#include "ext/id_map.hpp"

#include <algorithm>

namespace ext {
namespace {

constexpr std::uint64_t kLastId = 0xFFFFFFFEu;  // (uid_t)-1 is no owner

// A decimal number of at most 10 digits, no sign or blank.
std::optional<std::uint64_t> decimal(const std::string& text) {
  if (text.empty() || text.size() > 10 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(text);
}

bool overlap(std::uint64_t a, std::uint64_t b, std::uint64_t count_a, std::uint64_t count_b) {
  return a < b + count_b && b < a + count_a;
}

}  // namespace

fsio::Status IdMap::add(const std::string& spec, const std::string& option) {
  auto bad = [&](const std::string& why) {
    return fsio::make_error(fsio::Errc::invalid_argument, option + " '" + spec + "': " + why);
  };
  const std::size_t c1 = spec.find(':'), c2 = c1 == std::string::npos ? c1 : spec.find(':', c1 + 1);
  if (c2 == std::string::npos || spec.find(':', c2 + 1) != std::string::npos)
    return bad("expected FROM:TO:COUNT (the source's ids FROM.. become TO..)");
  const auto from = decimal(spec.substr(0, c1)), to = decimal(spec.substr(c1 + 1, c2 - c1 - 1)),
             count = decimal(spec.substr(c2 + 1));
  if (!from || !to || !count) return bad("FROM, TO and COUNT are decimal numbers");
  if (*count == 0) return bad("COUNT is at least 1");
  if (*from + *count - 1 > kLastId || *to + *count - 1 > kLastId)
    return bad("the range ends past 4294967294 (4294967295 is no owner)");
  for (const IdRange& r : ranges_) {
    const std::string other = std::to_string(r.from) + ":" + std::to_string(r.to) + ":" + std::to_string(r.count);
    if (overlap(*from, r.from, *count, r.count)) return bad("its source ids overlap those of " + other);
    if (overlap(*to, r.to, *count, r.count)) return bad("its target ids overlap those of " + other);
  }
  ranges_.push_back(IdRange{std::uint32_t(*from), std::uint32_t(*to), std::uint32_t(*count)});
  return {};
}

std::optional<std::uint32_t> IdMap::map(std::uint32_t id) const {
  for (const IdRange& r : ranges_)
    if (id >= r.from && std::uint64_t(id) < std::uint64_t(r.from) + r.count) return r.to + (id - r.from);
  return std::nullopt;
}

}  // namespace ext
