// fio's verify_backlog (fio HOWTO: "fio will write only N blocks before
// verifying these blocks"): the writes of the measured pass are noted as
// they complete (fio's io_hist), and once verify_backlog of them have, the
// pass stops issuing, lets what is in flight finish, and reads the noted
// blocks back and checks them before it goes on. What is left at the end
// is checked then, so no separate read-back pass follows.
//
// The check's reads go straight to the device with pread, one block at a
// time, outside the engine; as fio counts its verify reads, each is one of
// the job's reads (its time the request's completion latency).
#include <unistd.h>

#include <cerrno>

#include "cmd/bench/runner.hpp"
#include "libfsio/size.hpp"

namespace bench::detail {

void Runner::note_backlog(const Slot& s) {
  if (!o_.verify_backlog || !spec_->stamp || !res_->verify) return;
  backlog_.emplace_back(s.offset, s.want);
}

fsio::Status Runner::check_backlog() {
  if (backlog_buf_.size() < o_.max_bs()) backlog_buf_ = fsio::AlignedBuffer(std::size_t(o_.max_bs()));
  VerifyResult& v = *res_->verify;
  for (const auto& [offset, want] : backlog_) {
    const std::span<std::byte> got{backlog_buf_.data(), std::size_t(want)};
    const std::uint64_t t0 = now_ns();
    const ssize_t n = ::pread(dev_.fd(), got.data(), got.size(), off_t(dev_.offset() + offset));
    const std::uint64_t t1 = now_ns();
    const std::string ctx = "verify_backlog: read " + std::to_string(want) + " bytes at " + fsio::format_hex(offset);
    if (n < 0) return dev_.error(fsio::errno_error(errno, ctx));
    if (std::uint64_t(n) != want) return dev_.error(fsio::make_error(fsio::Errc::io, ctx + ": unexpected end of file"));
    if (spec_->measured && !ramping_) {  // one of the job's reads, its pread the completion
      count(dir_read, want, 1, t1 - t0, 0);
      res_->backlog_reads = true;
    }
    v.bytes_checked += want;
    if (auto m = check_pattern(got, offset, o_.seed, o_.verify_pattern)) {
      ++v.bad_blocks;
      if (!v.first || m->offset < v.first->offset) v.first = *m;
      if (o_.verify_dump) dump_bad_block(got, offset, v);
      if (o_.verify_fatal) {
        stop_ = true;  // fio verify_fatal: no request issued after the first bad one
        break;
      }
    }
  }
  backlog_.clear();
  t_last_ = now_ns();
  check_clock(t_last_);
  return {};
}

}  // namespace bench::detail
