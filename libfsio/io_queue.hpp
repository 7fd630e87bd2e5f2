// IoQueue: batched, merged I/O on one Device (the block layer's plug).
//
//   auto plug = queue.plug();
//   plug.write(off, buf); plug.write(off2, buf2); ...
//   FSIO_TRY(plug.finish());
//
// finish() sorts the plugged requests by offset, merges contiguous ones of
// the same kind into one request (bounded by max_request bytes and
// max_segments iovecs), applies the end-of-device guard, submits the batch
// keeping at most `depth` in flight (one io_uring_submit per wave), reaps
// every completion, resubmits the rest of a short transfer, and returns the
// first error with the device, offset and size it happened at (Error::path
// and context: "card.img: write 1048576 bytes at 0x100000: Input/output
// error", errno in Error::sys_errno). Every error the queue returns names the
// device this way, create() and flush() included, so a caller adds only the
// step it was doing (FSIO_TRY_CTX(q.read(...), "read FAT copy 1")). Offsets
// in messages and calls are relative to the Device window. Buffers must
// stay valid until finish() returns; with O_DIRECT they must be aligned to
// the device's DIO alignment (checked: Errc::invalid_argument). A read that straddles the end of the device is
// truncated to whole sectors and its tail zero-filled; a write that straddles
// it is truncated; a request wholly beyond the end is an error.
//
// Writes are unordered inside one plug; a caller that needs ordering (data
// before metadata) finishes one plug (with flush) before starting the next.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/stats.hpp"

namespace fsio {

enum class SyncPolicy {
  none,         // leave it to the caller (or to the Device's O_DSYNC)
  dsync,        // every write carries RWF_DSYNC (REQ_SYNC)
  flush_after,  // one flush after each finished plug
};

struct QueueOptions {
  EngineKind engine = EngineKind::automatic;
  unsigned depth = 32;            // bound on requests in flight
  std::uint64_t max_request = 0;  // bytes per merged request; 0: device topology (>= 1 MiB)
  unsigned max_segments = 1024;   // iovecs per merged request (IOV_MAX)
  bool merge = true;
  SyncPolicy sync = SyncPolicy::none;
};

class IoQueue {
 public:
  // The engine comes from make_engine(options.engine, device.fd(), depth).
  static Result<IoQueue> create(Device& device, const QueueOptions& options = {});
  // Uses a caller-made engine on device.fd() instead (options.engine is
  // ignored; depth is bounded by the engine's): tests inject fault-injecting
  // or short-transferring engines this way.
  static Result<IoQueue> create(Device& device, std::unique_ptr<Engine> engine, const QueueOptions& options = {});
  IoQueue(IoQueue&&) noexcept;
  IoQueue& operator=(IoQueue&&) noexcept;
  ~IoQueue();

  class Plug {
   public:
    void read(std::uint64_t offset, std::span<std::byte> buf);
    void write(std::uint64_t offset, std::span<const std::byte> buf);
    std::size_t pending() const { return reqs_.size(); }
    std::uint64_t pending_bytes() const { return bytes_; }
    // Submit and wait for everything plugged; the plug is empty afterwards
    // and can be reused.
    Status finish();

   private:
    friend class IoQueue;
    explicit Plug(IoQueue& q) : q_(&q) {}
    struct Pending {
      IoOp op;
      std::uint64_t offset;
      std::byte* data;
      std::uint64_t len;
    };
    IoQueue* q_;
    std::vector<Pending> reqs_;
    std::uint64_t bytes_ = 0;
  };

  Plug plug() { return Plug(*this); }

  // One-request conveniences (a plug of one).
  Status read(std::uint64_t offset, std::span<std::byte> buf);
  Status write(std::uint64_t offset, std::span<const std::byte> buf);
  // One device flush (fdatasync), counted in stats.
  Status flush();

  Device& device() { return *dev_; }
  const Device& device() const { return *dev_; }
  Engine& engine() { return *engine_; }
  const IoStats& stats() const { return stats_; }
  const QueueOptions& options() const { return opts_; }

 private:
  IoQueue(Device& dev, QueueOptions opts, std::unique_ptr<Engine> engine);
  struct Unit;   // one merged request on its way through the engine
  struct Batch;  // one submit()'s units waiting, in flight, and its first error
  Status run(std::vector<Plug::Pending>& reqs);
  Status prepare(std::vector<Plug::Pending>& reqs, std::vector<Unit>& units);
  Status submit(std::vector<Unit>& units);
  unsigned queue_wave(Batch& batch);
  void complete(Batch& batch, const IoCompletion& completion);
  Status flush_engine();
  Device* dev_;
  QueueOptions opts_;
  std::unique_ptr<Engine> engine_;
  IoStats stats_;
};

}  // namespace fsio
