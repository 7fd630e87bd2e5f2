// One pass of the runner: fill, commit, reap until the workload is done, the
// runtime is up or a signal arrives; then what completed, per direction.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>
#include <cinttypes>
#include <cstdio>

#include "cmd/bench/runner.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace bench::detail {

using fsio::Errc;
using fsio::errno_error;
using fsio::make_error;

namespace {
constexpr std::uint64_t sync_tag = ~std::uint64_t{0};
}  // namespace

void Runner::begin_pass(const PassSpec& spec, BenchResult& res) {
  spec_ = &spec;
  res_ = &res;
  stats_ = spec.measured ? &res.stats : &scratch_;
  scratch_ = fsio::IoStats{};
  free_.clear();
  for (unsigned i = o_.iodepth; i-- > 0;) free_.push_back(i);
  round_.clear();
  engine_in_flight_ = 0;
  stop_ = exhausted_ = retry_pending_ = false;
  failure_.reset();
  writes_since_sync_ = 0;
  think_due_ = false;
  taken_ios_ = 0;
  backlog_.clear();
  restarts_seen_ = 0;
  // fio's time_based: the measured pass starts over until the runtime stops it.
  const bool endless = spec.measured && o_.time_based;
  work_.emplace(o_, range_, spec.readback, spec.bytes, endless);
  t0_ = t_last_ = now_ns();
  lat_target_ = spec.measured ? LatencyTarget(o_.latency, depth_, t0_) : LatencyTarget{};
  lat_drain_ = lat_final_ = false;
  ramping_ = spec.measured && o_.ramp_time > 0;
  ramp_end_ = ramping_ ? t0_ + std::uint64_t(o_.ramp_time * 1e9) : 0;
  deadline_ns_ = 0;
  held_ = false;
  rate_gate_.start(o_.rate, o_.min_bs(), t0_, o_.seed);
  if (spec.measured && !ramping_) start_measuring(t0_);
  check_clock(t0_);  // a job another has already ended (exitall) issues nothing
}

void Runner::start_measuring(std::uint64_t t) {
  t0_ = t_last_ = t;
  ramping_ = false;
  deadline_ns_ = o_.runtime > 0 ? t + std::uint64_t(o_.runtime * 1e9) : 0;
  // What the ramp did is not measured (fio zeroes its stats after ramp_time).
  const unsigned peak = engine_in_flight_;
  *stats_ = fsio::IoStats{};
  stats_->peak_in_flight = peak;
  stat_sampler_.start(o_.stat_window_ms, t, o_.rw, &res_->stat_samples);
  log_sampler_.start(o_.log_window_ms, t, o_.rw, &res_->log_samples);
  floor_from_ = t;
  floor_check_ = t + std::uint64_t(o_.rate.cycle_ms) * 1000000;
  floor_bytes_ = floor_ios_ = {};
}

fsio::Status Runner::pass(const PassSpec& spec, BenchResult& res) {
  begin_pass(spec, res);
  const std::uint64_t syscalls0 = engine_->syscalls();
  while (true) {
    const unsigned batch = o_.batch;
    unsigned taken = 0;
    if (!stop_ && !exhausted_ && (batch == 0 || engine_in_flight_ == 0 || free_.size() >= batch)) taken = fill();
    if (auto st = commit_round(); !st) return st;
    if (engine_in_flight_ == 0) {
      if (!stop_ && sync_due()) {
        if (auto st = sync_now(); !st) fail(std::move(st).error());
        continue;
      }
      if (!stop_ && lat_drain_) {
        lat_drain_ = false;
        const std::uint64_t t = now_ns();
        if (std::exchange(lat_final_, false)) restart_stats(t);
        lat_target_.drained(t);
        continue;
      }
      if (!stop_ && think_due_) {
        think();
        continue;
      }
      if (!stop_ && backlog_due()) {
        if (auto st = check_backlog(); !st) fail(std::move(st).error());
        continue;
      }
      // Nothing in flight and nothing taken: the workload is done, or held back.
      if (!stop_ && !exhausted_ && taken > 0) continue;
      if (!stop_ && !exhausted_ && held_) {
        wait_held();
        continue;
      }
      break;
    }
    if (auto st = reap(); !st) return st;
  }
  return finish_pass(syscalls0);
}

fsio::Status Runner::finish_pass(std::uint64_t syscalls0) {
  // What the last backlog left unchecked, as fio's verify phase checks it.
  if (!failure_ && !res_->interrupted && !backlog_.empty())
    if (auto st = check_backlog(); !st) fail(std::move(st).error());
  stats_->syscalls += engine_->syscalls() - syscalls0;
  issued_bytes_ = work_->issued_bytes();
  if (spec_->counted) {
    res_->verify_elapsed = t_last_ > t0_ ? double(t_last_ - t0_) / 1e9 : 0;
    if (!async_) res_->dir[dir_read].lat = res_->dir[dir_read].clat.stats();
  }
  if (spec_->measured) {
    res_->latency_depth = lat_target_.active() ? lat_target_.depth() : o_.iodepth;
    res_->elapsed = !ramping_ && t_last_ > t0_ ? double(t_last_ - t0_) / 1e9 : 0;
    stats_->elapsed_seconds = res_->elapsed;
    if (!async_)
      for (auto& d : res_->dir) d.lat = d.clat.stats();
  }
  if (failure_) return dev_.error(std::move(*failure_));
  return {};
}

fsio::Status Runner::reap() {
  // Without waiting while another batch could go out now (so --batch 1 keeps
  // iodepth in flight, one submit per request, like fio's default); else at
  // least one completion, or with --batch (no merging) enough to free a
  // whole batch, like fio's iodepth_batch_complete_min.
  const unsigned batch = o_.batch;
  const bool more = !stop_ && !exhausted_ && !sync_due() && !backlog_due() && !think_due_ && !lat_drain_ &&
                    !(held_ && (!held_flow_ || o_.flow.sleep_us > 0));
  unsigned min_complete = 1;
  if (more && free_.size() >= std::max(batch, 1u) && engine_in_flight_ < allowed_depth()) min_complete = 0;
  else if (batch > 1 && !merge_ && more && free_.size() < batch)
    min_complete = std::min<unsigned>(unsigned(batch - free_.size()), engine_in_flight_);
  auto got = engine_->reap(comps_, min_complete);
  if (!got) return dev_.error(std::move(got).error());
  const std::uint64_t t = now_ns();
  if ((spec_->measured || spec_->counted) && *got > 0 && !ramping_) res_->depths.add_complete(*got);
  for (unsigned i = 0; i < *got; ++i) handle_completion(comps_[i], t);
  if (*got > 0) t_last_ = t;
  if (spec_->measured && !ramping_) on_latency_step(lat_target_.check(t));
  check_clock(t);
  return {};
}

void Runner::handle_completion(const fsio::IoCompletion& c, std::uint64_t t) {
  const unsigned lead = unsigned(c.user_data);
  Slot& l = slots_[lead];
  --engine_in_flight_;
  const std::int64_t r = c.result;
  if (r < 0 || (r == 0 && l.req_want > 0)) {
    const std::string ctx = std::string(bench_dir_name(l.dir)) + " " + std::to_string(l.req_bytes) + " bytes at " +
                            fsio::format_hex(l.req_offset);
    if (r < 0 && go_on_after(l.dir, int(-r), ctx)) {
      for (unsigned k = 0; k < l.nmembers; ++k) free_.push_back(l.members[k]);
      return;
    }
    fail(r < 0 ? errno_error(int(-r), ctx) : make_error(Errc::io, ctx + ": unexpected end of file"));
    for (unsigned k = 0; k < l.nmembers; ++k) free_.push_back(l.members[k]);
    return;
  }
  const auto done = std::uint64_t(r);
  if (done >= l.req_want || stop_) {
    // Complete (a short read past the want is the tail of an odd target);
    // after a stop a short transfer is counted for what it moved, no retry.
    if (done < l.req_want) {
      for (unsigned k = 0; k < l.nmembers; ++k) free_.push_back(l.members[k]);
      return;
    }
    complete(lead, t);
    return;
  }
  // A short transfer: resubmit the rest from where it stopped.
  std::uint64_t skip = done;
  unsigned first = 0;
  while (skip >= l.iov[first].iov_len) skip -= l.iov[first++].iov_len;
  l.iov[first].iov_base = static_cast<std::byte*>(l.iov[first].iov_base) + skip;
  l.iov[first].iov_len -= skip;
  std::copy(l.iov + first, l.iov + l.iovcnt, l.iov);
  l.iovcnt -= first;
  l.req_offset += done;
  l.req_bytes -= done;
  l.req_want -= done;
  if (auto st = queue_lead(lead, true); !st) fail(std::move(st).error());
  else retry_pending_ = true;
}

// fio's continue_on_error: a request that failed with an errno the job goes
// on after is counted (total_err, first_error), said when error_dump, and
// moved nothing but counts as a request. A read is a read error, anything
// else a write error.
bool Runner::go_on_after(BenchDir dir, int err, const std::string& what) {
  if (!o_.errors.ignorable(dir == dir_read ? error_read : error_write, err)) return false;
  if (res_->total_err++ == 0) res_->first_error = err;
  // fio counts the request in total_ios (and so in its IOPS), its bytes not.
  if (spec_->measured && !ramping_) ++res_->dir[dir].ios;
  if (o_.errors.dump && res_->errors.size() < 100)
    res_->errors.push_back(dev_.error(fsio::errno_error(err, what)).message() + " (continue_on_error: going on)");
  return true;
}

// fio's verify_dump: the block as read and as it should be, in the current
// directory, named as fio names them (FILE.OFFSET.received, .expected).
// A dump that cannot be written is left out: the mismatch is still reported.
void Runner::dump_bad_block(std::span<const std::byte> got, std::uint64_t offset, VerifyResult& v) {
  std::string base = dev_.path();
  base = base.substr(base.find_last_of('/') + 1);
  std::vector<std::byte> want(got.size());
  stamp_pattern(want, offset, o_.seed, o_.verify_pattern);
  for (const auto& [kind, data] :
       {std::pair{"received", got}, std::pair{"expected", std::span<const std::byte>(want)}}) {
    const std::string name = base + "." + std::to_string(offset) + "." + kind;
    const int fd = ::open(name.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    const bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
    ::close(fd);
    if (ok) v.dumps.push_back(name);
  }
}

void Runner::count(BenchDir dir, std::uint64_t bytes, std::uint64_t n, std::uint64_t clat, std::uint64_t slat) {
  BenchDirResult& d = res_->dir[dir];
  d.clat.add(clat, n);
  // psync has no submission latency: its total latency is its clat, which
  // finish_pass copies (one accumulator less per request).
  if (async_) {
    d.slat.add(slat, n);
    d.lat.add(clat + slat, n);
  }
  d.ios += n;
  d.io_bytes += bytes;
  res_->lat_buckets.add(clat + slat, n);
}

void Runner::complete(unsigned lead, std::uint64_t t) {
  const Slot& l = slots_[lead];
  const std::uint64_t clat = t > l.t_submit ? t - l.t_submit : 0;
  const std::uint64_t slat = l.t_submit > l.t_start ? l.t_submit - l.t_start : 0;
  std::uint64_t bytes = 0;
  const bool log_ios = o_.log_ios && spec_->measured && !ramping_;
  for (unsigned k = 0; k < l.nmembers; ++k) {
    const unsigned id = l.members[k];
    const Slot& s = slots_[id];
    bytes += s.want;
    if (spec_->check) {
      VerifyResult& v = *res_->verify;
      v.bytes_checked += s.want;
      if (auto m = check_pattern({s.buf, std::size_t(s.want)}, s.offset, o_.seed, o_.verify_pattern)) {
        ++v.bad_blocks;
        if (!v.first || m->offset < v.first->offset) v.first = *m;
        if (o_.verify_dump) dump_bad_block({s.buf, std::size_t(s.want)}, s.offset, v);
        if (o_.verify_fatal) stop_ = true;  // fio verify_fatal: no request issued after the first bad one
      }
    }
    if (l.dir == dir_write) note_backlog(s);
    if (log_ios)
      res_->io_events.push_back({t - t0_, s.offset, std::uint32_t(s.want), l.dir, clat, async_ ? slat : 0, l.ioprio});
    free_.push_back(id);
  }
  if (l.dir == dir_read) stats_->bytes_read += bytes;
  else if (l.dir == dir_write) stats_->bytes_written += bytes;
  if (!spec_->measured && !spec_->counted) return;
  if (progress_ && spec_->measured) progress_->add(bytes);
  if (ramping_) return;
  const std::uint64_t n = l.nmembers;
  count(l.dir, bytes, n, clat, slat);
  BenchDirResult& d = res_->dir[l.dir];
  if (!d.prios.empty()) d.prios[l.prio_index].clat.add(clat, n);
  if (!spec_->measured) return;  // the read-back: counted, not paced, sampled or judged
  if (o_.ss_probe) {
    o_.ss_probe->bytes.fetch_add(bytes, std::memory_order_relaxed);
    o_.ss_probe->ios.fetch_add(n, std::memory_order_relaxed);
  }
  if (l.dir != dir_trim) on_latency_step(lat_target_.completed(clat + slat, t));
  if (l.dir != dir_trim && o_.max_latency_ns[l.dir] && clat + slat > o_.max_latency_ns[l.dir])
    fail(errno_error(ETIMEDOUT, "latency of " + std::to_string(clat + slat) + " nsec exceeds max_latency (" +
                                    std::to_string(o_.max_latency_ns[l.dir]) + " nsec)"));
  stat_sampler_.add(l.dir, t, bytes, n, clat + slat, clat, slat);
  log_sampler_.add(l.dir, t, bytes, n, clat + slat, clat, slat);
}

// fio's fsync=N / fdatasync=N: once N writes are done (none in flight), one
// flush through the engine, timed into the sync statistics.
fsio::Status Runner::sync_now() {
  fsio::IoRequest req;
  req.op = fsio::IoOp::flush;
  req.datasync = o_.fsync_data_only;
  req.user_data = sync_tag;
  const std::uint64_t t = now_ns();
  FSIO_TRY(engine_->queue(req));
  FSIO_TRY(engine_->commit());
  fsio::IoCompletion c;
  while (true) {
    auto got = FSIO_TRY(engine_->reap({&c, 1}, 1));
    if (got == 1) break;
  }
  const std::uint64_t t2 = now_ns();
  writes_since_sync_ = 0;
  ++stats_->flushes;
  if (c.result < 0) return dev_.error(errno_error(int(-c.result), o_.fsync_data_only ? "fdatasync" : "fsync"));
  if (spec_->measured && !ramping_) res_->sync_lat.add(t2 - t);
  t_last_ = t2;
  check_clock(t2);
  return {};
}

void Runner::check_clock(std::uint64_t t) {
  if (ramping_ && t >= ramp_end_) start_measuring(t);
  if (!stop_ && deadline_ns_ && t >= deadline_ns_) {
    stop_ = true;
    res_->runtime_capped = o_.time_based || work_->more();
  }
  if (!stop_ && !ramping_ && spec_->measured && o_.rate.floors() && t >= floor_check_) check_rate_min(t);
  if (!stop_ && terminated()) stop_ = true;  // fio exitall: not an interruption, the job just ends
  if (!stop_ && fsio::InterruptGuard::requested()) {
    stop_ = true;
    res_->interrupted = true;
  }
}

}  // namespace bench::detail
