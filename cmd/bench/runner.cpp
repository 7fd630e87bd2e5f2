#include "cmd/bench/runner.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <string>

#include "libfsio/progress.hpp"
#include "libfsio/size.hpp"

namespace bench::detail {

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

// ---- sampler ----------------------------------------------------------------

void Sampler::start(unsigned window_ms, std::uint64_t t0, BenchRw rw, std::vector<BenchSample>* out) {
  out_ = window_ms ? out : nullptr;
  window_ns_ = std::uint64_t(window_ms) * 1000000u;
  t0_ = t0;
  window_end_ = t0 + window_ns_;
  active_[dir_read] = bench_reads(rw);
  active_[dir_write] = bench_writes(rw);
  active_[dir_trim] = bench_trims(rw);
  for (auto& c : cur_) c = BenchSample{};
}

void Sampler::roll(std::uint64_t t) {
  // Every window that ended before t, empty ones too (a stall shows as zeros).
  while (t >= window_end_) {
    for (unsigned d = 0; d < bench_dirs; ++d) {
      if (!active_[d]) continue;
      BenchSample s = cur_[d];
      s.t_ms = (window_end_ - t0_) / 1000000u;
      s.dir = BenchDir(d);
      out_->push_back(s);
      cur_[d] = BenchSample{};
    }
    window_end_ += window_ns_;
  }
}

// ---- runner -----------------------------------------------------------------

Runner::Runner(fsio::Device& dev, const BenchOptions& o, const BenchRange& range, std::unique_ptr<fsio::Engine> engine,
               fsio::Progress* progress)
    : dev_(dev), o_(o), range_(range), progress_(progress) {
  const auto& topo = dev.topology();
  align_ = dev.direct() ? std::max<std::uint32_t>(topo.dio_offset_align, 1) : 1;
  merge_ = o.batch > 1 && o.merge && !bench_random(o.rw);
  max_merge_ = merge_ ? std::min(o.batch, 1024u) : 1;
  const std::uint64_t bs = o.max_bs();
  max_request_ = std::max<std::uint64_t>(bs, topo.max_request);
  const std::size_t mem_align = std::max<std::size_t>({4096, topo.dio_mem_align, std::bit_ceil(align_)});
  const std::size_t stride = (bs + mem_align - 1) / mem_align * mem_align;
  arena_ = fsio::AlignedBuffer(stride * o.iodepth, mem_align);
  slots_.resize(o.iodepth);
  iovs_.resize(std::size_t(o.iodepth) * max_merge_);
  member_ids_.resize(std::size_t(o.iodepth) * max_merge_);
  for (unsigned i = 0; i < o.iodepth; ++i) {
    slots_[i].buf = arena_.data() + std::size_t(i) * stride;
    slots_[i].iov = &iovs_[std::size_t(i) * max_merge_];
    slots_[i].members = &member_ids_[std::size_t(i) * max_merge_];
  }
  // An engine that does the I/O inside commit() (psync) is timed from
  // before the commit, like fio's sync engines; io_uring from after the
  // submit returns, like fio's io_uring engine (fio_ioring_queued).
  async_ = std::string_view(engine->name()) == "uring";
  depth_ = std::min(o.iodepth, engine->depth());
  comps_.resize(engine->depth());
  engine_ = std::move(engine);
  prio_plan_ = PriorityPlan(o.priority, bench_reads(o.rw), bench_writes(o.rw));
  prio_rng_.seed(o.seed ^ 0x7072696f);
  round_.reserve(o.iodepth);
  free_.reserve(o.iodepth);
  // Writes without --verify send one fixed, incompressible fill, like fio's
  // default random buffers.
  for (unsigned i = 0; i < o.iodepth; ++i)
    stamp_pattern({slots_[i].buf, std::size_t(bs)}, std::uint64_t(i) * bs, o.seed ^ 0xf111);
  if (o.buffers.active()) buffers_.emplace(o.buffers, o.seed, range.end - range.begin, o.min_bs());
}

// Offset and length of the next request into s; false when nothing of it can
// be transferred.
//
// The end of the target: a block device gets the end-of-device guard
// (Device::clamp: whole logical sectors; a 4Kn device refuses a partial one).
// A regular file opened O_DIRECT is read with the aligned length and the
// kernel returns the short tail (EOF semantics hold for direct I/O), so a read
// still covers the file to its last byte. A direct write cannot cover a
// partial sector without growing the file: its tail stays unwritten and is
// counted in eod_truncated.
bool Runner::take(const NextIo& io, Slot& s) {
  // A verify read-back covers exactly what the writes could reach.
  const bool is_read = io.dir == dir_read && !spec_->readback;
  std::uint64_t want = io.full;
  std::uint64_t ask = (io.full + align_ - 1) / align_ * align_;
  if (dev_.is_block_device() || !is_read) {
    // A block device transfers whole logical sectors even through the page
    // cache (a 4Kn device fails the partial last one with EIO).
    const std::uint64_t unit =
        dev_.is_block_device() ? std::max<std::uint64_t>(align_, dev_.logical_sector_size()) : align_;
    const std::uint64_t span = (io.full + unit - 1) / unit * unit;
    if (io.offset + span > dev_.size()) {
      auto clamped = dev_.clamp(io.offset, span);
      want = clamped ? std::min(io.full, *clamped / unit * unit) : 0;
      ask = want;
    }
  }
  // The tail counts once, however often it is read.
  if (spec_->measured && !work_->wrapped()) res_->eod_truncated += io.full - want;
  if (want == 0) return false;
  s.offset = io.offset;
  s.want = want;
  s.ask = is_read ? ask : want;
  s.dir = io.dir;
  return true;
}

void Runner::open_request(unsigned id) {
  Slot& s = slots_[id];
  s.iov[0] = iovec{s.buf, std::size_t(s.ask)};
  s.iovcnt = 1;
  s.members[0] = id;
  s.nmembers = 1;
  s.req_offset = s.offset;
  s.req_bytes = s.ask;
  s.req_want = s.want;
}

bool Runner::try_merge(unsigned lead, unsigned id) {
  Slot& l = slots_[lead];
  const Slot& s = slots_[id];
  if (!merge_ || l.nmembers >= max_merge_ || l.dir != s.dir || l.ioprio != s.ioprio) return false;
  if (l.req_offset + l.req_bytes != s.offset || l.req_bytes != l.req_want) return false;
  if (l.req_bytes + s.want > max_request_ || s.ask != s.want) return false;
  l.iov[l.iovcnt++] = iovec{s.buf, std::size_t(s.want)};
  l.members[l.nmembers++] = id;
  l.req_bytes += s.want;
  l.req_want += s.want;
  return true;
}

fsio::Status Runner::queue_lead(unsigned lead, bool retry) {
  Slot& l = slots_[lead];
  fsio::IoRequest req;
  req.op = l.dir == dir_write ? fsio::IoOp::write : fsio::IoOp::read;
  req.offset = dev_.offset() + l.req_offset;
  req.iov = l.iov;
  req.iovcnt = l.iovcnt;
  req.bytes = l.req_bytes;
  req.dsync = req.op == fsio::IoOp::write && o_.sync;
  req.ioprio = l.ioprio;
  req.user_data = lead;
  FSIO_TRY(engine_->queue(req));
  ++engine_in_flight_;
  stats_->peak_in_flight = std::max(stats_->peak_in_flight, engine_in_flight_);
  if (retry) {
    ++stats_->retries;
  } else {
    ++stats_->requests_submitted;
    round_.push_back(lead);
  }
  return {};
}

unsigned Runner::fill() {
  const unsigned batch = o_.batch;
  // The round's start, fio's start_time, for slat (psync: commit_round
  // stamps it, the I/O starts there).
  const std::uint64_t t = async_ ? now_ns() : 0;
  unsigned taken = 0;
  std::uint64_t rejected = 0;
  int open = -1;  // the request being built, not yet queued
  while (!free_.empty() && (batch == 0 || taken < batch) && engine_in_flight_ + (open >= 0) < allowed_depth() &&
         !sync_due() && !backlog_due() && !think_due_ && !lat_drain_) {
    if (work_->exhausted()) {  // before the rate's wait: after the last request the job ends at once, as fio's
      exhausted_ = true;
      break;
    }
    if (held()) break;
    if (number_ios_reached()) {
      exhausted_ = true;
      break;
    }
    NextIo io;
    if (!work_->next(io)) {
      exhausted_ = true;
      break;
    }
    if (work_->restarts() != restarts_seen_) restart_range();
    const unsigned id = free_.back();
    if (!take(io, slots_[id])) {
      // Nothing of it lies inside the device (a partial last sector). A
      // time-based pass that meets only such blocks would never end.
      if (++rejected > range_.blocks + 1 && taken == 0) exhausted_ = true;
      if (exhausted_) break;
      continue;
    }
    free_.pop_back();
    ++taken;
    Slot& s = slots_[id];
    prepare(s, t);
    if (open >= 0 && try_merge(unsigned(open), id)) continue;  // never a trim: the directions differ
    if (open >= 0) {
      if (auto st = queue_lead(unsigned(open), false); !st) {
        fail(std::move(st).error());
        return taken;
      }
    }
    open_request(id);
    open = int(id);
    if (s.dir == dir_trim) {
      trim_now(id);
      open = -1;
      if (failure_) return taken;
    }
  }
  if (open >= 0)
    if (auto st = queue_lead(unsigned(open), false); !st) fail(std::move(st).error());
  return taken;
}

// A new pass over the range: fio reopens the file and drops its cache
// (invalidate=1), so a buffered pass reads the device again, not memory.
void Runner::restart_range() {
  restarts_seen_ = work_->restarts();
  if (o_.invalidate && !dev_.direct() && spec_->measured)
    (void)posix_fadvise(dev_.fd(), off_t(dev_.offset() + range_.begin), off_t(range_.end - range_.begin),
                        POSIX_FADV_DONTNEED);
}

// A request taken at t (its queue time): counted where the options count
// it (number_ios, thinktime, fsync=N, the rate), given its priority and,
// for a verify write, its stamp.
void Runner::prepare(Slot& s, std::uint64_t t) {
  ++stats_->requests_queued;
  if (spec_->measured) {
    ++taken_ios_;
    think_due_ = o_.thinktime_us > 0;
  }
  s.t_start = t;
  give_priority(s);
  if (s.dir == dir_write) ++writes_since_sync_;
  if (spec_->measured && o_.rate.limits()) rate_gate_.issued(s.dir, s.want);
  if (spec_->stamp) stamp_pattern({s.buf, std::size_t(s.want)}, s.offset, o_.seed, o_.verify_pattern);
  else if (buffers_ && s.dir == dir_write) buffers_->fill({s.buf, std::size_t(s.want)});
}

// fio's fio_cmdprio_set_ioprio: with cmdprio, a draw per request picks its
// priority; otherwise every request has the job's own.
void Runner::give_priority(Slot& s) {
  s.prio_index = prio_plan_.per_request() ? prio_plan_.pick(s.dir, s.want, unsigned(prio_rng_() % 100)) : 0;
  s.ioprio = prio_plan_.values(s.dir)[s.prio_index];
}

// A trim, as fio's io_uring and sync engines do it (do_io_u_trim): once what
// is queued has gone out, synchronously, with BLKDISCARD (os_trim on Linux;
// fio 3.33 has no other, so on a regular file it fails with ENOTTY as fio's
// does). The null engine trims nothing and completes it, as fio's.
void Runner::trim_now(unsigned id) {
  if (auto st = commit_round(); !st) return fail(std::move(st).error());
  Slot& s = slots_[id];
  s.t_start = s.t_submit = now_ns();
  if (!o_.null_engine) {
    const std::uint64_t range[2] = {dev_.offset() + s.offset, s.want};
    ++stats_->syscalls;
    if (::ioctl(dev_.fd(), BLKDISCARD, range) != 0) {
      const std::string what = "trim " + std::to_string(s.want) + " bytes at " + fsio::format_hex(s.offset);
      if (go_on_after(dir_trim, errno, what)) {
        free_.push_back(id);
        return;
      }
      fail(fsio::errno_error(errno, "trim " + std::to_string(s.want) + " bytes at " + fsio::format_hex(s.offset)));
      free_.push_back(id);
      return;
    }
  }
  const std::uint64_t t = now_ns();
  complete(id, t);
  t_last_ = t;
  check_clock(t);
}

fsio::Status Runner::commit_round() {
  if (engine_->in_flight() == 0 || (round_.empty() && !retry_pending_)) return {};
  const std::uint64_t before = async_ ? 0 : now_ns();
  auto n = engine_->commit();
  if (!n) return dev_.error(std::move(n).error());
  const std::uint64_t t = async_ ? now_ns() : before;
  for (unsigned lead : round_) {
    slots_[lead].t_submit = t;
    if (!async_) slots_[lead].t_start = t;  // psync: queued and issued at once, no slat
  }
  if (spec_->measured && *n > 0) {
    res_->depths.add_submit(*n);
    res_->depths.add_level(engine_in_flight_, round_.size());
  }
  round_.clear();
  retry_pending_ = false;
  return {};
}

}  // namespace bench::detail
