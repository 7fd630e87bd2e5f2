// fio's error options: continue_on_error (which kinds of failed request a
// job goes on after), ignore_error (the errnos it goes on after, per kind)
// and error_dump (say each one on stderr). fio 3.33 options.c and
// td_error.c, in our words: a failed read counts as a read error, any other
// request (a write, a trim) as a write error, a verify mismatch as a verify
// error; a kind without an ignore list goes on after EIO and EILSEQ, and an
// ignore list turns its kind on.
#include <cerrno>
#include <utility>

#include "cmd/bench/fio_option_values.hpp"

namespace bench::detail {
namespace {

// The names fio's str2error knows; any other errno is given by number.
int errno_named(std::string_view name) {
  static const std::pair<const char*, int> names[] = {
      {"EPERM", EPERM},     {"ENOENT", ENOENT}, {"ESRCH", ESRCH},     {"EINTR", EINTR},   {"EIO", EIO},
      {"ENXIO", ENXIO},     {"E2BIG", E2BIG},   {"ENOEXEC", ENOEXEC}, {"EBADF", EBADF},   {"ECHILD", ECHILD},
      {"EAGAIN", EAGAIN},   {"ENOMEM", ENOMEM}, {"EACCES", EACCES},   {"EFAULT", EFAULT}, {"ENOTBLK", ENOTBLK},
      {"EBUSY", EBUSY},     {"EEXIST", EEXIST}, {"EXDEV", EXDEV},     {"ENODEV", ENODEV}, {"ENOTDIR", ENOTDIR},
      {"EISDIR", EISDIR},   {"EINVAL", EINVAL}, {"ENFILE", ENFILE},   {"EMFILE", EMFILE}, {"ENOTTY", ENOTTY},
      {"ETXTBSY", ETXTBSY}, {"EFBIG", EFBIG},   {"ENOSPC", ENOSPC},   {"ESPIPE", ESPIPE}, {"EROFS", EROFS},
      {"EMLINK", EMLINK},   {"EPIPE", EPIPE},   {"EDOM", EDOM},       {"ERANGE", ERANGE}};
  for (const auto& [n, e] : names)
    if (name == n) return e;
  return 0;
}

// ddbench reports verify mismatches in its own way (every one counted, the
// job's exit status 1; verify_fatal stops at the first), not as errors.
constexpr const char* verify_refusal =
    "going on after a verify mismatch is not supported (ddbench counts every mismatch and exits 1; "
    "verify_fatal stops at the first)";

}  // namespace

fsio::Status apply_continue_on_error(FioJob& j, const FioLine& l) {
  static const std::pair<const char*, unsigned> kinds[] = {{"none", 0},
                                                           {"0", 0},
                                                           {"read", error_read},
                                                           {"write", error_write},
                                                           {"io", error_read | error_write},
                                                           {"verify", error_verify},
                                                           {"all", error_read | error_write | error_verify},
                                                           {"1", error_read | error_write | error_verify}};
  for (const auto& [name, mask] : kinds)
    if (l.value == name) {
      if (mask & error_verify) return bad(l, verify_refusal);
      j.bench.errors.continue_mask = mask;
      j.bench.errors.given = true;
      return {};
    }
  return bad(l, "expected none, read, write, io, verify or all");
}

// "READS[,WRITES[,VERIFY]]", each a ':'-separated list of errno names or numbers.
fsio::Status apply_ignore_error(FioJob& j, const FioLine& l) {
  ErrorPolicy& p = j.bench.errors;
  std::string_view v = l.value;
  for (unsigned kind = 0; kind < 3 && !v.empty(); ++kind) {
    const auto comma = v.find(',');
    std::string_view list = v.substr(0, comma);
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    std::vector<int> errs;
    while (!list.empty()) {
      const auto colon = list.find(':');
      const std::string_view e = list.substr(0, colon);
      list = colon == std::string_view::npos ? std::string_view{} : list.substr(colon + 1);
      const auto n = e.starts_with('E') ? errno_named(e) : int(parse_fio_uint(e, 1, 4095).value_or(0));
      if (n == 0) return bad(l, "unknown error '" + std::string(e) + "' (give its number)");
      errs.push_back(n);
    }
    if (errs.empty()) continue;
    if (kind == 2) return bad(l, verify_refusal);
    p.ignore[kind] = std::move(errs);
    p.continue_mask |= 1u << kind;
    p.given = true;
  }
  return {};
}

fsio::Status apply_error_dump(FioJob& j, const FioLine& l) {
  j.bench.errors.dump = FSIO_TRY(bool_of(l));
  return {};
}

}  // namespace bench::detail
