// fio's rate options (and blockalign): a value per direction as bs= takes them ("R" for
// both, "R,W", ",W" for writes only, "R," for reads only; a third value,
// for trims, is accepted; a trim workload with a rate limit is refused, so
// it never goes uncapped).
#include <array>
#include <limits>
#include <optional>

#include "cmd/bench/fio_option_values.hpp"

namespace bench::detail {

fsio::Result<std::array<std::uint64_t, 2>> per_direction(const FioLine& l, Unit unit, unsigned kb_base) {
  const std::string_view v = l.value;
  const auto comma = v.find(',');
  std::array<std::optional<std::string_view>, 2> parts;
  if (comma == std::string_view::npos) {
    parts = {v, v};
  } else {
    const std::string_view rest = v.substr(comma + 1);
    parts = {v.substr(0, comma), rest.substr(0, rest.find(','))};
  }
  std::array<std::uint64_t, 2> out{};
  for (unsigned d = 0; d < 2; ++d) {
    if (parts[d]->empty()) continue;  // fio: an empty part sets no limit
    auto n = unit == Unit::bytes ? parse_fio_size(*parts[d], kb_base)
                                 : parse_fio_uint(*parts[d], 0, std::numeric_limits<std::uint32_t>::max());
    if (!n) return bad(l, why(n.error()));
    out[d] = *n;
  }
  return out;
}

fsio::Status apply_rate(FioJob& j, const FioLine& l) {
  j.bench.rate.bytes = FSIO_TRY(per_direction(l, Unit::bytes, j.kb_base));
  return {};
}

fsio::Status apply_rate_min(FioJob& j, const FioLine& l) {
  j.bench.rate.min_bytes = FSIO_TRY(per_direction(l, Unit::bytes, j.kb_base));
  return {};
}

fsio::Status apply_rate_iops(FioJob& j, const FioLine& l) {
  j.bench.rate.ios = FSIO_TRY(per_direction(l, Unit::count, j.kb_base));
  return {};
}

fsio::Status apply_rate_iops_min(FioJob& j, const FioLine& l) {
  j.bench.rate.min_ios = FSIO_TRY(per_direction(l, Unit::count, j.kb_base));
  return {};
}

// blockalign=A (or A,A): one alignment for both directions.
fsio::Status apply_blockalign(FioJob& j, const FioLine& l) {
  const auto v = FSIO_TRY(per_direction(l, Unit::bytes, j.kb_base));
  if (v[0] && v[1] && v[0] != v[1]) return bad(l, "an alignment per direction is not supported (give one value)");
  j.bench.blockalign = v[0] ? v[0] : v[1];
  if (j.bench.blockalign % 512 != 0) return bad(l, "must be a multiple of 512");
  return {};
}

fsio::Status apply_rate_process(FioJob& j, const FioLine& l) {
  if (l.value != "linear" && l.value != "poisson") return bad(l, "expected linear or poisson");
  j.bench.rate.poisson = l.value == "poisson";
  return {};
}

}  // namespace bench::detail
