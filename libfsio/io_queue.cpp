// IoQueue: plug -> sort -> guard -> merge -> submit -> reap, as the block
// layer does it (blk_start_plug / blk_finish_plug, bio merging, guard_bio_eod).
#include "libfsio/io_queue.hpp"
#include "libfsio/size.hpp"

#include <limits.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

namespace fsio {

struct IoQueue::Unit {
  IoOp op;
  std::uint64_t offset;    // window-relative; advances past short transfers
  std::uint64_t bytes;     // still to transfer
  std::vector<iovec> iov;  // iov[first..] is what is still to transfer
  std::size_t first = 0;

  // Drop `n` transferred bytes from the front, so a resubmission continues
  // exactly where the short transfer stopped.
  void advance(std::uint64_t n) {
    offset += n;
    bytes -= n;
    while (n > 0 && n >= iov[first].iov_len) n -= iov[first++].iov_len;
    if (n > 0) {
      iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + n;
      iov[first].iov_len -= n;
    }
  }
};

namespace {

// "write 1048576 bytes at 0x100000": what every queue error starts with.
std::string describe(IoOp op, std::uint64_t bytes, std::uint64_t offset) {
  if (op == IoOp::flush) return "flush";
  return std::string(op == IoOp::read ? "read " : "write ") + std::to_string(bytes) + " bytes at " + format_hex(offset);
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

IoQueue::IoQueue(Device& dev, QueueOptions opts, std::unique_ptr<Engine> engine)
    : dev_(&dev), opts_(opts), engine_(std::move(engine)) {}
IoQueue::IoQueue(IoQueue&&) noexcept = default;
IoQueue& IoQueue::operator=(IoQueue&&) noexcept = default;
IoQueue::~IoQueue() = default;

Result<IoQueue> IoQueue::create(Device& device, const QueueOptions& options) {
  if (options.depth == 0) return make_error(Errc::invalid_argument, "queue depth must be at least 1").at(device.path());
  auto engine = make_engine(options.engine, device.fd(), options.depth);
  if (!engine) return std::move(engine).error().at(device.path());
  return create(device, std::move(*engine), options);
}

Result<IoQueue> IoQueue::create(Device& device, std::unique_ptr<Engine> engine, const QueueOptions& options) {
  FSIO_ASSERT(engine != nullptr);
  QueueOptions opts = options;
  opts.depth = std::max(1u, std::min(opts.depth, engine->depth()));
  // The kernel refuses more than IOV_MAX (UIO_MAXIOV) segments per call.
  opts.max_segments = std::clamp(opts.max_segments, 1u, unsigned(IOV_MAX));
  if (opts.max_request == 0) opts.max_request = std::max<std::uint64_t>(device.topology().max_request, 1u << 20);
  // Pieces of a split request must stay whole sectors (O_DIRECT needs it,
  // and the end-of-device guard works in sectors).
  std::uint64_t sector = std::max<std::uint64_t>(device.logical_sector_size(), 1);
  opts.max_request = std::max(opts.max_request / sector * sector, sector);
  return IoQueue(device, opts, std::move(engine));
}

void IoQueue::Plug::read(std::uint64_t offset, std::span<std::byte> buf) {
  reqs_.push_back({IoOp::read, offset, buf.data(), buf.size()});
  bytes_ += buf.size();
  ++q_->stats_.requests_queued;
}

void IoQueue::Plug::write(std::uint64_t offset, std::span<const std::byte> buf) {
  // The engine only reads from a write's buffer; the cast lets reads and
  // writes share one iovec type.
  reqs_.push_back({IoOp::write, offset, const_cast<std::byte*>(buf.data()), buf.size()});
  bytes_ += buf.size();
  ++q_->stats_.requests_queued;
}

Status IoQueue::Plug::finish() {
  auto status = q_->run(reqs_);
  reqs_.clear();
  bytes_ = 0;
  return status;
}

Status IoQueue::read(std::uint64_t offset, std::span<std::byte> buf) {
  auto p = plug();
  p.read(offset, buf);
  return p.finish();
}

Status IoQueue::write(std::uint64_t offset, std::span<const std::byte> buf) {
  auto p = plug();
  p.write(offset, buf);
  return p.finish();
}

Status IoQueue::flush() {
  auto start = Clock::now();
  auto syscalls = engine_->syscalls();
  auto status = flush_engine();
  stats_.syscalls += engine_->syscalls() - syscalls;
  stats_.elapsed_seconds += seconds_since(start);
  if (!status) return std::move(status).error().at(dev_->path());
  return status;
}

Status IoQueue::flush_engine() {
  ++stats_.flushes;
  FSIO_TRY_CTX(engine_->queue(IoRequest{.op = IoOp::flush}), "flush");
  FSIO_TRY_CTX(engine_->commit(), "flush");
  IoCompletion done;
  unsigned n = FSIO_TRY_CTX(engine_->reap({&done, 1}, 1), "flush");
  FSIO_ASSERT(n == 1);
  if (done.result < 0) return errno_error(int(-done.result), "flush");
  return {};
}

Status IoQueue::run(std::vector<Plug::Pending>& reqs) {
  auto start = Clock::now();
  auto syscalls = engine_->syscalls();
  std::vector<Unit> units;
  auto status = prepare(reqs, units);
  if (status) status = submit(units);
  bool wrote = std::any_of(units.begin(), units.end(), [](const Unit& u) { return u.op == IoOp::write; });
  // One flush for the whole batch, never one per block; only when the batch
  // wrote something and all of it reached the device.
  if (status && wrote && opts_.sync == SyncPolicy::flush_after) status = flush_engine();
  stats_.syscalls += engine_->syscalls() - syscalls;
  stats_.elapsed_seconds += seconds_since(start);
  if (!status) return std::move(status).error().at(dev_->path());
  return status;
}

// Sort, check alignment, guard the end of the device, split what is larger
// than max_request and merge what is contiguous.
Status IoQueue::prepare(std::vector<Plug::Pending>& reqs, std::vector<Unit>& units) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Plug::Pending& a, const Plug::Pending& b) { return a.offset < b.offset; });
  const Topology& topo = dev_->topology();
  for (Plug::Pending& p : reqs) {
    if (p.len == 0) continue;
    if (dev_->direct()) {
      // O_DIRECT refuses these with EINVAL, or worse, after other requests of
      // the batch have already been written; refuse the whole batch first.
      std::uint64_t abs = dev_->offset() + p.offset;
      auto addr = reinterpret_cast<std::uintptr_t>(p.data);
      std::uint64_t off_align = std::max(topo.dio_offset_align, 1u);
      std::uint64_t mem_align = std::max(topo.dio_mem_align, 1u);
      if (abs % off_align || p.len % off_align || addr % mem_align)
        return make_error(Errc::invalid_argument,
                          describe(p.op, p.len, p.offset) +
                              ": not aligned for direct I/O (offset and length must be multiples of " +
                              std::to_string(topo.dio_offset_align) + ", buffer address of " +
                              std::to_string(topo.dio_mem_align) + ")");
    }
    // The guard's error says the request's size and offset and the device's size.
    std::uint64_t len = FSIO_TRY_CTX(dev_->clamp(p.offset, p.len), p.op == IoOp::read ? "read" : "write");
    // guard_bio_eod: the part of a read past the end reads as zeros.
    if (len < p.len && p.op == IoOp::read) std::memset(p.data + len, 0, p.len - len);

    for (std::uint64_t done = 0; done < len;) {
      std::uint64_t off = p.offset + done;
      std::byte* data = p.data + done;
      std::uint64_t piece = std::min(len - done, opts_.max_request);
      done += piece;
      if (opts_.merge && !units.empty()) {
        Unit& last = units.back();
        if (last.op == p.op && last.offset + last.bytes == off && last.bytes + piece <= opts_.max_request) {
          iovec& tail = last.iov.back();
          if (static_cast<std::byte*>(tail.iov_base) + tail.iov_len == data) {
            tail.iov_len += piece;  // adjacent memory too: no new segment
            last.bytes += piece;
            continue;
          }
          if (last.iov.size() < opts_.max_segments) {
            last.iov.push_back({data, piece});
            last.bytes += piece;
            continue;
          }
        }
      }
      units.push_back(Unit{p.op, off, piece, {iovec{data, piece}}, 0});
    }
  }
  return {};
}

// The state of one submit(): which units wait, how many are in flight, and
// the first error (the one the caller gets).
struct IoQueue::Batch {
  explicit Batch(std::vector<Unit>& all) : units(all) {}
  std::vector<Unit>& units;
  std::vector<std::size_t> retry;  // units whose short transfer's rest is to go again
  std::size_t next = 0;            // the first unit never submitted
  unsigned in_flight = 0;
  std::optional<Error> first_error;

  bool waiting() const { return !retry.empty() || next < units.size(); }
  void fail(Error e) {
    if (!first_error) first_error = std::move(e);
  }
};

// Keep at most depth requests in flight, one commit per wave, refilling as
// completions arrive. After the first error nothing new is submitted, but
// everything in flight is still reaped: the kernel must not be left writing
// from (or reading into) buffers the caller frees when we return.
Status IoQueue::submit(std::vector<Unit>& units) {
  Batch b(units);
  std::vector<IoCompletion> done(opts_.depth);
  for (;;) {
    if (queue_wave(b) > 0) {
      auto committed = engine_->commit();
      if (!committed) b.fail(std::move(committed).error());
    }
    stats_.peak_in_flight = std::max(stats_.peak_in_flight, b.in_flight);
    if (b.in_flight == 0) break;
    auto reaped = engine_->reap(done, 1);
    if (!reaped) return std::move(reaped).error();  // the engine is broken; nothing more to wait for
    b.in_flight -= *reaped;
    for (unsigned k = 0; k < *reaped; ++k) complete(b, done[k]);
  }
  if (b.first_error) return std::move(*b.first_error);
  return {};
}

// Queues what the depth allows, the rest of short transfers first. Stops at
// the first error, and when the engine is full (it is reaped, then refilled).
unsigned IoQueue::queue_wave(Batch& b) {
  const bool dsync = opts_.sync == SyncPolicy::dsync;
  unsigned queued = 0;
  while (!b.first_error && b.in_flight < opts_.depth && b.waiting()) {
    const bool is_retry = !b.retry.empty();
    const std::size_t i = is_retry ? b.retry.back() : b.next;
    Unit& u = b.units[i];
    auto st = engine_->queue(IoRequest{.op = u.op,
                                       .offset = dev_->offset() + u.offset,
                                       .iov = u.iov.data() + u.first,
                                       .iovcnt = unsigned(u.iov.size() - u.first),
                                       .bytes = u.bytes,
                                       .dsync = dsync && u.op == IoOp::write,
                                       .user_data = i});
    if (!st) {
      if (st.error().code == Errc::busy && b.in_flight > 0) break;
      b.fail(std::move(st).error().wrap(describe(u.op, u.bytes, u.offset)));
      break;
    }
    if (is_retry) {
      b.retry.pop_back();
    } else {
      ++b.next;
      ++stats_.requests_submitted;
    }
    ++queued;
    ++b.in_flight;
  }
  return queued;
}

// One completion: its bytes counted, the rest of a short transfer queued
// again, a failure kept if it is the first.
void IoQueue::complete(Batch& b, const IoCompletion& c) {
  Unit& u = b.units[c.user_data];
  if (c.result < 0) return b.fail(errno_error(int(-c.result), describe(u.op, u.bytes, u.offset)));
  if (c.result == 0) {
    // No progress: the device ended where its size said it would not.
    return b.fail(Error{Errc::io, EIO,
                        describe(u.op, u.bytes, u.offset) + ": short " + (u.op == IoOp::read ? "read" : "write") +
                            " at end of device"});
  }
  FSIO_ASSERT(std::uint64_t(c.result) <= u.bytes);
  (u.op == IoOp::read ? stats_.bytes_read : stats_.bytes_written) += std::uint64_t(c.result);
  u.advance(std::uint64_t(c.result));
  if (u.bytes > 0 && !b.first_error) {
    ++stats_.retries;
    b.retry.push_back(c.user_data);
  }
}

}  // namespace fsio
