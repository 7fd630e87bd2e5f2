// The values of fio's options: each parser takes a job-file or command-line
// line and either a value or an error naming the line and the option
// ("job.fio:7: bs '12Q': unknown unit 'Q'"). The option table
// (fio_options.cpp) is built from these.
#include "cmd/bench/fio_option_values.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace bench::detail {

using fsio::Errc;
using fsio::make_error;

// "--bs" on the command line, "bs" in a job file.
std::string label(const FioLine& l) { return (l.where == "command line" ? "--" : "") + l.key; }

fsio::Error bad(const FioLine& l, const std::string& why) {
  const std::string where = l.where == "command line" ? "" : l.where + ": ";
  return make_error(Errc::invalid_argument, where + label(l) + " '" + l.value + "': " + why);
}

// The reason part of a units error ("size '4Q': unknown unit 'Q'" -> "unknown unit 'Q'").
std::string why(const fsio::Error& e) {
  const std::string m = e.message();
  const auto cut = m.find("': ");
  return cut == std::string::npos ? m : m.substr(cut + 3);
}

fsio::Result<std::uint64_t> size_of(const FioLine& l, unsigned kb_base) {
  auto v = parse_fio_size(l.value, kb_base);
  if (!v) return bad(l, why(v.error()));
  return *v;
}

fsio::Result<FioSize> size_or_percent(const FioLine& l, unsigned kb_base) {
  auto v = parse_fio_size_or_percent(l.value, kb_base);
  if (!v) return bad(l, why(v.error()));
  return *v;
}

fsio::Result<std::uint64_t> uint_of(const FioLine& l, std::uint64_t min, std::uint64_t max) {
  auto v = parse_fio_uint(l.value, min, max);
  if (!v) return bad(l, why(v.error()));
  return *v;
}

fsio::Result<double> seconds_of(const FioLine& l, double unit) {
  auto v = parse_fio_time(l.value, unit);
  if (!v) return bad(l, why(v.error()));
  return *v;
}

// A bare flag ("direct", "--time_based") is true, as fio's bool options are.
fsio::Result<bool> bool_of(const FioLine& l) {
  if (!l.has_value || l.value.empty()) return true;
  auto v = parse_fio_bool(l.value);
  if (!v) return bad(l, "expected 1 or 0");
  return *v;
}

fsio::Result<std::string> text_of(const FioLine& l) {
  if (l.value.empty()) return bad(l, "needs a value");
  return l.value;
}

// bssplit=4k/10:64k/50:32k/40[,write split]: blank percentages share what
// the others leave, equally (fio's rule).
fsio::Result<std::vector<BsSplit>> split_of(const FioLine& l, std::string_view text, unsigned kb_base) {
  std::vector<BsSplit> out;
  std::vector<std::size_t> blank;
  unsigned given = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto colon = text.find(':', pos);
    const std::string_view item = text.substr(pos, colon == std::string_view::npos ? text.npos : colon - pos);
    pos = colon == std::string_view::npos ? text.size() + 1 : colon + 1;
    const auto slash = item.find('/');
    auto bs = parse_fio_size(item.substr(0, slash), kb_base);
    if (!bs) return bad(l, why(bs.error()));
    BsSplit s{*bs, 0};
    if (slash == std::string_view::npos || slash + 1 == item.size()) {
      blank.push_back(out.size());
    } else {
      auto pct = parse_fio_uint(item.substr(slash + 1), 0, 100);
      if (!pct) return bad(l, "percentage " + why(pct.error()));
      s.percent = unsigned(*pct);
      given += s.percent;
    }
    out.push_back(s);
  }
  if (given > 100) return bad(l, "the percentages add up to " + std::to_string(given) + ", more than 100");
  for (std::size_t k = 0; k < blank.size(); ++k)
    out[blank[k]].percent =
        (100 - given) / unsigned(blank.size()) + (k == 0 ? (100 - given) % unsigned(blank.size()) : 0);
  return out;
}

// bs=4k, bs=4k,8k or bs=4k,8k,16k (reads, writes, trims). As fio, a value
// not ended by a comma applies to the directions after it too.
fsio::Status apply_bs(FioJob& j, const FioLine& l) {
  const std::string_view v = l.value;
  if (v.find(',') == std::string_view::npos) {
    j.bench.bs = FSIO_TRY(size_of(l, j.kb_base));
    j.bench.bssplit = {};
    j.bench.bsrange = {};
    return {};
  }
  j.bench.bsrange = {};
  std::string_view rest = v;
  for (unsigned d = 0; d < bench_dirs && !rest.empty(); ++d) {
    const std::string_view part = rest.substr(0, rest.find(','));
    const bool last = part.size() == rest.size();
    rest = last ? std::string_view{} : rest.substr(part.size() + 1);
    if (part.empty()) continue;  // fio: an empty part keeps the default
    auto bs = parse_fio_size(part, j.kb_base);
    if (!bs) return bad(l, why(bs.error()));
    for (unsigned e = d; e < (last ? bench_dirs : d + 1); ++e) j.bench.bssplit[e] = {{*bs, 100}};
  }
  const auto& s = j.bench.bssplit;
  if (!s[0].empty() && !s[1].empty() && !s[2].empty() && s[0][0].bs == s[1][0].bs && s[1][0].bs == s[2][0].bs) {
    j.bench.bs = s[0][0].bs;
    j.bench.bssplit = {};
  }
  return {};
}

// One end of a range as fio 3.33 reads it (parse.c, str_to_decimal and
// get_mult_bytes): the leading number and the letters of its unit; what
// follows is ignored, so t/jobs/t0023.fio's "bsrange=512/25:1k:25:..." is
// 512-1k.
namespace {
std::string_view range_end(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  while (n > 0 && n < s.size() && std::isalpha(static_cast<unsigned char>(s[n]))) ++n;
  return n ? s.substr(0, n) : s;
}
}  // namespace

// bsrange=1k-4k or 512:1M, and ",MIN-MAX" for writes (and trims) apart
// (fio's range syntax; fio swaps ends given high first).
fsio::Status apply_bsrange(FioJob& j, const FioLine& l) {
  std::string_view v = l.value;
  std::array<BsRange, bench_dirs> out;
  for (unsigned d = 0; d < bench_dirs && !v.empty(); ++d) {
    const std::string_view part = v.substr(0, v.find(','));
    v = part.size() < v.size() ? v.substr(part.size() + 1) : std::string_view{};
    auto sep = part.find('-');  // fio looks for '-' first, then ':'
    if (sep == std::string_view::npos) sep = part.find(':');
    if (sep == std::string_view::npos) return bad(l, "expected MIN-MAX, e.g. 1k-4k");
    auto lo = parse_fio_size(range_end(part.substr(0, sep)), j.kb_base);
    auto hi = parse_fio_size(range_end(part.substr(sep + 1)), j.kb_base);
    if (!lo) return bad(l, why(lo.error()));
    if (!hi) return bad(l, why(hi.error()));
    if (*lo > *hi) std::swap(*lo, *hi);
    if (*lo == 0) return bad(l, "the low end must be more than 0");
    out[d] = {*lo, *hi};
  }
  for (unsigned d = 1; d < bench_dirs; ++d)
    if (!out[d].max) out[d] = out[d - 1];  // a range applies to the directions after it, as fio
  j.bench.bsrange = out;
  // bs=R,W (a bssplit of one size) is fio's min and max too, which this replaces;
  // a real bssplit keeps winning, as in fio.
  for (auto& split : j.bench.bssplit)
    if (split.size() == 1) split.clear();
  return {};
}

fsio::Status apply_bssplit(FioJob& j, const FioLine& l) {
  const std::string_view v = l.value;
  const auto comma = v.find(',');
  auto reads = FSIO_TRY(split_of(l, v.substr(0, comma), j.kb_base));
  j.bench.bssplit = {reads, reads, reads};
  if (comma == std::string_view::npos) return {};
  const auto comma2 = v.find(',', comma + 1);
  const auto writes = FSIO_TRY(split_of(l, v.substr(comma + 1, comma2 - comma - 1), j.kb_base));
  j.bench.bssplit[dir_write] = writes;
  j.bench.bssplit[dir_trim] =
      comma2 == std::string_view::npos ? writes : FSIO_TRY(split_of(l, v.substr(comma2 + 1), j.kb_base));
  return {};
}

fsio::Status apply_rw(FioJob& j, const FioLine& l) {
  // fio's offset modifier: rw=write:112k leaves a 112k hole after each
  // request, rw=read:-8k steps back 8k (backwards with bs=4k). On random
  // I/O the number is a count of requests per offset, not supported here.
  const auto colon = l.value.find(':');
  auto rw = parse_bench_rw(std::string_view(l.value).substr(0, colon));
  if (!rw) return bad(l, why(rw.error()));
  j.bench.rw = *rw;
  j.bench.seq_add = 0;
  if (colon == std::string::npos) return {};
  if (bench_random(*rw)) return bad(l, "offset modifiers on random I/O (rw=randread:N) are not supported");
  std::string_view n = std::string_view(l.value).substr(colon + 1);
  const bool back = !n.empty() && n[0] == '-';
  auto bytes = parse_fio_size(back ? n.substr(1) : n, j.kb_base);
  if (!bytes) return bad(l, why(bytes.error()));
  if (*bytes > (std::uint64_t{1} << 62)) return bad(l, "the offset modifier is too large");
  j.bench.seq_add = back ? -std::int64_t(*bytes) : std::int64_t(*bytes);
  return {};
}

fsio::Status apply_engine(FioJob& j, const FioLine& l) {
  const std::string& v = l.value;
  j.bench.null_engine = v == "null";
  j.bench.ftruncate_engine = v == "ftruncate";
  j.task.engine = v == "cpuio"  ? TaskEngine::cpuio
                  : v == "exec" ? TaskEngine::exec
                  : v == "net"  ? TaskEngine::net
                                : TaskEngine::none;
  j.file_op = v == "filecreate"   ? FileOp::create
              : v == "filestat"   ? FileOp::stat
              : v == "filedelete" ? FileOp::remove
                                  : FileOp::none;
  if (v == "io_uring" || v == "uring") j.bench.engine = fsio::EngineKind::uring;
  else if (v == "psync" || v == "pvsync" || v == "pvsync2") j.bench.engine = fsio::EngineKind::psync;
  else if (v == "auto") j.bench.engine = fsio::EngineKind::automatic;
  else if (v == "null") j.bench.null_engine = true;
  else if (v == "ftruncate") j.bench.engine = fsio::EngineKind::psync;  // synchronous, as fio's
  else if (j.file_op != FileOp::none || j.task.engine != TaskEngine::none) j.bench.engine = fsio::EngineKind::psync;
  else if (v == "libaio" || v == "posixaio") {
    j.bench.engine = fsio::EngineKind::uring;
    j.notes.push_back("ioengine=" + v + " runs on io_uring: ddbench has no " + v +
                      " engine; both keep iodepth requests in flight on one thread");
  } else if (v == "sync") {
    j.bench.engine = fsio::EngineKind::psync;
    j.notes.push_back("ioengine=sync runs as psync: pread/pwrite at each offset, the same I/O without fio's lseek");
  } else {
    return bad(
        l,
        "ddbench has the io_uring, psync (also pvsync, pvsync2), sync, libaio, posixaio, null, ftruncate, filecreate, "
        "filestat, filedelete, cpuio, exec and net engines");
  }
  return {};
}

fsio::Status apply_distribution(FioJob& j, const FioLine& l) {
  auto d = parse_random_distribution(l.value);
  if (!d) return bad(l, why(d.error()));
  j.bench.distribution = *d;
  return {};
}

fsio::Status apply_verify(FioJob& j, const FioLine& l) {
  static const char* const types[] = {"md5",      "crc64",    "crc32c",   "crc32c-intel", "crc32",   "crc16",
                                      "crc7",     "xxhash",   "sha512",   "sha256",       "sha1",    "sha3-224",
                                      "sha3-256", "sha3-384", "sha3-512", "meta",         "pattern", "1"};
  if (!l.has_value || l.value.empty()) {
    j.bench.verify = true;
    return {};
  }
  if (l.value == "0" || l.value == "none") {
    j.bench.verify = false;
    return {};
  }
  for (const char* t : types)
    if (l.value == t) {
      j.bench.verify = true;
      if (l.value != "1")
        j.notes.push_back(
            "verify=" + l.value +
            " is done with ddbench's own check: every 512-byte sector "
            "stamped with its offset and the seed (data fio wrote does not verify here, nor the reverse)");
      return {};
    }
  return bad(l, "expected a fio verify type (md5, crc32c, sha256, pattern, ...) or 0");
}

fsio::Status apply_sync(FioJob& j, const FioLine& l) {
  if (!l.has_value || l.value == "1" || l.value == "sync" || l.value == "dsync") {
    j.bench.sync = true;
    return {};
  }
  if (l.value == "0" || l.value == "none") {
    j.bench.sync = false;
    return {};
  }
  return bad(l, "expected 0, 1, sync or dsync");
}

std::optional<double> percent_of(std::string_view text) {
  auto n = parse_fio_time(text, 1.0);  // a plain decimal number
  if (!n || text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos || *n > 100)
    return std::nullopt;
  return *n;
}

fsio::Status apply_percentiles(FioJob& j, const FioLine& l) {
  std::vector<double> out;
  std::string_view v = l.value;
  while (!v.empty()) {
    const auto colon = v.find(':');
    const std::string_view item = v.substr(0, colon);
    auto n = percent_of(item);
    if (!n) return bad(l, "expected numbers from 0 to 100 separated by ':'");
    out.push_back(*n);
    v = colon == std::string_view::npos ? std::string_view{} : v.substr(colon + 1);
  }
  if (out.empty() || out.size() > 20) return bad(l, "expected 1 to 20 percentiles");
  std::sort(out.begin(), out.end());
  j.percentiles = out;
  return {};
}

}  // namespace bench::detail

namespace bench::detail {

// fio's verify_pattern (lib/pattern.c parse_and_fill_pattern), in the forms
// that name bytes: 0x hex digits, in order, an odd count padded with a
// leading 0 ("0xaaa" is 0a aa); a decimal number as its little-endian bytes
// (0 is one zero byte); a quoted string's characters. fio's %o (the offset)
// and "A|B" combinations are refused.
fsio::Status apply_verify_pattern(FioJob& j, const FioLine& l) {
  const std::string& v = l.value;
  std::vector<std::byte> out;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    std::string hex = v.substr(2);
    if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return bad(l, "not a hex number");
    if (hex.size() % 2) hex.insert(hex.begin(), '0');
    for (std::size_t i = 0; i < hex.size(); i += 2) out.push_back(std::byte(std::stoul(hex.substr(i, 2), nullptr, 16)));
  } else if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0]) {
    for (char c : v.substr(1, v.size() - 2)) out.push_back(std::byte(c));
  } else if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() <= 10) {
    std::uint64_t n = std::stoull(v);
    if (n > 0x7fffffff) return bad(l, "a decimal pattern must fit fio's int");
    do {
      out.push_back(std::byte(n & 0xff));
      n >>= 8;
    } while (n);
  } else {
    return bad(l, "expected 0x hex digits, a decimal number or a quoted string (fio's %o and A|B are not supported)");
  }
  if (out.empty() || out.size() > 512) return bad(l, "the pattern must be 1 to 512 bytes");
  j.bench.verify_pattern = std::move(out);
  return {};
}

// fio's steadystate=CRITERION:LIMIT.
fsio::Status apply_steadystate(FioJob& j, const FioLine& l) {
  if (auto st = parse_steadystate(l.value, j.kb_base, j.bench.steadystate); !st) return bad(l, why(st.error()));
  return {};
}

// fio's ss_dur: whole seconds (fio truncates its microseconds to them).
fsio::Status apply_ss_duration(FioJob& j, const FioLine& l) {
  const double s = FSIO_TRY(seconds_of(l));
  if (s >= 86400) return bad(l, "must be under a day");
  j.bench.steadystate.duration_s = unsigned(s);
  return {};
}

fsio::Status apply_max_latency(FioJob& j, const FioLine& l) {
  std::string_view v = l.value;
  std::array<std::uint64_t, bench_dirs> ns{};
  for (unsigned d = 0; d < bench_dirs && !v.empty(); ++d) {
    const auto comma = v.find(',');
    const std::string_view part = v.substr(0, comma);
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    if (part.empty()) continue;
    auto s = parse_fio_time(part, 1e-6);
    if (!s) return bad(l, why(s.error()));
    ns[d] = std::uint64_t(*s * 1e9 + 0.5);
  }
  if (l.value.find(',') == std::string::npos) ns[dir_write] = ns[dir_trim] = ns[dir_read];  // one for all, as fio
  j.bench.max_latency_ns = ns;
  return {};
}

}  // namespace bench::detail
