// Writeback of one file's data: the page cache and ext4_writepages, in
// user space (DESIGN.md lessons 2 and 4).
//
// Input arrives as segments of any size and is copied (or read directly)
// into a contiguous, aligned dirty buffer of up to `dirty_limit` bytes (two
// halves of it when a reader thread fills one while the other drains), so
// a block is filled completely before it is written, and written exactly
// once. The buffer grows with the input: a regular file's gets its size (at
// most the limit), a pipe's starts at 1 MiB and doubles up to the limit, so
// memory follows the data, not the option. When the buffer is full, and at
// the end, writeback passes drain it:
// each pass maps at most `chunk` bytes (nr_to_write), allocating whole
// contiguous runs near the previous one (delayed allocation: a block is
// only allocated once its data is complete, and never zeroed first), and
// submits each run as one request through a plug that IoQueue merges and
// splits at max_request. A pass never goes past its budget and never
// trickles out partial blocks. With `sparse`, all-zero blocks become holes.
//
// Why not libfsio's BlockWriter: it coalesces segments at device offsets
// known when the bytes arrive, and reads a partial edge block back from
// the device. Here the device offset is only chosen at writeback (delayed
// allocation, so runs are long and --sparse can skip zero blocks), and a
// new file's partial last block is zero-padded, never read. The dirty
// buffer does BlockWriter's job for this case: blocks are filled before
// they are committed, and WritebackStats counts each committed once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "ext/alloc.hpp"
#include "ext/extent.hpp"
#include "libfsio/progress.hpp"

namespace ext {

// Where a file's bytes come from.
class Source {
 public:
  virtual ~Source() = default;
  // Up to buf.size() bytes; 0 at the end. May be called from another thread
  // than the one that made the Source (FileWriter::stream reads on its own).
  virtual fsio::Result<std::size_t> read(std::span<std::byte> buf) = 0;
  // The exact size when known at the start (a regular file, even an empty
  // one); nullopt for a pipe or a socket.
  virtual std::optional<std::uint64_t> size() const { return std::nullopt; }
  // Makes a read() that waits for input give up soon (returning 0).
  virtual void cancel() {}
};

// Data of many small files gathered into one plug (put of a whole tree):
// each file's buffer is kept until the plug is submitted, at `limit` bytes
// or by flush(), so 10,000 files of 4 KiB cost a few large submissions, not
// 10,000 small ones.
class DataBatch {
 public:
  DataBatch(fsio::IoQueue& queue, std::uint64_t limit) : plug_(queue.plug()), limit_(limit) {}
  fsio::IoQueue::Plug& plug() { return plug_; }
  fsio::Status adopt(fsio::AlignedBuffer buf);  // keeps `buf` alive; submits at the limit
  fsio::Status flush();

 private:
  fsio::IoQueue::Plug plug_;
  std::vector<fsio::AlignedBuffer> bufs_;
  std::uint64_t limit_;
};

struct WritebackOptions {
  std::uint64_t dirty_limit = 64u << 20;  // bytes of dirty data buffered at most
  std::uint64_t chunk = 16u << 20;        // bytes mapped and submitted per pass
  bool sparse = false;                    // all-zero blocks become holes
  DataBatch* batch = nullptr;             // files that fit the buffer go through this
};

struct WritebackStats {
  std::uint64_t segments = 0;          // input segments received
  std::uint64_t blocks_committed = 0;  // data blocks written (each once)
  std::uint64_t hole_blocks = 0;       // all-zero blocks left as holes
  std::uint64_t passes = 0;            // writeback passes
  std::uint64_t runs = 0;              // contiguous runs allocated and submitted
};

class FileWriter {
 public:
  // `goal`: the block to allocate near (the inode's group); `size`, the
  // input's size when known, bounds the buffer for small inputs (an empty
  // file gets no more than a block).
  FileWriter(Filesystem& fs, Allocator& alloc, std::uint64_t goal, const WritebackOptions& options,
             std::optional<std::uint64_t> size);

  // Appends a segment (copied into the dirty buffer).
  fsio::Status write(std::span<const std::byte> data);
  // Zero-copy input: free room in the dirty buffer to read into, then
  // produced(n) for the bytes that arrived there.
  fsio::Result<std::span<std::byte>> space();
  void produced(std::size_t n);
  // Writes back everything left, the last block zero-padded.
  fsio::Status finish();
  // The whole input, read on a second thread into one half of the buffer
  // while the other half is written back (the kernel's flusher running
  // beside the writer), then finish(). The I/O queue is only used by the
  // calling thread.
  fsio::Status stream(Source& src);

  const std::vector<Extent>& extents() const { return extents_; }
  std::uint64_t size() const { return base_ + fill_; }
  std::uint64_t data_blocks() const { return data_blocks_; }
  const WritebackStats& stats() const { return stats_; }

  std::function<bool()> interrupted;   // polled before each pass
  fsio::Progress* progress = nullptr;  // counts bytes as they are written

 private:
  // Writeback passes over `bytes` (whole blocks) of the buffer from `buf_offset`,
  // holding the file's data from base_.
  // `last`: no more data follows these bytes.
  fsio::Status drain(std::span<std::byte> data, std::uint64_t bytes, bool last);
  fsio::Status pass(std::span<std::byte> data, std::uint64_t logical, std::uint64_t nblocks);
  fsio::Status map_and_queue(fsio::IoQueue::Plug& plug, std::span<std::byte> data, std::uint64_t logical,
                             std::uint64_t n);
  // Replaces `buf` with one twice as large (first_ at first, at most
  // `limit`), keeping its first `keep` bytes.
  void grow(fsio::AlignedBuffer& buf, std::uint64_t keep, std::uint64_t limit) const;

  // The first allocation for input of unknown size: what a pipe holds
  // (libfsio/pipe.hpp widens it to 1 MiB).
  static constexpr std::uint64_t kFirstBuffer = 1u << 20;

  Filesystem& fs_;
  Allocator& alloc_;
  std::uint64_t goal_;
  WritebackOptions o_;
  std::uint32_t bs_;
  std::uint64_t cap_ = 0;    // the most the dirty buffer holds: the limit, or less for a small input
  std::uint64_t first_ = 0;  // its first allocation: cap_ for input of known size, else kFirstBuffer
  fsio::AlignedBuffer buf_;  // grows with the data, up to cap_ (one buffer, or two halves in stream())
  std::uint64_t base_ = 0;   // file offset of buf_[0] (block-aligned)
  std::uint64_t fill_ = 0;   // bytes of buf_ holding data
  std::vector<Extent> extents_;
  std::uint64_t data_blocks_ = 0;
  WritebackStats stats_;
  bool batched_ = false;          // this file's one pass goes into o_.batch
  bool bitmaps_checked_ = false;  // Allocator::check_all_bitmaps done
};

}  // namespace ext
