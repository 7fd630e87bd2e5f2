#include "cmd/img/feed.hpp"

#include <algorithm>

#include "cmd/img/decode.hpp"
#include "cmd/img/pool.hpp"
#include "cmd/img/save.hpp"
#include "libfsio/progress.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;
using BufferBin = Bin<fsio::AlignedBuffer>;

// Ownership of a buffer for the batches that point into it: back to its
// bin (kept alive by the holder) when the last of them is released.
std::shared_ptr<const void> hold(const std::shared_ptr<BufferBin>& bin, fsio::AlignedBuffer buf) {
  return std::shared_ptr<const void>(new fsio::AlignedBuffer(std::move(buf)), [bin](const fsio::AlignedBuffer* b) {
    bin->put(std::move(*const_cast<fsio::AlignedBuffer*>(b)));
    delete b;
  });
}

// Up to out.size() bytes; fewer only at the end of the image.
fsio::Result<std::size_t> read_full(RawInput& in, std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t n = FSIO_TRY(in.read(out.subspan(done)));
    if (n == 0) break;
    done += n;
  }
  return done;
}

std::string range_name(const Bmap& m, std::size_t i) {
  const BmapRange& r = m.ranges[i];
  return "range " + std::to_string(i) + " (blocks " + std::to_string(r.first) + "-" + std::to_string(r.last) + ")";
}

}  // namespace

fsio::Status Sender::send(std::vector<Piece> pieces, std::shared_ptr<const void> keep, std::uint64_t end) {
  if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
  auto b = std::make_shared<Batch>();
  b->keep = std::move(keep);
  b->end = end;
  for (const Piece& p : pieces) {
    if (written_) written_->add(p, keep_unused_);
    const Piece rest = head_.take(p);
    if (rest.length) b->pieces.push_back(rest);
  }
  end_ = end;
  bool any = false;
  for (Lane* l : lanes_) any |= l->push(b);
  if (!any) return make_error(Errc::io, "every target has failed");
  return {};
}

std::vector<Piece> split_zeros(const std::byte* data, std::uint64_t n, std::uint64_t base, std::uint64_t block) {
  std::vector<Piece> out;
  for (std::uint64_t at = 0; at < n; at += block) {
    const std::uint64_t len = std::min(block, n - at);
    const bool zero = all_zero({data + at, len});
    if (!out.empty() && (out.back().data == nullptr) == zero) {
      out.back().length += len;
      continue;
    }
    out.push_back({base + at, len, zero ? nullptr : data + at, false});
  }
  return out;
}

fsio::Status feed_stream(ImageReader& reader, unsigned threads, Sender& s) {
  const Header& h = reader.header();
  auto bin = std::make_shared<BufferBin>([n = h.frame_bytes] { return fsio::AlignedBuffer(n); });
  MapCursor cursor(h.runs);
  std::uint64_t pos = 0;
  auto end = decode_frames(reader, resolve_threads(threads), [&](Decoded& f) -> fsio::Status {
    std::vector<Piece> pieces;
    FSIO_TRY(walk_frame(h, cursor, f, &pos, [&](const Segment& seg) -> fsio::Status {
      pieces.push_back({seg.offset, seg.length, seg.data, seg.unused});
      return {};
    }));
    // The frame's bytes stay where the pieces point; decode gets an empty
    // buffer of the same size in their place for a later frame.
    fsio::AlignedBuffer frame = bin->get();
    std::swap(frame, f.data);
    return s.send(std::move(pieces), hold(bin, std::move(frame)), pos);
  });
  if (!end) return std::move(end).error();
  if (pos < h.image_bytes) FSIO_TRY(s.send({{pos, h.image_bytes - pos, nullptr, true}}, nullptr, h.image_bytes));
  return {};
}

fsio::Status feed_raw(RawInput& in, std::uint64_t block, Sender& s) {
  auto bin = std::make_shared<BufferBin>([] { return fsio::AlignedBuffer(kRawChunk); });
  for (;;) {
    fsio::AlignedBuffer buf = bin->get();
    const std::uint64_t at = in.position();
    const std::size_t n = FSIO_TRY(read_full(in, buf.span()));
    if (n == 0) break;
    auto pieces = split_zeros(buf.data(), n, at, block);
    FSIO_TRY(s.send(std::move(pieces), hold(bin, std::move(buf)), at + n));
    if (n < kRawChunk) break;
  }
  if (in.size() && in.position() != *in.size())
    return make_error(Errc::corrupt, "the image holds " + std::to_string(in.position()) + " bytes, " +
                                         std::to_string(*in.size()) + " were stated before it was read");
  return {};
}

fsio::Status feed_bmap(RawInput& in, const Bmap& m, Sender& s) {
  auto bin = std::make_shared<BufferBin>([] { return fsio::AlignedBuffer(kRawChunk); });
  std::optional<Digest> digest;
  if (!m.checksum_type.empty()) digest = FSIO_TRY(Digest::make(m.checksum_type));
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < m.ranges.size(); ++i) {
    const BmapRange& r = m.ranges[i];
    const std::uint64_t begin = r.first * m.block_size, end = std::min((r.last + 1) * m.block_size, m.image_size);
    FSIO_TRY(in.skip(begin - in.position()));
    // The whole range first, its checksum checked; only then any of it out.
    std::vector<std::pair<fsio::AlignedBuffer, std::uint64_t>> held;
    for (std::uint64_t at = begin; at < end;) {
      fsio::AlignedBuffer buf = bin->get();
      const auto want = std::size_t(std::min<std::uint64_t>(kRawChunk, end - at));
      const std::size_t n = FSIO_TRY(read_full(in, buf.span().first(want)));
      if (n < want)
        return make_error(Errc::corrupt, "the image ends at byte " + std::to_string(at + n) + ", inside " +
                                             range_name(m, i) + " of the bmap (ImageSize " +
                                             std::to_string(m.image_size) + ")");
      if (digest) digest->update(buf.span().first(n));
      held.emplace_back(std::move(buf), n);
      at += n;
    }
    if (digest) {
      const std::string sum = digest->finish();
      if (sum != r.checksum)
        return make_error(Errc::corrupt, "bytes " + std::to_string(begin) + "-" + std::to_string(end - 1) + ", " +
                                             range_name(m, i) + ": " + m.checksum_type + " " + sum +
                                             ", the bmap says " + r.checksum + "; nothing of this range was written");
    }
    if (begin > pos) FSIO_TRY(s.send({{pos, begin - pos, nullptr, true}}, nullptr, begin));
    std::uint64_t at = begin;
    for (auto& [buf, n] : held) {
      auto pieces = split_zeros(buf.data(), n, at, m.block_size);
      FSIO_TRY(s.send(std::move(pieces), hold(bin, std::move(buf)), at + n));
      at += n;
    }
    pos = end;
  }
  if (pos < m.image_size) FSIO_TRY(s.send({{pos, m.image_size - pos, nullptr, true}}, nullptr, m.image_size));
  return {};
}

}  // namespace img
