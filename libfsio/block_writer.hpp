// BlockWriter: turns a stream of arbitrary (offset, bytes) segments into
// whole, aligned block writes (generic_file_buffered_write's lesson: fill a
// block before committing it).
//
// Segments are copied into block-sized staging buffers. A block is committed
// (queued for writing) once the stream leaves it; a block the stream only
// partly covers is read first and merged (read-modify-write), so only the
// partial first and last blocks of a contiguous run are ever read. Committed
// blocks are submitted through the IoQueue in plugs of at most
// `batch_bytes` (writeback's nr_to_write budget: stop at the budget, submit
// big merged extents). Overlapping segments: the later bytes win.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "libfsio/buffer.hpp"
#include "libfsio/io_queue.hpp"

namespace fsio {

class BlockWriter {
 public:
  // block_size: a multiple of the device's DIO alignment (e.g. 4096).
  BlockWriter(IoQueue& queue, std::uint32_t block_size, std::uint64_t batch_bytes = 8u << 20);

  Status write(std::uint64_t offset, std::span<const std::byte> data);
  // Commit the open block (read-modify-write if partial) and submit all.
  Status finish();

  std::uint64_t commits() const { return commits_; }        // blocks committed
  std::uint64_t edge_reads() const { return edge_reads_; }  // blocks read for RMW
  std::uint64_t segments() const { return segments_; }      // write() calls

 private:
  Status commit_open_block();
  Status submit_batch();

  IoQueue& q_;
  std::uint32_t bs_;
  std::uint64_t batch_bytes_;
  // The block being filled: its number, data, and which byte ranges are set.
  bool open_ = false;
  std::uint64_t open_block_ = 0;
  AlignedBuffer open_buf_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> covered_;  // [begin, end) within block
  // Committed blocks waiting for the next batch submission, by block number
  // (a later segment touching a staged block updates it in place).
  std::map<std::uint64_t, AlignedBuffer> staged_;
  std::uint64_t staged_bytes_ = 0;
  std::uint64_t commits_ = 0;
  std::uint64_t edge_reads_ = 0;
  std::uint64_t segments_ = 0;
};

}  // namespace fsio
