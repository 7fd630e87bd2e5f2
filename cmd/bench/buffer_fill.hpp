// What write buffers hold, as fio 3.33 makes them (io_u.c fill_io_buffer,
// lib/rand.c fill_random_buf_percentage, dedupe.c) when a job asks for
// compressible or duplicate data: buffer_compress_percentage,
// buffer_compress_chunk, dedupe_percentage, dedupe_mode,
// dedupe_working_set_percentage, dedupe_global.
//
// Every write's buffer is made afresh from a seed. A unique buffer takes the
// job's next seed; a duplicate one (dedupe_percentage of the writes, drawn
// per write) takes the seed of the last unique buffer (repeat) or of a page
// of the working set drawn uniformly (working_set). The working set is the
// job's first dedupe_working_set_percentage x size / bs unique buffers; with
// dedupe_global, as in fio, it is spread evenly over every job of the run in
// turn (pages_per_seed = pages / jobs from each), so jobs duplicate each
// other's data. Within a buffer each chunk of buffer_compress_chunk bytes
// (fio's default 512; 0: the whole request) is random for (100 - percentage)%
// of its bytes and zero for the rest, so it compresses to about that.
//
// The random bytes are ddbench's own (not fio's generator), so the data is
// not fio's byte for byte; its compressible share and its duplicate blocks
// are, within what chance gives.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bench {

enum class DedupeMode { repeat, working_set };

struct BufferContents {
  unsigned compress_percentage = 0;    // 0: incompressible; 100: zeros
  std::uint64_t compress_chunk = 512;  // fio's default; 0: the request
  unsigned dedupe_percentage = 0;
  DedupeMode dedupe_mode = DedupeMode::repeat;
  unsigned working_set_percentage = 5;  // fio's default
  bool global = false;                  // dedupe_global
  // Set by the job list: this job's number among all of the run's, and how
  // many there are (fio's thread_number), for dedupe_global.
  unsigned job_index = 0, job_count = 1;

  bool active() const { return compress_percentage || dedupe_percentage; }
};

class BufferFill {
 public:
  // `seed` is the run's; `size` the job's bytes and `bs` its write size,
  // which give the working set's pages.
  BufferFill(const BufferContents& c, std::uint64_t seed, std::uint64_t size, std::uint64_t bs);
  // Fills one write's buffer.
  void fill(std::span<std::byte> buf);

  // The seed of unique buffer n of job j (exposed for tests).
  std::uint64_t unique_seed(unsigned job, std::uint64_t n) const;
  // The seed of working-set page i of this job.
  std::uint64_t page_seed(std::uint64_t i) const;

 private:
  std::uint64_t next_seed();
  std::uint64_t draw();  // the dedupe decisions' generator

  BufferContents c_;
  std::uint64_t seed_;
  std::uint64_t pages_ = 0;
  std::uint64_t next_unique_ = 0;
  std::uint64_t last_unique_;
  std::uint64_t draw_state_;
};

}  // namespace bench
