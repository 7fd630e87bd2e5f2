#include "cmd/bench/priority.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "cmd/bench/fio_units.hpp"

namespace bench {

using fsio::Errc;
using fsio::make_error;

namespace {

// linux/ioprio.h: the calling thread, when who is 0.
constexpr int ioprio_who_process = 1;

// "BS/PERCENT/CLASS/LEVEL", "BS/PERCENT" or "BS/" (fio's
// parse_cmdprio_bssplit_entry; the last two leave the priority to
// cmdprio_class and cmdprio).
fsio::Result<CmdPrioSplit> parse_entry(std::string_view e, unsigned kb_base) {
  std::vector<std::string_view> parts;
  for (std::size_t from = 0;;) {
    const auto slash = e.find('/', from);
    parts.push_back(e.substr(from, slash == std::string_view::npos ? std::string_view::npos : slash - from));
    if (slash == std::string_view::npos) break;
    from = slash + 1;
  }
  const std::string where = "'" + std::string(e) + "'";
  if (parts.size() == 3 || parts.size() > 4)
    return make_error(Errc::invalid_argument, where + ": expected BS/PERCENT or BS/PERCENT/CLASS/LEVEL");
  CmdPrioSplit s;
  s.bs = FSIO_TRY_CTX(parse_fio_size(parts[0], kb_base), where);
  if (parts.size() >= 2 && !parts[1].empty())
    s.percent = unsigned(std::min<std::uint64_t>(FSIO_TRY_CTX(parse_fio_uint(parts[1], 0, 1u << 30), where), 100));
  if (parts.size() == 4) {
    const auto cls = std::min<std::uint64_t>(FSIO_TRY_CTX(parse_fio_uint(parts[2], 0, 1u << 30), where), 3);
    const auto level = std::min<std::uint64_t>(FSIO_TRY_CTX(parse_fio_uint(parts[3], 0, 1u << 30), where), 7);
    s.ioprio = ioprio_value(unsigned(cls), unsigned(level));
  }
  return s;
}

}  // namespace

fsio::Result<std::vector<CmdPrioSplit>> parse_cmdprio_split(std::string_view text, unsigned kb_base) {
  std::vector<CmdPrioSplit> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto colon = text.find(':', from);
    const std::string_view e =
        text.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from);
    if (e.empty()) break;  // fio stops at an empty entry
    const CmdPrioSplit s = FSIO_TRY(parse_entry(e, kb_base));
    if (s.percent > 0) out.push_back(s);
    if (colon == std::string_view::npos) break;
    from = colon + 1;
  }
  // fio sorts by size (a stable order among equal sizes is ours: its qsort
  // keeps no promise, and the percentages of one size add up either way).
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.bs < b.bs; });
  std::uint64_t bs = 0;
  unsigned total = 0;
  for (const auto& s : out) {
    total = s.bs == bs ? total + s.percent : s.percent;
    bs = s.bs;
    if (total > 100)
      return make_error(Errc::invalid_argument, "the percentages for " + std::to_string(bs) + " bytes exceed 100");
  }
  return out;
}

PriorityPlan::PriorityPlan(const PriorityOptions& o, bool reads, bool writes) {
  per_request_ = o.per_request();
  for (auto& v : values_) v = {o.job_ioprio()};
  if (!per_request_) return;
  const bool used[2] = {reads, writes};
  for (unsigned d = 0; d < 2; ++d) {
    if (!used[d]) continue;
    // fio: cmdprio_class defaults to realtime.
    const std::uint16_t implicit = ioprio_value(o.cmd_class[d] ? o.cmd_class[d] : ioprio_class_rt, o.cmd_level[d]);
    if (o.bssplit_given) {
      for (const auto& s : o.bssplit[d])
        choices_[d].push_back({s.bs, s.percent, index_of(d, s.ioprio.value_or(implicit))});
    } else if (o.cmd_percent[d]) {
      choices_[d].push_back({0, o.cmd_percent[d], index_of(d, implicit)});
    }
  }
}

unsigned PriorityPlan::index_of(unsigned dir, std::uint16_t value) {
  auto& v = values_[dir];
  // A cmdprio value equal to the job's own shares its index 0, as in fio's
  // assign_clat_prio_index.
  const auto it = std::find(v.begin(), v.end(), value);
  if (it != v.end()) return unsigned(it - v.begin());
  v.push_back(value);
  return unsigned(v.size() - 1);
}

unsigned PriorityPlan::pick(unsigned dir, std::uint64_t bs, unsigned draw) const {
  if (dir >= 2) return 0;
  unsigned below = 0;
  for (const auto& c : choices_[dir]) {
    if (c.bs != 0 && c.bs != bs) continue;
    below += c.percent;
    if (draw < below) return c.index;
  }
  return 0;
}

fsio::Result<ThreadPriority> ThreadPriority::set(std::uint16_t value) {
  if (value == 0) return ThreadPriority(-1);
  const long old = ::syscall(SYS_ioprio_get, ioprio_who_process, 0);
  if (old < 0) return fsio::errno_error("ioprio_get");
  if (::syscall(SYS_ioprio_set, ioprio_who_process, 0, int(value)) != 0)
    return fsio::errno_error("ioprio_set class " + std::to_string(ioprio_class(value)) + " level " +
                             std::to_string(ioprio_level(value)));
  return ThreadPriority(int(old));
}

ThreadPriority::~ThreadPriority() {
  if (old_ >= 0) (void)::syscall(SYS_ioprio_set, ioprio_who_process, 0, old_);
}

}  // namespace bench
