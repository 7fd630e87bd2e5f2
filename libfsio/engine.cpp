// Engine selection and the FSIO_FAULT environment variable.
#include "libfsio/engine.hpp"

#include <sys/stat.h>

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace fsio {

Result<EngineKind> parse_engine_kind(const std::string& name) {
  if (name == "uring" || name == "io_uring") return EngineKind::uring;
  if (name == "psync" || name == "sync") return EngineKind::psync;
  if (name == "auto" || name == "automatic") return EngineKind::automatic;
  return make_error(Errc::invalid_argument, "engine '" + name + "': expected uring, psync or auto");
}

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    auto pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Error bad_fault(std::string_view text, const char* why) {
  return make_error(
      Errc::invalid_argument,
      "FSIO_FAULT='" + std::string(text) + "': " + why +
          " (expected fail:N, tear:N or tear:N:BYTES, optionally :nocrash, readfail:N, badrange:OFFSET:BYTES, "
          "sigint:N or readsigint:N)");
}

// FSIO_FAULT_PATH names the one file or device FSIO_FAULT is for: the fd
// is it when both are the same block device (st_rdev) or the same file
// (st_dev and st_ino), by whatever path it was opened.
bool fault_aims_at(int fd) {
  const char* path = std::getenv("FSIO_FAULT_PATH");
  if (path == nullptr || *path == '\0') return true;
  struct stat want {
  }, have{};
  if (::stat(path, &want) != 0 || ::fstat(fd, &have) != 0) return false;
  if (S_ISBLK(want.st_mode) || S_ISBLK(have.st_mode)) return S_ISBLK(have.st_mode) && have.st_rdev == want.st_rdev;
  return have.st_dev == want.st_dev && have.st_ino == want.st_ino;
}

}  // namespace

Result<std::optional<FaultSpec>> fault_spec_from_env() {
  const char* env = std::getenv("FSIO_FAULT");
  if (env == nullptr || *env == '\0') return std::optional<FaultSpec>{};
  std::string_view text(env);
  auto parts = split(text, ':');

  FaultSpec spec;
  if (parts.back() == "nocrash") {
    spec.crash = false;
    parts.pop_back();
  }
  if (parts.size() < 2) return bad_fault(text, "missing the request number");
  if (parts[0] == "fail") {
    spec.kind = FaultSpec::Kind::fail;
    if (parts.size() != 2) return bad_fault(text, "fail takes only a write number");
  } else if (parts[0] == "tear") {
    spec.kind = FaultSpec::Kind::tear;
    if (parts.size() > 3) return bad_fault(text, "too many fields");
  } else if (parts[0] == "readfail") {
    spec.kind = FaultSpec::Kind::read_fail;
    spec.crash = false;
    if (parts.size() != 2 || text.ends_with(":nocrash")) return bad_fault(text, "readfail takes only a read number");
  } else if (parts[0] == "sigint" || parts[0] == "readsigint") {
    spec.kind = parts[0] == "sigint" ? FaultSpec::Kind::sigint : FaultSpec::Kind::read_sigint;
    spec.crash = false;
    if (parts.size() != 2 || text.ends_with(":nocrash"))
      return bad_fault(text, spec.kind == FaultSpec::Kind::sigint ? "sigint takes only a write number"
                                                                  : "readsigint takes only a read number");
  } else if (parts[0] == "badrange") {
    spec.kind = FaultSpec::Kind::bad_range;
    spec.crash = false;
    if (parts.size() != 3 || text.ends_with(":nocrash")) return bad_fault(text, "badrange takes OFFSET:BYTES");
    if (!parse_u64(parts[1], spec.bad_offset) || !parse_u64(parts[2], spec.bad_bytes) || spec.bad_bytes == 0 ||
        spec.bad_offset > UINT64_MAX - spec.bad_bytes)
      return bad_fault(text, "OFFSET and BYTES must be integers, BYTES >= 1, their sum below 2^64");
    return std::optional<FaultSpec>{spec};
  } else {
    return bad_fault(text, "unknown fault kind");
  }
  if (!parse_u64(parts[1], spec.nth_write) || spec.nth_write == 0)
    return bad_fault(text, "the request number must be an integer >= 1");
  if (parts.size() == 3 && !parse_u64(parts[2], spec.tear_bytes))
    return bad_fault(text, "the torn byte count must be an integer");
  return std::optional<FaultSpec>{spec};
}

std::string describe(const FaultSpec& spec) {
  const std::string n = std::to_string(spec.nth_write);
  switch (spec.kind) {
    case FaultSpec::Kind::read_fail: return "read request " + n + " fails with an injected I/O error";
    case FaultSpec::Kind::sigint: return "SIGINT is raised as write request " + n + " is queued, as if Ctrl-C";
    case FaultSpec::Kind::read_sigint: return "SIGINT is raised as read request " + n + " is queued, as if Ctrl-C";
    case FaultSpec::Kind::bad_range:
      return "every read of bytes " + std::to_string(spec.bad_offset) + " to " +
             std::to_string(spec.bad_offset + spec.bad_bytes) + " fails with an injected I/O error";
    case FaultSpec::Kind::fail:
      return "write request " + n + " fails with an injected I/O error" +
             (spec.crash ? ", and every write and flush after it, as if power was lost there" : "");
    case FaultSpec::Kind::tear:
      return "write request " + n + " is torn (" +
             (spec.tear_bytes ? std::to_string(spec.tear_bytes / 512 * 512) + " bytes" : std::string("half")) +
             " reach the disk) and fails" +
             (spec.crash ? ", and every write and flush after it, as if power was lost there" : "");
  }
  return "?";
}

Result<std::optional<EngineKind>> engine_kind_from_env() {
  const char* env = std::getenv("FSIO_ENGINE");
  if (env == nullptr || *env == '\0') return std::optional<EngineKind>{};
  auto kind = parse_engine_kind(env);
  if (!kind) return std::move(kind).error().wrap("FSIO_ENGINE");
  return std::optional<EngineKind>{*kind};
}

Result<std::unique_ptr<Engine>> make_engine(EngineKind kind, int fd, unsigned depth) {
  // Parse the environment first: a malformed variable must fail before any I/O.
  auto fault = FSIO_TRY(fault_spec_from_env());
  if (kind == EngineKind::automatic) kind = FSIO_TRY(engine_kind_from_env()).value_or(EngineKind::automatic);

  std::unique_ptr<Engine> engine;
  switch (kind) {
    case EngineKind::psync: engine = make_sync_engine(fd, depth); break;
    case EngineKind::uring: engine = FSIO_TRY(make_uring_engine(fd, depth)); break;
    case EngineKind::automatic: {
      // io_uring may be disabled (sysctl kernel.io_uring_disabled, seccomp in
      // containers, old kernels); psync gives the same results, only slower.
      auto uring = make_uring_engine(fd, depth);
      engine = uring ? std::move(uring).value() : make_sync_engine(fd, depth);
      break;
    }
  }
  if (fault && fault_aims_at(fd)) engine = make_fault_engine(std::move(engine), *fault);
  return engine;
}

Result<std::vector<std::string>> environment_overrides() {
  std::vector<std::string> notes;
  if (auto fault = FSIO_TRY(fault_spec_from_env())) {
    notes.push_back(
        "FSIO_FAULT=" + std::string(std::getenv("FSIO_FAULT")) +
        " is set: test fault injection is on: " + describe(*fault) +
        (fault->raises_sigint() ? "; that interrupt is not the user's" : "; such errors are not the disk's"));
  }
  if (const char* path = std::getenv("FSIO_FAULT_PATH"); path && *path)
    notes.push_back("FSIO_FAULT_PATH=" + std::string(path) + " is set: FSIO_FAULT applies only to " + path);
  if (auto kind = FSIO_TRY(engine_kind_from_env()))
    notes.push_back("FSIO_ENGINE=" + std::string(std::getenv("FSIO_ENGINE")) +
                    " is set: it chooses the I/O engine wherever the engine is left automatic");
  return notes;
}

}  // namespace fsio
