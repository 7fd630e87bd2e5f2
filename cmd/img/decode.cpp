#include "cmd/img/decode.hpp"

#include <zstd.h>

#include <mutex>
#include <thread>

#include "cmd/img/pool.hpp"
#include "libfsio/progress.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

struct Decompressor {
  ZSTD_DCtx* dctx = nullptr;
  ~Decompressor() { ZSTD_freeDCtx(dctx); }
};

std::string where(const FrameRecord& f) {
  return "frame " + std::to_string(f.index.sequence) + " (index at byte " + std::to_string(f.offset) + ")";
}

// Decompresses one frame into a buffer of frame_bytes: exactly one zstd
// frame, whose header states the stored size, whose checksum matches.
fsio::Result<Decoded> decompress(FrameRecord& f, Decompressor& d, Bin<fsio::AlignedBuffer>& bin,
                                 Bin<std::vector<std::byte>>& inputs, const std::string& name) {
  auto fail = [&](const std::string& why) { return make_error(Errc::corrupt, name + ": " + where(f) + ": " + why); };
  if (d.dctx == nullptr && (d.dctx = ZSTD_createDCtx()) == nullptr) return fail("cannot create a zstd context");
  const auto* src = f.compressed.data();
  const std::size_t n = f.compressed.size();
  const unsigned long long size = ZSTD_getFrameContentSize(src, n);
  if (size == ZSTD_CONTENTSIZE_ERROR) return fail("not a zstd frame");
  if (size != f.index.stored_bytes)
    return fail("the zstd frame holds " +
                (size == ZSTD_CONTENTSIZE_UNKNOWN ? std::string("an unknown number of") : std::to_string(size)) +
                " bytes, the index says " + std::to_string(f.index.stored_bytes));
  const std::size_t frame = ZSTD_findFrameCompressedSize(src, n);
  if (ZSTD_isError(frame)) return fail(std::string("zstd: ") + ZSTD_getErrorName(frame));
  if (frame != n)
    return fail("the zstd frame is " + std::to_string(frame) + " bytes, the index says " + std::to_string(n));
  // RFC 8878 3.1.1.1.1: the Frame_Header_Descriptor after the 4-byte magic;
  // bit 2 is Content_Checksum_flag.
  if (n < 5 || !((std::to_integer<unsigned>(src[4]) >> 2) & 1)) return fail("the zstd frame has no checksum");
  Decoded out{std::move(f.index), f.offset, bin.get()};
  const std::size_t got = ZSTD_decompressDCtx(d.dctx, out.data.data(), out.index.stored_bytes, src, n);
  if (ZSTD_isError(got)) return fail(std::string("zstd: ") + ZSTD_getErrorName(got));
  if (got != out.index.stored_bytes) return fail("decompressed to " + std::to_string(got) + " bytes");
  inputs.put(std::move(f.compressed));  // for the input thread's next frame
  return out;
}

using Pool = OrderedPool<FrameRecord, fsio::Result<Decoded>>;

}  // namespace

fsio::Result<End> decode_frames(ImageReader& reader, unsigned threads,
                                const std::function<fsio::Status(Decoded&)>& sink) {
  const std::size_t frame_bytes = reader.header().frame_bytes;
  const std::string name = reader.name();
  std::vector<Decompressor> ctx(threads);
  Bin<fsio::AlignedBuffer> bin([&] { return fsio::AlignedBuffer(frame_bytes); });
  Bin<std::vector<std::byte>> inputs([] { return std::vector<std::byte>(); });
  // One frame queued beyond the workers; each more costs a frame buffer,
  // zeroed and faulted in (perf: clear_page 14% of a restore's CPU).
  Pool pool(threads, threads + 1, [&](FrameRecord& f, unsigned w) { return decompress(f, ctx[w], bin, inputs, name); });
  std::optional<fsio::Result<End>> end;
  std::thread input([&] {
    for (;;) {
      if (fsio::InterruptGuard::requested()) {
        end = make_error(Errc::interrupted, "interrupted");
        break;
      }
      auto rec = reader.next(false, inputs.get());
      if (!rec) {
        end = std::move(rec).error();
        break;
      }
      if (auto* e = std::get_if<End>(&*rec)) {
        end = *e;
        break;
      }
      if (!pool.submit(std::move(std::get<FrameRecord>(*rec)))) return;
    }
    pool.close();  // the frames before the end (or the damage) still go to the sink
  });
  fsio::Status status;
  while (auto frame = pool.next()) {
    if (fsio::InterruptGuard::requested()) {
      status = make_error(Errc::interrupted, "interrupted");
      break;
    }
    if (!*frame) {
      status = std::move(*frame).error();
      break;
    }
    status = sink(**frame);
    if (!status) break;
    bin.put(std::move((*frame)->data));
  }
  pool.stop();
  input.join();
  if (!status) return std::move(status).error();
  if (!end) return make_error(Errc::interrupted, "interrupted");
  return std::move(*end);
}

fsio::Status walk_frame(const Header& h, MapCursor& cursor, const Decoded& frame, std::uint64_t* pos,
                        const std::function<fsio::Status(const Segment&)>& fn) {
  const std::uint64_t bs = h.block_size;
  const auto& zeros = frame.index.zero_runs;
  std::size_t zi = 0;
  std::uint64_t rel = 0;  // ordinal relative to the frame's first block
  const std::byte* data = frame.data.data();
  for (const Run& r : cursor.take(frame.index.covered_blocks)) {
    if (r.start * bs > *pos) FSIO_TRY(fn({*pos, r.start * bs - *pos, nullptr, true}));
    std::uint64_t done = 0;
    while (done < r.length) {
      while (zi < zeros.size() && zeros[zi].end() <= rel) ++zi;
      const bool zero = zi < zeros.size() && zeros[zi].start <= rel;
      const std::uint64_t until = zero ? zeros[zi].end() : zi < zeros.size() ? zeros[zi].start : UINT64_MAX;
      const std::uint64_t n = std::min(r.length - done, until - rel);
      const std::uint64_t off = (r.start + done) * bs;
      // The last block of an image may stop short of a whole block.
      const std::uint64_t len = std::min(n * bs, h.image_bytes - off);
      FSIO_TRY(fn({off, len, zero ? nullptr : data, false}));
      if (!zero) data += n * bs;
      done += n;
      rel += n;
    }
    *pos = r.end() * bs;
  }
  *pos = std::min(*pos, h.image_bytes);
  return {};
}

}  // namespace img
