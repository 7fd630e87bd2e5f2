// The fault-injecting engine: power loss and bad sectors on demand.
//
// It sits between IoQueue and a real engine and counts write requests as the
// device would see them (after merging). The Nth write either fails outright
// (-EIO, nothing written) or is torn: its first tear_bytes, rounded down to
// the 512-byte sector, go to the disk through the inner engine and the
// request then completes with -EIO, which is what a drive losing power
// mid-request can leave behind. With `crash`, every later write and flush
// fails without touching the disk, so tests can check what a crash at that
// write leaves on the device. Reads pass through, except the Nth one in
// read_fail mode (a bad sector once) and, in bad_range mode, every read that
// touches the range (sectors that stay unreadable, as a scan must find them).
// In sigint and read_sigint mode nothing fails: the process raises SIGINT as
// the Nth write or read is queued, so a test's Ctrl-C lands at a known point
// of the work however fast the machine is.
//
// Completions come back in the order the requests failed: the injected one
// before those the crash failed after it (a torn request's synthesized
// successors wait until its prefix has been written and reaped), so the
// first error a caller sees is the injected write's.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <deque>
#include <vector>

#include "libfsio/engine.hpp"

namespace fsio {
namespace {

class FaultEngine final : public Engine {
 public:
  FaultEngine(std::unique_ptr<Engine> inner, const FaultSpec& spec) : inner_(std::move(inner)), spec_(spec) {}

  const char* name() const override { return inner_->name(); }
  unsigned depth() const override { return inner_->depth(); }
  unsigned in_flight() const override { return inner_->in_flight() + unsigned(pending_.size() + failed_.size()); }
  std::uint64_t syscalls() const override { return inner_->syscalls(); }

  Status queue(const IoRequest& req) override {
    if (in_flight() >= depth()) return make_error(Errc::busy, "fault engine queue full");
    if (spec_.raises_sigint()) {
      const IoOp counted = spec_.kind == FaultSpec::Kind::read_sigint ? IoOp::read : IoOp::write;
      std::uint64_t& seen = counted == IoOp::read ? reads_ : writes_;
      if (req.op == counted && ++seen == spec_.nth_write) std::raise(SIGINT);
      return inner_->queue(req);
    }
    if (req.op == IoOp::read) {
      if ((spec_.kind == FaultSpec::Kind::read_fail && ++reads_ == spec_.nth_write) || in_bad_range(req)) {
        pending_.push_back({req.user_data, -EIO});
        return {};
      }
      return inner_->queue(req);
    }
    if (crashed_) {
      pending_.push_back({req.user_data, -EIO});
      return {};
    }
    if (req.op == IoOp::flush) return inner_->queue(req);

    if (spec_.kind == FaultSpec::Kind::read_fail || spec_.kind == FaultSpec::Kind::bad_range ||
        ++writes_ != spec_.nth_write)
      return inner_->queue(req);
    crashed_ = spec_.crash;
    if (spec_.kind == FaultSpec::Kind::fail) {
      pending_.push_back({req.user_data, -EIO});
      return {};
    }
    return queue_torn(req);
  }

  Result<unsigned> commit() override {
    // Synthesized completions count as submitted once the batch is committed.
    unsigned n = unsigned(pending_.size());
    failed_.insert(failed_.end(), pending_.begin(), pending_.end());
    pending_.clear();
    return n + FSIO_TRY(inner_->commit());
  }

  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override {
    unsigned got = 0;
    if (torn_active_) {
      // Nothing synthesized after the tear may overtake it.
      got = FSIO_TRY(reap_inner(out, std::min(min_complete, inner_->in_flight())));
      if (torn_active_) return got;
    }
    while (got < out.size() && !failed_.empty()) {
      out[got++] = failed_.front();
      failed_.pop_front();
    }
    unsigned need = min_complete > got ? min_complete - got : 0;
    if (need > inner_->in_flight()) need = inner_->in_flight();
    if (got == out.size() || inner_->in_flight() == 0) return got;
    return got + FSIO_TRY(reap_inner(out.subspan(got), need));
  }

 private:
  bool in_bad_range(const IoRequest& req) const {
    return spec_.kind == FaultSpec::Kind::bad_range && req.offset < spec_.bad_offset + spec_.bad_bytes &&
           spec_.bad_offset < req.offset + req.bytes;
  }

  // Reaps from the inner engine, failing the torn request when it comes.
  Result<unsigned> reap_inner(std::span<IoCompletion> out, unsigned min_complete) {
    const unsigned n = FSIO_TRY(inner_->reap(out, min_complete));
    for (unsigned i = 0; i < n; ++i) {
      if (torn_active_ && out[i].user_data == torn_user_data_) {
        // The prefix is on the disk (or the inner write failed on its own);
        // either way the caller must see the request as failed.
        out[i].result = -EIO;
        torn_active_ = false;
      }
    }
    return n;
  }

  Status queue_torn(const IoRequest& req) {
    std::uint64_t keep = spec_.tear_bytes != 0 ? spec_.tear_bytes : req.bytes / 2;
    if (keep > req.bytes) keep = req.bytes;
    keep &= ~std::uint64_t(511);
    if (keep == 0) {
      // Less than a sector survives: nothing reaches the disk.
      pending_.push_back({req.user_data, -EIO});
      return {};
    }
    // The inner engine needs an iovec list covering only the prefix; it must
    // live until the request is reaped, so it is a member.
    torn_iov_.clear();
    std::uint64_t left = keep;
    for (unsigned i = 0; i < req.iovcnt && left > 0; ++i) {
      iovec v = req.iov[i];
      if (v.iov_len > left) v.iov_len = left;
      left -= v.iov_len;
      torn_iov_.push_back(v);
    }
    IoRequest torn = req;
    torn.iov = torn_iov_.data();
    torn.iovcnt = unsigned(torn_iov_.size());
    torn.bytes = keep;
    torn_active_ = true;
    torn_user_data_ = req.user_data;
    return inner_->queue(torn);
  }

  std::unique_ptr<Engine> inner_;
  FaultSpec spec_;
  std::uint64_t writes_ = 0;
  std::uint64_t reads_ = 0;
  bool crashed_ = false;
  std::vector<IoCompletion> pending_;  // synthesized, not yet committed
  std::deque<IoCompletion> failed_;    // synthesized, committed, not yet reaped (in order)
  std::vector<iovec> torn_iov_;
  bool torn_active_ = false;
  std::uint64_t torn_user_data_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_fault_engine(std::unique_ptr<Engine> inner, const FaultSpec& spec) {
  return std::make_unique<FaultEngine>(std::move(inner), spec);
}

}  // namespace fsio
