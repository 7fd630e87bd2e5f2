#include "libfsio/bench.hpp"

#include <fcntl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "libfsio/buffer.hpp"
#include "libfsio/progress.hpp"

namespace fsio {

namespace {

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

std::string hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// One buffer and, when it leads an engine request, that request.
struct Slot {
  std::byte* buf = nullptr;
  std::uint64_t offset = 0;    // window offset of this block
  std::uint64_t want = 0;      // bytes of this block that count
  std::uint64_t ask = 0;       // bytes asked of the kernel (a direct read's tail: aligned up)
  // As the lead of an engine request (members[0] is the lead itself):
  iovec* iov = nullptr;        // capacity: max_merge
  unsigned iovcnt = 0;
  unsigned* members = nullptr;
  unsigned nmembers = 0;
  std::uint64_t req_offset = 0;  // window offset still to transfer
  std::uint64_t req_bytes = 0;   // bytes asked of the kernel
  std::uint64_t req_want = 0;    // bytes that must arrive for the request to be complete
  std::uint64_t t_submit = 0;
};

struct PassSpec {
  IoOp op = IoOp::read;
  std::uint64_t blocks = 0;  // block indices [0, blocks) of the order
  bool stamp = false;        // write the verify pattern into each buffer
  bool check = false;        // check each read buffer against the pattern
  bool measured = true;      // latencies and stats land in the result
};

class Runner {
 public:
  Runner(Device& dev, const BenchOptions& o, const BenchRange& range, std::unique_ptr<Engine> engine,
         Progress* progress)
      : dev_(dev), o_(o), range_(range), progress_(progress),
        order_(range.blocks, bench_random(o.rw), o.seed) {
    const auto& topo = dev.topology();
    align_ = dev.direct() ? std::max<std::uint32_t>(topo.dio_offset_align, 1) : 1;
    merge_ = o.batch > 1 && o.merge && !bench_random(o.rw);
    max_merge_ = merge_ ? std::min(o.batch, 1024u) : 1;
    max_request_ = std::max<std::uint64_t>(o.bs, topo.max_request);
    const std::size_t mem_align = std::max<std::size_t>({4096, topo.dio_mem_align, std::bit_ceil(align_)});
    const std::size_t stride = (o.bs + mem_align - 1) / mem_align * mem_align;
    arena_ = AlignedBuffer(stride * o.iodepth, mem_align);
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
    comps_.resize(engine->depth());
    engine_ = std::move(engine);
    round_.reserve(o.iodepth);
    free_.reserve(o.iodepth);
    // Writes without --verify send one fixed, incompressible fill, like fio's
    // default random buffers.
    for (unsigned i = 0; i < o.iodepth; ++i)
      stamp_pattern({slots_[i].buf, std::size_t(o.bs)}, std::uint64_t(i) * o.bs, o.seed ^ 0xf111);
  }

  Status pass(const PassSpec& spec, BenchResult& res);
  std::uint64_t issued() const { return issued_; }

 private:
  bool take_block(std::uint64_t b, Slot& s);
  void open_request(unsigned id);
  bool try_merge(unsigned lead, unsigned id);
  Status queue_lead(unsigned lead, IoOp op, bool retry);
  void complete(unsigned lead, std::uint64_t t, const PassSpec& spec, BenchResult& res);

  Device& dev_;
  const BenchOptions& o_;
  BenchRange range_;
  Progress* progress_;
  BlockOrder order_;
  std::uint32_t align_ = 1;
  bool merge_ = false;
  unsigned max_merge_ = 1;
  std::uint64_t max_request_ = 0;
  AlignedBuffer arena_;
  std::vector<Slot> slots_;
  std::vector<iovec> iovs_;
  std::vector<unsigned> member_ids_;
  std::vector<IoCompletion> comps_;
  std::vector<unsigned> round_;  // leads queued since the last commit
  std::vector<unsigned> free_;
  unsigned engine_in_flight_ = 0;
  std::uint64_t issued_ = 0;     // distinct blocks handed out by the last pass
  bool wrapped_ = false;         // a time-based pass has started over the range
  IoStats* stats_ = nullptr;
  VerifyResult* verify_ = nullptr;
  std::uint64_t* eod_ = nullptr;  // where the measured pass counts guard-truncated bytes
  bool async_ = true;
  // Last member, so it is destroyed first: an engine torn down after a
  // failed reap waits for the kernel to finish with arena_'s buffers.
  std::unique_ptr<Engine> engine_;
};

// Offset and length of block b (an index into the order) into s; false when
// nothing of it can be transferred.
//
// The end of the target: a block device gets the end-of-device guard
// (Device::clamp: whole logical sectors; a 4Kn device refuses a partial one).
// A regular file opened O_DIRECT is read with the aligned length and the
// kernel returns the short tail (EOF semantics hold for direct I/O), so a read
// still covers the file to its last byte. A direct write cannot cover a
// partial sector without growing the file: its tail stays unwritten and is
// counted in eod_truncated.
bool Runner::take_block(std::uint64_t b, Slot& s) {
  const std::uint64_t off = range_.begin + order_(b) * o_.bs;
  const std::uint64_t full = std::min(o_.bs, range_.end - off);
  const bool is_read = !bench_writes(o_.rw);
  std::uint64_t want = full;
  std::uint64_t ask = (full + align_ - 1) / align_ * align_;
  if (dev_.is_block_device() || !is_read) {
    // A block device transfers whole logical sectors even through the page
    // cache (a 4Kn device fails the partial last one with EIO).
    const std::uint64_t unit =
        dev_.is_block_device() ? std::max<std::uint64_t>(align_, dev_.logical_sector_size()) : align_;
    const std::uint64_t span = (full + unit - 1) / unit * unit;
    if (off + span > dev_.size()) {
      auto clamped = dev_.clamp(off, span);
      want = clamped ? std::min(full, *clamped / unit * unit) : 0;
      ask = want;
    }
  }
  if (eod_ && !wrapped_) *eod_ += full - want;  // the tail counts once, however often it is read
  if (want == 0) return false;
  s.offset = off;
  s.want = want;
  s.ask = is_read ? ask : want;
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
  if (!merge_ || l.nmembers >= max_merge_) return false;
  if (l.req_offset + l.req_bytes != s.offset || l.req_bytes != l.req_want) return false;
  if (l.req_bytes + s.want > max_request_ || s.ask != s.want) return false;
  l.iov[l.iovcnt++] = iovec{s.buf, std::size_t(s.want)};
  l.members[l.nmembers++] = id;
  l.req_bytes += s.want;
  l.req_want += s.want;
  return true;
}

Status Runner::queue_lead(unsigned lead, IoOp op, bool retry) {
  Slot& l = slots_[lead];
  IoRequest req;
  req.op = op;
  req.offset = dev_.offset() + l.req_offset;
  req.iov = l.iov;
  req.iovcnt = l.iovcnt;
  req.bytes = l.req_bytes;
  req.dsync = op == IoOp::write && o_.sync;
  req.user_data = lead;
  FSIO_TRY(engine_->queue(req));
  ++engine_in_flight_;
  stats_->peak_in_flight = std::max(stats_->peak_in_flight, engine_in_flight_);
  if (retry) ++stats_->retries;
  else ++stats_->requests_submitted;
  round_.push_back(lead);
  return {};
}

void Runner::complete(unsigned lead, std::uint64_t t, const PassSpec& spec, BenchResult& res) {
  const Slot& l = slots_[lead];
  const std::uint64_t lat = t > l.t_submit ? t - l.t_submit : 0;
  std::uint64_t bytes = 0;
  for (unsigned k = 0; k < l.nmembers; ++k) {
    const unsigned id = l.members[k];
    const Slot& s = slots_[id];
    bytes += s.want;
    if (spec.check) {
      verify_->bytes_checked += s.want;
      if (auto m = check_pattern({s.buf, std::size_t(s.want)}, s.offset, o_.seed)) {
        ++verify_->bad_blocks;
        if (!verify_->first || m->offset < verify_->first->offset) verify_->first = *m;
      }
    }
    free_.push_back(id);
  }
  if (spec.measured) {
    res.clat.add(lat, l.nmembers);
    res.ios += l.nmembers;
    res.io_bytes += bytes;
  }
  if (spec.op == IoOp::read) stats_->bytes_read += bytes;
  else stats_->bytes_written += bytes;
  if (progress_ && spec.measured) progress_->add(bytes);
}

Status Runner::pass(const PassSpec& spec, BenchResult& res) {
  IoStats scratch;
  stats_ = spec.measured ? &res.stats : &scratch;
  verify_ = spec.check ? &*res.verify : nullptr;
  eod_ = spec.measured ? &res.eod_truncated : nullptr;
  free_.clear();
  for (unsigned i = o_.iodepth; i-- > 0;) free_.push_back(i);
  engine_in_flight_ = 0;
  issued_ = 0;
  wrapped_ = false;
  // fio's time_based: the measured pass starts over at the first block of the
  // same order until the runtime stops it.
  const bool wrap = spec.measured && o_.time_based && spec.blocks > 0;
  bool any_taken = false;  // a pass that transfers nothing must not start over

  const unsigned depth = std::min(o_.iodepth, engine_->depth());
  const unsigned batch = o_.batch;
  const std::uint64_t syscalls0 = engine_->syscalls();
  const std::uint64_t deadline_ns = o_.runtime > 0 && spec.measured ? std::uint64_t(o_.runtime * 1e9) : 0;
  const std::uint64_t t0 = now_ns();
  std::uint64_t t_last = t0;
  std::uint64_t next = 0;
  bool stop = false;
  std::optional<Error> failure;

  while (true) {
    if (wrap && next == spec.blocks && !stop) {
      next = 0;
      wrapped_ = true;
    }
    // Fill: every free buffer (or, with --batch, a batch once that many are free).
    const std::uint64_t left = spec.blocks - next;
    const bool fill = !stop && left > 0 &&
                      (batch == 0 || engine_in_flight_ == 0 ||
                       free_.size() >= std::min<std::uint64_t>(batch, left));
    if (fill) {
      round_.clear();
      unsigned taken = 0;
      int open = -1;  // the request being built, not yet queued
      while (!free_.empty() && next < spec.blocks && (batch == 0 || taken < batch) &&
             engine_in_flight_ + (open >= 0) < depth) {
        const unsigned id = free_.back();
        const bool ok = take_block(next, slots_[id]);
        ++next;
        if (!ok) continue;
        free_.pop_back();
        ++taken;
        any_taken = true;
        ++stats_->requests_queued;
        if (spec.stamp) stamp_pattern({slots_[id].buf, std::size_t(slots_[id].want)}, slots_[id].offset, o_.seed);
        if (open >= 0 && try_merge(unsigned(open), id)) continue;
        if (open >= 0) {
          if (auto st = queue_lead(unsigned(open), spec.op, false); !st) { failure = std::move(st).error(); stop = true; break; }
        }
        open_request(id);
        open = int(id);
      }
      if (open >= 0 && !failure) {
        if (auto st = queue_lead(unsigned(open), spec.op, false); !st) { failure = std::move(st).error(); stop = true; }
      }
      issued_ = wrapped_ ? spec.blocks : next;
    }
    if (!round_.empty()) {
      const std::uint64_t before = async_ ? 0 : now_ns();
      auto n = engine_->commit();
      if (!n) return dev_.error(std::move(n).error());
      const std::uint64_t t = async_ ? now_ns() : before;
      for (unsigned lead : round_) slots_[lead].t_submit = t;
      round_.clear();
    }
    if (engine_in_flight_ == 0) {
      // The rest of the range had nothing to transfer (a partial tail):
      // start over, if the run is time based.
      if (wrap && any_taken && !stop && next == spec.blocks) continue;
      break;
    }

    // Reap: without waiting while another batch could go out now (so --batch
    // 1 keeps iodepth in flight, one submit per request, like fio's
    // default); else at least one completion, or with --batch (no merging)
    // enough to free a whole batch, like fio's iodepth_batch_complete_min.
    const bool more = !stop && next < spec.blocks;
    const std::uint64_t want_free = std::min<std::uint64_t>(std::max(batch, 1u), spec.blocks - next);
    unsigned min_complete = 1;
    if (more && free_.size() >= want_free && engine_in_flight_ < depth)
      min_complete = 0;
    else if (batch > 1 && !merge_ && more && free_.size() < batch)
      min_complete = std::min<unsigned>(unsigned(batch - free_.size()), engine_in_flight_);
    auto got = engine_->reap(comps_, min_complete);
    if (!got) return dev_.error(std::move(got).error());
    const std::uint64_t t = now_ns();
    t_last = t;
    for (unsigned i = 0; i < *got; ++i) {
      const unsigned lead = unsigned(comps_[i].user_data);
      Slot& l = slots_[lead];
      --engine_in_flight_;
      const std::int64_t r = comps_[i].result;
      const char* what = spec.op == IoOp::read ? "read " : "write ";
      if (r < 0 || (r == 0 && l.req_want > 0)) {
        if (!failure) {
          const std::string ctx = what + std::to_string(l.req_bytes) + " bytes at " + hex(l.req_offset);
          failure = r < 0 ? errno_error(int(-r), ctx) : make_error(Errc::io, ctx + ": unexpected end of file");
        }
        stop = true;
        for (unsigned k = 0; k < l.nmembers; ++k) free_.push_back(l.members[k]);
        continue;
      }
      const auto done = std::uint64_t(r);
      if (done >= l.req_want || stop) {
        // Complete (a short read past the want is the tail of an odd target);
        // after a stop a short transfer is counted for what it moved, no retry.
        if (done < l.req_want) {
          for (unsigned k = 0; k < l.nmembers; ++k) free_.push_back(l.members[k]);
          continue;
        }
        complete(lead, t, spec, res);
        continue;
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
      if (auto st = queue_lead(lead, spec.op, true); !st) {
        if (!failure) failure = std::move(st).error();
        stop = true;
      }
    }
    if (!stop && deadline_ns && t - t0 >= deadline_ns) {
      stop = true;
      res.runtime_capped = wrap || next < spec.blocks;
    }
    if (!stop && InterruptGuard::requested()) {
      stop = true;
      res.interrupted = true;
    }
  }
  stats_->syscalls += engine_->syscalls() - syscalls0;
  if (spec.measured) {
    res.elapsed = double(t_last - t0) / 1e9;
    stats_->elapsed_seconds = res.elapsed;
  }
  if (failure) return dev_.error(std::move(*failure));
  return {};
}

// Advisory: a failure only means a warmer cache, never wrong results.
void invalidate_cache(const Device& dev, const BenchRange& range) {
  (void)posix_fadvise(dev.fd(), off_t(dev.offset() + range.begin), off_t(range.end - range.begin),
                      POSIX_FADV_DONTNEED);
}

// The access pattern hint fio gives (fadvise_hint=1): sequential doubles the
// readahead window of a buffered read, random turns readahead off.
void hint_access(const Device& dev, const BenchRange& range, BenchRw rw) {
  (void)posix_fadvise(dev.fd(), off_t(dev.offset() + range.begin), off_t(range.end - range.begin),
                      bench_random(rw) ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
}

}  // namespace

Result<BenchResult> run_bench(Device& dev, const BenchOptions& o, Progress* progress) {
  FSIO_TRY_CTX(validate(o), dev.path());
  auto engine = FSIO_TRY_CTX(make_engine(o.engine, dev.fd(), o.iodepth), dev.path());
  return run_bench(dev, o, std::move(engine), progress);
}

Result<BenchResult> run_bench(Device& dev, const BenchOptions& o, std::unique_ptr<Engine> engine,
                              Progress* progress) {
  const std::uint32_t align = dev.direct() ? std::max<std::uint32_t>(dev.topology().dio_offset_align, 1) : 1;
  auto range = FSIO_TRY_CTX(plan_range(o, dev.size(), align), dev.path());
  if (bench_writes(o.rw) && !dev.writable())
    return make_error(Errc::invalid_argument, dev.path() + ": opened read-only for a write benchmark");

  BenchResult res;
  res.rw = o.rw;
  res.engine = engine->name();
  res.direct = dev.direct();
  // Seen on Linux 6.18 with a 4Kn loop device over an odd-sized file: the
  // page cache reads the partial last sector along with its neighbours and
  // fails the whole folio ("Buffer I/O error ... async page read"), so whole
  // sectors near the end fail buffered although they read fine direct.
  const std::uint32_t sector = dev.logical_sector_size();
  const bool partial_tail = dev.is_block_device() && !dev.direct() && dev.size() % sector != 0;
  if (partial_tail)
    res.note = "the last logical sector is partial; buffered reads next to it may fail in the page cache (--direct reads them)";
  res.bs = o.bs;
  res.iodepth = o.iodepth;
  res.range = range;
  if (o.verify) res.verify = VerifyResult{};

  // Drop the range from the page cache first, as fio does (invalidate=1):
  // cached pages make every direct write invalidate them (and io_uring punt
  // it to a worker), and make a buffered read measure memory, not the device.
  invalidate_cache(dev, range);
  hint_access(dev, range, o.rw);

  Runner runner(dev, o, range, std::move(engine), progress);
  const IoOp op = bench_writes(o.rw) ? IoOp::write : IoOp::read;
  // The measured pass; a read with --verify checks what it reads.
  if (auto st = runner.pass({op, range.blocks, o.verify && op == IoOp::write, o.verify && op == IoOp::read, true}, res);
      !st) {
    Error e = std::move(st).error();
    if (partial_tail && e.sys_errno == EIO) e.context += " (" + res.note + ")";
    return e;
  }

  // --verify on a write: read back exactly the blocks the pass wrote.
  if (o.verify && op == IoOp::write && !res.interrupted) {
    if (!dev.direct()) {
      // Read back from the device, not from the pages just written.
      FSIO_TRY(dev.flush());
      invalidate_cache(dev, range);
    }
    FSIO_TRY(runner.pass({IoOp::read, runner.issued(), false, true, false}, res));
  }
  if (res.verify) res.verify->complete = !res.interrupted;
  return res;
}

}  // namespace fsio
