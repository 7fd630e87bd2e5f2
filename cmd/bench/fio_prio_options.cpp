// fio's priority options: prioclass and prio (the job's thread, as fio's
// ioprio_set), and the io_uring/libaio engine options cmdprio_percentage,
// cmdprio_class, cmdprio and cmdprio_bssplit (a priority per request).
// The per-direction ones take "V", "R,W", ",W" or "R," as fio's do.
#include <algorithm>

#include "cmd/bench/fio_option_values.hpp"
#include "cmd/bench/priority.hpp"

namespace bench::detail {
namespace {

// Each direction's value in [min, max], fio's minval/maxval.
fsio::Result<std::array<unsigned, 2>> bounded(const FioLine& l, unsigned kb_base, unsigned min, unsigned max) {
  const auto v = FSIO_TRY(per_direction(l, Unit::count, kb_base));
  std::array<unsigned, 2> out{};
  for (unsigned d = 0; d < 2; ++d) {
    if (v[d] > max || (v[d] < min && v[d] != 0))
      return bad(l, "must be " + std::to_string(min) + " to " + std::to_string(max));
    out[d] = unsigned(v[d]);
  }
  return out;
}

bool is_cmdprio(const std::string& key) {
  std::string k = key;
  std::replace(k.begin(), k.end(), '-', '_');
  return k.rfind("cmdprio", 0) == 0;
}

}  // namespace

fsio::Status apply_prioclass(FioJob& j, const FioLine& l) {
  j.bench.priority.prioclass = unsigned(FSIO_TRY(uint_of(l, 0, 3)));
  return {};
}

fsio::Status apply_prio(FioJob& j, const FioLine& l) {
  j.bench.priority.prio = unsigned(FSIO_TRY(uint_of(l, 0, 7)));
  return {};
}

fsio::Status apply_cmdprio_percentage(FioJob& j, const FioLine& l) {
  j.bench.priority.cmd_percent = FSIO_TRY(bounded(l, j.kb_base, 0, 100));
  return {};
}

fsio::Status apply_cmdprio_class(FioJob& j, const FioLine& l) {
  j.bench.priority.cmd_class = FSIO_TRY(bounded(l, j.kb_base, 1, 3));
  return {};
}

fsio::Status apply_cmdprio(FioJob& j, const FioLine& l) {
  j.bench.priority.cmd_level = FSIO_TRY(bounded(l, j.kb_base, 0, 7));
  return {};
}

// "READS[,WRITES[,TRIMS]]", one part for all (fio's str_split_parse); trims
// take no cmdprio, so their part is read past.
fsio::Status apply_cmdprio_bssplit(FioJob& j, const FioLine& l) {
  PriorityOptions& p = j.bench.priority;
  const std::string_view v = l.value;
  const auto comma = v.find(',');
  const std::string_view reads = v.substr(0, comma);
  std::string_view writes = reads;
  if (comma != std::string_view::npos) writes = v.substr(comma + 1, v.find(',', comma + 1) - comma - 1);
  for (auto [d, text] : {std::pair{0u, reads}, std::pair{1u, writes}}) {
    auto split = parse_cmdprio_split(text, j.kb_base);
    if (!split) return bad(l, why(split.error()));
    p.bssplit[d] = std::move(*split);
  }
  p.bssplit_given = !v.empty();
  return {};
}

fsio::Status check_priority(const FioJob& j, const std::vector<FioLine>& lines) {
  const PriorityOptions& p = j.bench.priority;
  const auto cmd = std::find_if(lines.begin(), lines.end(), [](const FioLine& l) { return is_cmdprio(l.key); });
  if (cmd == lines.end()) return {};
  const bool uring = j.bench.engine == fsio::EngineKind::uring && !j.bench.null_engine && j.file_op == FileOp::none;
  if (!uring)
    return bad(*cmd,
               "an option of fio's io_uring and libaio engines only (a priority per request needs an "
               "engine that carries one)");
  if (p.bssplit_given && (p.cmd_percent[0] || p.cmd_percent[1]))
    return bad(*cmd, "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as fio says)");
  return {};
}

}  // namespace bench::detail
