// Result<T> and Error: the error taxonomy every fsio library function uses.
//
// Library code never prints, exits or throws for an expected failure; it
// returns Result<T>. The member names follow std::expected (has_value, value,
// error, value_or) so that moving to C++23 later is an alias, except that an
// Error converts to a failed Result implicitly (no std::unexpected wrapper).
// Broken invariants abort (FSIO_ASSERT), they are not Results.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace fsio {

// A small fixed taxonomy, after LevelDB's Status.
enum class Errc {
  invalid_argument,  // the caller asked for something impossible (usage)
  not_found,         // a file, device or name does not exist
  corrupt,           // on-disk data fails a check
  unsupported,       // valid, but a feature we refuse to handle
  io,                // the kernel said no to a read/write/ioctl
  busy,              // mounted, in use, or holds data we refuse to destroy
  interrupted,       // SIGINT/SIGTERM stopped the work cleanly
};

const char* errc_name(Errc code);

// Where, what and why, as LevelDB's PosixError(filename, errno) says them:
// "card.img: read FAT copy 1: read 512 bytes at 0x200: Input/output error"
// is path, then context (outermost first), then strerror(sys_errno).
//
// Device and IoQueue set `path` on every error they return, with the offset
// and size in the context. A caller adds the step it was doing with wrap()
// (FSIO_TRY_CTX), which goes after the path, never before it. Code that
// refuses a device's contents (a corrupt boot sector, a geometry that does
// not fit) names the device with at(), which leaves an error that already
// names one as it is: the path is said once however many layers add it.
// An error about something else (a source file, a list file, an option)
// says its own name in its context and leaves `path` empty.
struct Error {
  Error() = default;
  Error(Errc code_, int sys_errno_, std::string context_, std::string path_ = {})
      : code(code_), sys_errno(sys_errno_), context(std::move(context_)), path(std::move(path_)) {}

  Errc code = Errc::io;
  int sys_errno = 0;    // errno when the kernel gave one, else 0
  std::string context;  // "write 4096 bytes at 0x100000" ... outermost first
  std::string path;     // the device or image it happened on; empty when none

  // "path: context: strerror(errno)", each part only when present.
  std::string message() const;

  // Prefix more context, after the path: err.wrap("write FAT") ->
  // "card.img: write FAT: <old context>".
  Error wrap(const std::string& outer) &&;
  // Names the device or image the error is about, unless it names one
  // already (the innermost, where it happened, wins).
  Error at(const std::string& where) &&;
  // Adds a note after the whole message, strerror included ("...: No space
  // left on device; removed card.img, which -C had made"): errno becomes
  // part of the text (sys_errno 0), the path stays where it is.
  Error with_note(const std::string& note) &&;
};

Error make_error(Errc code, std::string context);
// An Error from errno (captures errno at the call); code is io unless the
// errno maps to a better one (ENOENT -> not_found, EBUSY -> busy, ...).
Error errno_error(std::string context);
Error errno_error(int err, std::string context);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  template <class U>
  T value_or(U&& other) const& {
    return has_value() ? std::get<0>(v_) : T(std::forward<U>(other));
  }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  void check() const {
    if (!has_value()) std::abort();
  }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const {
    if (!ok_) std::abort();
  }
  const Error& error() const& { return err_; }
  Error&& error() && { return std::move(err_); }

 private:
  Error err_{};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace fsio

// Propagate a failure, else yield the value: `auto dev = FSIO_TRY(Device::open(p, o));`
// Works for Result<void> too (as a statement). GNU statement expression; g++ and
// clang both support it and __extension__ keeps -Wpedantic quiet.
#define FSIO_TRY(expr)                                                             \
  __extension__({                                                                  \
    auto&& fsio_try_result_ = (expr);                                              \
    if (!fsio_try_result_.has_value()) return std::move(fsio_try_result_).error(); \
    std::move(fsio_try_result_).value();                                           \
  })

// Like FSIO_TRY, but wraps the error with the step the caller was doing
// first ("read FAT copy 1"); ctx is built only on failure.
#define FSIO_TRY_CTX(expr, ctx)                                                              \
  __extension__({                                                                            \
    auto&& fsio_try_result_ = (expr);                                                        \
    if (!fsio_try_result_.has_value()) return std::move(fsio_try_result_).error().wrap(ctx); \
    std::move(fsio_try_result_).value();                                                     \
  })

// Like FSIO_TRY, but names the device or image the error is about first
// (Error::at), unless the error names one already: for a refusal of what a
// device holds or is asked to hold ("card.img: FAT12 allows at most ...").
#define FSIO_TRY_AT(expr, where)                                                             \
  __extension__({                                                                            \
    auto&& fsio_try_result_ = (expr);                                                        \
    if (!fsio_try_result_.has_value()) return std::move(fsio_try_result_).error().at(where); \
    std::move(fsio_try_result_).value();                                                     \
  })

// A broken invariant: a bug, not an input problem.
#define FSIO_ASSERT(cond)                                        \
  do {                                                           \
    if (!(cond)) ::fsio::assert_fail(#cond, __FILE__, __LINE__); \
  } while (0)

namespace fsio {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);
}
