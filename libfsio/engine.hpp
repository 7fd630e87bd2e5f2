// I/O engines: the fio engine contract (engines/io_uring.c, engines/sync.c).
//
//   queue(req)  -> Errc::busy when depth() requests are queued or in flight
//   commit()    -> submit everything queued (io_uring: one io_uring_submit)
//   reap(out,n) -> wait for at least n completions, collect up to out.size()
//
// A completion carries the bytes transferred or -errno. Engines neither
// merge nor retry: IoQueue does that above them, so every engine sees the
// same merged requests. Offsets here are absolute file offsets. The iovecs
// and the memory they point to must stay valid until the request is reaped.
// An engine is used by one thread; the io_uring engine binds its ring
// (IORING_SETUP_SINGLE_ISSUER) to the thread of its first commit(), so it may
// be created on another thread but not passed around after first use.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace fsio {

enum class IoOp : std::uint8_t { read, write, flush };

struct IoRequest {
  IoOp op = IoOp::read;
  std::uint64_t offset = 0;
  const iovec* iov = nullptr;
  unsigned iovcnt = 0;
  std::uint64_t bytes = 0;  // sum of iov lengths
  bool dsync = false;       // RWF_DSYNC on this write (REQ_SYNC)
  bool datasync = true;     // IoOp::flush: fdatasync; false: fsync (metadata too)
  // The request's I/O priority, the kernel's class << 13 | level
  // (linux/ioprio.h), 0: the submitting thread's own. The io_uring engine
  // sends it with the request (sqe->ioprio); psync's requests run at the
  // thread's priority (ioprio_set), so they ignore it.
  std::uint16_t ioprio = 0;
  std::uint64_t user_data = 0;
};

struct IoCompletion {
  std::uint64_t user_data = 0;
  std::int64_t result = 0;  // bytes transferred, or -errno
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  virtual unsigned depth() const = 0;
  virtual unsigned in_flight() const = 0;  // queued + submitted, not yet reaped
  virtual Status queue(const IoRequest& req) = 0;
  virtual Result<unsigned> commit() = 0;  // returns the submitted count
  virtual Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) = 0;
  virtual std::uint64_t syscalls() const = 0;  // submit/wait/preadv/pwritev calls so far
};

// An engine that carries each request out when it is committed and hands
// the completions out at reap(): the psync engine, and ddbench's null and
// ftruncate engines. A subclass says only how one request is carried out
// (and counts its system calls in syscalls_).
class InlineEngine : public Engine {
 public:
  InlineEngine(const char* name, unsigned depth) : name_(name), depth_(depth == 0 ? 1 : depth) {}
  const char* name() const override { return name_; }
  unsigned depth() const override { return depth_; }
  unsigned in_flight() const override { return unsigned(queued_.size() + done_.size()); }
  std::uint64_t syscalls() const override { return syscalls_; }
  Status queue(const IoRequest& req) override;
  Result<unsigned> commit() override;
  // Everything committed has already completed. Like io_uring, a reap that
  // needs more than that carries out what is still queued; asking for more
  // than was ever queued would hang io_uring, so it is a bug here too.
  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override;

 protected:
  // The request's result: the bytes it moved (0 for a flush), or -errno.
  virtual std::int64_t carry_out(const IoRequest& req) = 0;
  std::uint64_t syscalls_ = 0;

 private:
  const char* name_;
  unsigned depth_;
  std::vector<IoRequest> queued_;
  std::deque<IoCompletion> done_;
};

enum class EngineKind { automatic, uring, psync };

Result<EngineKind> parse_engine_kind(const std::string& name);  // "uring", "io_uring", "psync", "sync", "auto"

// io_uring through liburing; Errc::unsupported when the kernel refuses a ring.
Result<std::unique_ptr<Engine>> make_uring_engine(int fd, unsigned depth);
// preadv2/pwritev2 per request at commit(), completions handed out at reap().
std::unique_ptr<Engine> make_sync_engine(int fd, unsigned depth);

// Fault injection for tests: the Nth write request (1-based, counted at the
// engine, i.e. after merging) fails with EIO, or is torn: only its first
// `tear_bytes` (rounded down to 512) reach the disk and it then fails. With
// `crash`, every later write and flush fails too without touching the disk,
// as if power was lost at that write; the injected request's failure is
// always reaped before those, so the first error a caller sees names the
// injected write's offset. `read_fail` fails the Nth read request instead
// (a bad sector); nothing else is affected.
struct FaultSpec {
  // sigint and read_sigint raise SIGINT as the Nth write or read is queued
  // and let it through: a Ctrl-C that lands at a known point of the work.
  enum class Kind { fail, tear, read_fail, bad_range, sigint, read_sigint };
  std::uint64_t nth_write = 1;  // the Nth write, or with read_fail and read_sigint the Nth read
  Kind kind = Kind::fail;
  std::uint64_t tear_bytes = 0;  // 0: half the request
  bool crash = true;
  // bad_range: every read that touches [bad_offset, bad_offset + bad_bytes)
  // of the file descriptor fails, every time, as unreadable sectors do.
  std::uint64_t bad_offset = 0;
  std::uint64_t bad_bytes = 0;
  bool raises_sigint() const { return kind == Kind::sigint || kind == Kind::read_sigint; }
};

// Reads FSIO_FAULT="fail:N", "tear:N", "tear:N:BYTES" (optional ":nocrash"
// suffix), "readfail:N", "badrange:OFFSET:BYTES" (byte offsets of the file
// descriptor), "sigint:N" or "readsigint:N". nullopt when unset; Errc::invalid_argument when malformed.
Result<std::optional<FaultSpec>> fault_spec_from_env();
std::unique_ptr<Engine> make_fault_engine(std::unique_ptr<Engine> inner, const FaultSpec& spec);

// "write request 3 fails with an injected I/O error, and every write and
// flush after it, as if power was lost there": for the tools' notice.
std::string describe(const FaultSpec& spec);

// Reads FSIO_ENGINE ("psync", "uring", "auto"): the engine to use where a
// tool leaves the choice to make_engine (EngineKind::automatic), so a whole
// test suite can run on the sync engine. nullopt when unset.
Result<std::optional<EngineKind>> engine_kind_from_env();

// The engine a tool should use: uring if it works (automatic falls back to
// psync, saying nothing; asking for uring explicitly makes a failure an
// error), wrapped in the fault engine when FSIO_FAULT is set and, if
// FSIO_FAULT_PATH is set too, fd is that file or block device (by any path:
// a test aims the fault at one of several targets). FSIO_ENGINE
// replaces `automatic` (an explicit kind wins over the environment).
Result<std::unique_ptr<Engine>> make_engine(EngineKind kind, int fd, unsigned depth);

// One sentence per test override set in the environment (FSIO_FAULT,
// FSIO_ENGINE), which every tool prints on stderr before it does anything:
// an injected error must never be taken for a failing disk. Errc::
// invalid_argument, naming the variable, when one is malformed.
Result<std::vector<std::string>> environment_overrides();

}  // namespace fsio
