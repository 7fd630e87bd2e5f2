#include "cmd/img/stream.hpp"

#include <algorithm>
#include <cstring>

#include "libfsio/size.hpp"

namespace img {

using fsio::Errc;
using fsio::make_error;

StreamReader::StreamReader(int fd, std::string name)
    : fd_(fd), kind_(fsio::fd_kind(fd)), name_(std::move(name)), buf_(1u << 20) {
  fsio::widen_pipe(fd);
}

fsio::Result<std::size_t> StreamReader::fill() {
  len_ = FSIO_TRY(fsio::read_some(fd_, kind_, buf_, name_, offset_));
  pos_ = 0;
  return len_;
}

fsio::Result<std::size_t> StreamReader::read_upto(std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    if (pos_ == len_) {
      // A large read goes straight to the caller's memory.
      if (out.size() - done >= buf_.size()) {
        const std::size_t n = FSIO_TRY(fsio::read_some(fd_, kind_, out.subspan(done), name_, offset_));
        if (n == 0) break;
        done += n;
        offset_ += n;
        continue;
      }
      if (FSIO_TRY(fill()) == 0) break;
    }
    const std::size_t n = std::min(len_ - pos_, out.size() - done);
    std::memcpy(out.data() + done, buf_.data() + pos_, n);
    pos_ += n;
    done += n;
    offset_ += n;
  }
  return done;
}

fsio::Error StreamReader::truncated(std::uint64_t done, std::uint64_t want, const std::string& what) const {
  return make_error(Errc::corrupt, name_ + ": truncated: the stream ends at byte " + std::to_string(offset_) + ", " +
                                       std::to_string(done) + " bytes into " + what + " of " + std::to_string(want));
}

fsio::Status StreamReader::read_exact(std::span<std::byte> out, const std::string& what) {
  const std::size_t done = FSIO_TRY(read_upto(out));
  if (done < out.size()) return truncated(done, out.size(), what);
  return {};
}

fsio::Status StreamReader::read_append(std::vector<std::byte>& out, std::uint64_t n, const std::string& what) {
  std::uint64_t done = 0;
  while (done < n) {
    const std::size_t at = out.size();
    const std::uint64_t room = out.capacity() > at ? out.capacity() - at : std::max<std::size_t>(at, 1u << 20);
    const auto step = std::size_t(std::min(n - done, room));
    out.resize(at + step);
    const std::size_t got = FSIO_TRY(read_upto(std::span(out).subspan(at)));
    done += got;
    if (got < step) {
      out.resize(at + got);
      return truncated(done, n, what);
    }
  }
  return {};
}

fsio::Status StreamReader::skip(std::uint64_t n, const std::string& what) {
  std::vector<std::byte> sink(std::min<std::uint64_t>(n, 1u << 20));
  for (std::uint64_t done = 0; done < n;) {
    const std::size_t step = std::size_t(std::min<std::uint64_t>(n - done, sink.size()));
    const std::size_t got = FSIO_TRY(read_upto({sink.data(), step}));
    done += got;
    if (got < step) return truncated(done, n, what);
  }
  return {};
}

fsio::Result<std::size_t> StreamReader::peek(std::span<std::byte> out) {
  FSIO_ASSERT(out.size() <= buf_.size());
  // Move what is buffered to the front, then fill behind it until enough.
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    len_ -= pos_;
    pos_ = 0;
  }
  while (len_ < out.size()) {
    const std::size_t n = FSIO_TRY(fsio::read_some(fd_, kind_, std::span(buf_).subspan(len_), name_, offset_ + len_));
    if (n == 0) break;
    len_ += n;
  }
  const std::size_t n = std::min(len_, out.size());
  std::memcpy(out.data(), buf_.data(), n);
  return n;
}

fsio::Result<bool> StreamReader::at_end() {
  if (pos_ < len_) return false;
  return FSIO_TRY(fill()) == 0;
}

fsio::Error ImageReader::at(std::uint64_t offset, fsio::Error e) const {
  return std::move(e).wrap(in_->name() + ": byte " + std::to_string(offset) + " (" + fsio::format_hex(offset) + ")");
}

fsio::Result<std::vector<std::byte>> ImageReader::read_record(std::uint32_t min, std::uint32_t max,
                                                              const std::string& what) {
  const std::uint64_t start = in_->offset();
  std::byte head[sizeof(RecordHead)];
  // "frame 3 index record head", "end record head" (not "end record record head").
  FSIO_TRY(in_->read_exact(head, what + (what.ends_with(" record") ? " head" : " record head")));
  auto size = check_record_head(head, min, max, what);
  if (!size) return at(start, std::move(size).error());
  std::vector<std::byte> rec;
  FSIO_TRY(in_->read_append(rec, *size, what));
  return rec;
}

fsio::Result<ImageReader> ImageReader::open(StreamReader& in) {
  ImageReader r(in);
  // The fixed part first: its sizes are checked before the map is read.
  std::byte head[sizeof(RecordHead)];
  FSIO_TRY(in.read_exact(head, "the header"));
  if (fsio::load<RecordHead>(head).magic != kSkippableMagic) {
    const bool zstd = fsio::load<RecordHead>(head).magic == 0xFD2FB528;
    return make_error(Errc::corrupt, in.name() + ": not an fsimg image (" +
                                         (zstd ? "a plain zstd stream" : "no fsimg header at byte 0") + ")");
  }
  const auto size = std::uint64_t(fsio::load<RecordHead>(head).size);
  std::vector<std::byte> rec(sizeof(HeaderFixed));
  if (size < rec.size())
    return r.at(0, make_error(Errc::corrupt, "header: record of " + std::to_string(size) + " bytes"));
  FSIO_TRY(in.read_exact(rec, "the header"));
  auto need = header_record_bytes(rec);
  if (!need) return r.at(8, std::move(need).error());
  if (*need != size)
    return r.at(0, make_error(Errc::corrupt, "header: record of " + std::to_string(size) + " bytes, its fields say " +
                                                 std::to_string(*need)));
  FSIO_TRY(in.read_append(rec, size - sizeof(HeaderFixed), "the header's map"));
  auto h = decode_header(rec);
  if (!h) return r.at(8, std::move(h).error());
  r.header_ = std::move(*h);
  r.header_bytes_ = in.offset();
  return r;
}

fsio::Result<std::variant<FrameRecord, End>> ImageReader::next(bool skip_data, std::vector<std::byte> reuse) {
  FSIO_ASSERT(!ended_);
  const std::uint64_t start = in_->offset();
  const Header& h = header_;
  const bool covered = next_block_ == h.mapped_blocks;
  const std::string what = covered ? "end record" : "frame " + std::to_string(sequence_) + " index";
  // A frame index holds at most two varints of 10 bytes per covered block.
  const std::uint64_t max_index = sizeof(FrameIndexFixed) + 20 * (kMaxFrameCover / h.block_size);
  auto rec =
      FSIO_TRY(read_record(sizeof(EndFixed), std::uint32_t(std::min<std::uint64_t>(max_index, UINT32_MAX)), what));
  using Next = std::variant<FrameRecord, End>;
  if (covered) return Next(FSIO_TRY(finish_end(std::move(rec), start)));
  if (record_tag(rec) == "FSIE")
    return at(start,
              make_error(Errc::corrupt, "end record after " + std::to_string(next_block_) + " of " +
                                            std::to_string(h.mapped_blocks) + " mapped blocks: frames are missing"));
  auto index = decode_frame_index(rec, h, sequence_, next_block_);
  if (!index) return at(start, std::move(index).error());
  FrameRecord f{std::move(*index), {}, start};
  const std::string data = "frame " + std::to_string(sequence_) + " data";
  if (skip_data) {
    FSIO_TRY(in_->skip(f.index.compressed_bytes, data));
  } else {
    f.compressed = std::move(reuse);
    f.compressed.clear();  // its capacity stays: no allocation for a frame no larger than the last
    FSIO_TRY(in_->read_append(f.compressed, f.index.compressed_bytes, data));
  }
  ++sequence_;
  next_block_ += f.index.covered_blocks;
  stored_ += f.index.stored_bytes;
  compressed_ += f.index.compressed_bytes;
  return Next(std::move(f));
}

fsio::Result<End> ImageReader::finish_end(std::vector<std::byte> rec, std::uint64_t start) {
  auto end = decode_end(rec);
  if (!end) return at(start, std::move(end).error());
  auto mismatch = [&](const char* field, std::uint64_t said, std::uint64_t seen) {
    return at(start, make_error(Errc::corrupt, std::string("end record: ") + field + " " + std::to_string(said) +
                                                   ", the stream holds " + std::to_string(seen)));
  };
  if (end->frames != sequence_) return mismatch("frames", end->frames, sequence_);
  if (end->covered_blocks != next_block_) return mismatch("covered_blocks", end->covered_blocks, next_block_);
  if (end->stored_bytes != stored_) return mismatch("stored_bytes", end->stored_bytes, stored_);
  if (end->compressed_bytes != compressed_) return mismatch("compressed_bytes", end->compressed_bytes, compressed_);
  if (end->stream_bytes != start) return mismatch("stream_bytes", end->stream_bytes, start);
  if (!FSIO_TRY(in_->at_end()))
    return at(in_->offset(), make_error(Errc::corrupt, "data after the end record (two images concatenated?)"));
  ended_ = true;
  return *end;
}

}  // namespace img
