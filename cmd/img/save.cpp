// save(): reader thread -> compression pool -> ordered writer (save.hpp).
#include "cmd/img/save.hpp"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "cmd/img/pool.hpp"
#include "cmd/img/stream.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

// A frame as read: stored blocks at the front of buf.
struct RawFrame {
  FrameIndex index;
  fsio::AlignedBuffer buf;
};

// A compression output buffer, not zero-filled: its pages are touched only
// as far as zstd writes (about a third of the bound at level 3), which
// keeps the resident size near what the frames really take.
struct OutBuf {
  std::unique_ptr<std::byte[]> data;
  std::size_t capacity = 0;
};

// A frame compressed. Its raw buffer went back to the reader's bin as soon
// as it was compressed; out goes back to its bin once written.
struct Packed {
  FrameIndex index;
  OutBuf out;  // index.compressed_bytes used
};

using SavePool = OrderedPool<RawFrame, fsio::Result<Packed>>;

struct ReadState {
  fsio::IoQueue* queue;
  const Header* header;
  SavePool* pool;
  Bin<fsio::AlignedBuffer>* bin;
};

// Reads `n` map blocks (the cursor's next) into buf at `stored`, then
// squeezes out the all-zero ones, recording them as zero runs relative to
// the frame's first block (`covered` blocks in). Returns the new stored size.
fsio::Result<std::uint64_t> read_chunk(ReadState& s, MapCursor& cur, std::uint64_t n, RawFrame& f, std::uint64_t stored,
                                       std::uint64_t covered) {
  const std::uint32_t bs = s.header->block_size;
  auto plug = s.queue->plug();
  std::uint64_t pos = stored;
  for (const Run& r : cur.take(n)) {
    plug.read(r.start * bs, f.buf.span().subspan(pos, r.length * bs));
    pos += r.length * bs;
  }
  FSIO_TRY(plug.finish());
  std::byte* data = f.buf.data();
  std::uint64_t w = stored;
  auto& zeros = f.index.zero_runs;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t src = stored + i * bs;
    if (all_zero({data + src, bs})) {
      const std::uint64_t ordinal = covered + i;
      if (!zeros.empty() && zeros.back().end() == ordinal) ++zeros.back().length;
      else zeros.push_back({ordinal, 1});
      continue;
    }
    if (w != src) std::memmove(data + w, data + src, bs);
    w += bs;
  }
  return w;
}

// The reader thread's work: every frame of the map, in order, into the pool.
fsio::Status read_frames(ReadState& s) {
  const Header& h = *s.header;
  const std::uint32_t bs = h.block_size;
  const std::uint64_t cover_cap = kMaxFrameCover / bs;
  MapCursor cur(h.runs);
  std::uint32_t seq = 0;
  while (cur.ordinal() < h.mapped_blocks) {
    RawFrame f{{}, s.bin->get()};
    f.index.sequence = seq;
    f.index.first_block = cur.ordinal();
    std::uint64_t stored = 0, covered = 0;
    while (cur.ordinal() < h.mapped_blocks && stored < h.frame_bytes && covered < cover_cap) {
      if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
      const std::uint64_t n =
          std::min({(h.frame_bytes - stored) / bs, cover_cap - covered, h.mapped_blocks - cur.ordinal()});
      stored = FSIO_TRY(read_chunk(s, cur, n, f, stored, covered));
      covered += n;
    }
    f.index.covered_blocks = covered;
    f.index.stored_bytes = stored;
    if (!s.pool->submit(std::move(f))) return {};  // the writer gave up; it has the error
    ++seq;
  }
  return {};
}

// A compression worker's context, made on first use.
struct Compressor {
  ZSTD_CCtx* cctx = nullptr;
  ~Compressor() { ZSTD_freeCCtx(cctx); }
};

// zstd's window covers a whole frame. Its level table picks the window for
// streaming decoders that must bound their memory (2 MiB at level 3); a
// frame is decompressed whole into memory anyway, so a frame-sized window
// costs the reader nothing and finds matches further back (a 2 GiB ext4 of
// /usr files: 1.9% smaller output at level 3, the same time and memory).
int window_log(std::uint64_t frame_bytes) {
  return std::max(10, int(std::bit_width(frame_bytes - 1)));  // 10: ZSTD_WINDOWLOG_MIN
}

fsio::Result<Packed> compress(RawFrame& f, Compressor& c, int level, int wlog, Bin<fsio::AlignedBuffer>& raws,
                              Bin<OutBuf>& outs) {
  if (c.cctx == nullptr) {
    c.cctx = ZSTD_createCCtx();
    if (c.cctx == nullptr) return make_error(Errc::io, "zstd: cannot create a compression context");
    ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_windowLog, wlog);
  }
  // Output buffers are reused at their largest size, never reallocated.
  Packed p{std::move(f.index), outs.get()};
  const std::size_t bound = ZSTD_compressBound(p.index.stored_bytes);
  if (p.out.capacity < bound) p.out = {std::unique_ptr<std::byte[]>(new std::byte[bound]), bound};
  const std::size_t n = ZSTD_compress2(c.cctx, p.out.data.get(), p.out.capacity, f.buf.data(), p.index.stored_bytes);
  raws.put(std::move(f.buf));  // the reader may fill it again while this frame waits its turn
  if (ZSTD_isError(n))
    return make_error(Errc::io,
                      "zstd: compressing frame " + std::to_string(p.index.sequence) + ": " + ZSTD_getErrorName(n));
  p.index.compressed_bytes = n;
  return p;
}

// The frame size, checked, and the header fields save() stamps.
fsio::Status set_stream_options(Header& h, const SaveOptions& o) {
  if (o.frame_bytes < h.block_size || o.frame_bytes % h.block_size || o.frame_bytes > kMaxFrameBytes)
    return make_error(Errc::invalid_argument, "frame size " + std::to_string(o.frame_bytes) +
                                                  ": must be a multiple of the block size up to 64 MiB");
  h.frame_bytes = o.frame_bytes;
  h.level = o.level;
  h.tool = o.tool;
  h.created = o.created;
  return {};
}

// The source, with O_DIRECT unless its unit is larger than a block.
fsio::Result<fsio::Device> open_source_for_save(const Source& source, std::uint32_t block_size) {
  fsio::OpenOptions oo;
  oo.offset = source.offset;
  auto dev = FSIO_TRY(fsio::Device::open(source.path, oo));
  if (block_size % dev.topology().dio_offset_align != 0 && dev.direct()) {
    oo.direct = false;  // blocks smaller than the device's O_DIRECT unit: let the page cache split them
    dev = FSIO_TRY(fsio::Device::open(source.path, oo));
  }
  return dev;
}

// Where the stream goes.
struct StreamOut {
  int fd;
  fsio::FdKind kind;
  const std::string& name;
};

// One compressed frame appended to the stream: its index record, then its data.
fsio::Status write_frame(const StreamOut& out, const Packed& p, std::uint32_t block_size, const SaveOptions& o,
                         SaveReport& rep) {
  auto index = encode_frame_index(p.index);
  FSIO_TRY(fsio::write_all(out.fd, out.kind, index, out.name, rep.stream_bytes));
  const std::span<const std::byte> data(p.out.data.get(), p.index.compressed_bytes);
  FSIO_TRY(fsio::write_all(out.fd, out.kind, data, out.name, rep.stream_bytes + index.size()));
  rep.stream_bytes += index.size() + data.size();
  rep.frames += 1;
  // Progress counts frames written, not read: at a slow level the reader
  // runs ahead by the pool's depth, and 100% would come long before the end.
  if (o.progress) o.progress->add(p.index.covered_blocks * block_size);
  rep.stored_bytes += p.index.stored_bytes;
  rep.compressed_bytes += data.size();
  for (const Run& z : p.index.zero_runs) rep.zero_bytes += z.length * block_size;
  return {};
}

// The compressed frames in sequence order, as the pool hands them over,
// until the last one, an error or Ctrl-C.
fsio::Status write_frames(SavePool& pool, const StreamOut& out, std::uint32_t block_size, const SaveOptions& o,
                          Bin<OutBuf>& outs, SaveReport& rep) {
  while (auto packed = pool.next()) {
    if (!*packed) return std::move(*packed).error();
    // Ctrl-C while the workers still compress what the reader has already
    // read: stop here too, before the end record makes the image whole.
    if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
    Packed& p = **packed;
    FSIO_TRY(write_frame(out, p, block_size, o, rep));
    outs.put(std::move(p.out));
  }
  return {};
}

// Every frame of the map: read by a reader thread, compressed by the pool's
// workers, written by this thread in order. The first error stops all three.
fsio::Status save_frames(fsio::IoQueue& queue, const Header& h, const SaveOptions& o, const StreamOut& out,
                         const std::string& source, SaveReport& rep) {
  std::vector<Compressor> ctx(rep.threads);
  const int wlog = window_log(h.frame_bytes);
  Bin<fsio::AlignedBuffer> bin([&] { return fsio::AlignedBuffer(h.frame_bytes); });
  Bin<OutBuf> outs([] { return OutBuf(); });
  // One frame queued beyond the workers: a worker that finishes before the
  // frame ahead of it has something to do; more only holds memory.
  SavePool pool(rep.threads, rep.threads + 1,
                [&](RawFrame& f, unsigned worker) { return compress(f, ctx[worker], o.level, wlog, bin, outs); });
  ReadState rs{&queue, &h, &pool, &bin};
  fsio::Status read_status;
  std::thread reader([&] {
    read_status = read_frames(rs);
    if (read_status) pool.close();
    else pool.stop();
  });
  const fsio::Status write_status = write_frames(pool, out, h.block_size, o, outs, rep);
  pool.stop();
  reader.join();
  if (!read_status) return fsio::Error(read_status.error()).at(source);
  return write_status;
}

}  // namespace

unsigned resolve_threads(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

bool all_zero(std::span<const std::byte> d) {
  if (d.empty()) return true;
  // The first byte zero and every byte equal to the one before it.
  return d[0] == std::byte{0} && std::memcmp(d.data(), d.data() + 1, d.size() - 1) == 0;
}

fsio::Result<SaveReport> save(Source& source, int out_fd, const std::string& out_name, const SaveOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  Header& h = source.header;
  FSIO_TRY(set_stream_options(h, o));
  auto dev = FSIO_TRY(open_source_for_save(source, h.block_size));
  auto queue = FSIO_TRY(fsio::IoQueue::create(dev, {.engine = o.engine}));

  SaveReport rep;
  rep.threads = resolve_threads(o.threads);
  rep.direct = dev.direct();
  rep.mapped_bytes = h.mapped_blocks * h.block_size;
  // The stream (FORMAT.md): the header, the frames, the end record.
  const auto header = encode_header(h);
  fsio::widen_pipe(out_fd);
  const StreamOut out{out_fd, fsio::fd_kind(out_fd), out_name};
  FSIO_TRY(fsio::write_all(out.fd, out.kind, header, out.name, 0));
  rep.stream_bytes = header.size();
  FSIO_TRY(save_frames(queue, h, o, out, source.path, rep));
  End end{rep.frames, h.mapped_blocks, rep.stored_bytes, rep.compressed_bytes, rep.stream_bytes};
  FSIO_TRY(fsio::write_all(out.fd, out.kind, encode_end(end), out.name, rep.stream_bytes));
  rep.stream_bytes += sizeof(RecordHead) + sizeof(EndFixed);
  rep.read_stats = queue.stats();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace img
