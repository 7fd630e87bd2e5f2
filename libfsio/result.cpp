#include "libfsio/result.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fsio {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::not_found: return "not found";
    case Errc::corrupt: return "corrupt";
    case Errc::unsupported: return "unsupported";
    case Errc::io: return "I/O error";
    case Errc::busy: return "busy";
    case Errc::interrupted: return "interrupted";
  }
  return "unknown";
}

std::string Error::message() const {
  std::string msg = path;
  auto add = [&msg](const std::string& part) {
    if (part.empty()) return;
    if (!msg.empty()) msg += ": ";
    msg += part;
  };
  add(context);
  if (sys_errno != 0) add(std::strerror(sys_errno));
  return msg;
}

Error Error::wrap(const std::string& outer) && {
  if (outer.empty()) return std::move(*this);
  context = context.empty() ? outer : outer + ": " + context;
  return std::move(*this);
}

Error Error::at(const std::string& where) && {
  if (path.empty()) path = where;
  return std::move(*this);
}

Error Error::with_note(const std::string& note) && {
  if (sys_errno != 0) {
    context = context.empty() ? std::strerror(sys_errno) : context + ": " + std::strerror(sys_errno);
    sys_errno = 0;
  }
  context += note;
  return std::move(*this);
}

Error make_error(Errc code, std::string context) { return Error{code, 0, std::move(context)}; }

Error errno_error(int err, std::string context) {
  Errc code = Errc::io;
  switch (err) {
    case ENOENT:
    case ENXIO:
    case ENODEV: code = Errc::not_found; break;
    case EBUSY:
    case ETXTBSY: code = Errc::busy; break;
    case EINVAL: code = Errc::invalid_argument; break;
    case EOPNOTSUPP:
    case ENOSYS: code = Errc::unsupported; break;
    case EINTR: code = Errc::interrupted; break;
    default: break;
  }
  return Error{code, err, std::move(context)};
}

Error errno_error(std::string context) { return errno_error(errno, std::move(context)); }

void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "fsio: internal error: %s:%d: assertion failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace fsio
