#include "cmd/img/target.hpp"

#include <fcntl.h>
#include <linux/falloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kUnit = 512;  // head bookkeeping granularity

}  // namespace

fsio::Status zero_range(const fsio::Device& dev, std::uint64_t offset, std::uint64_t length) {
  const std::uint64_t abs = dev.offset() + offset;
  if (::fallocate(dev.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(abs), off_t(length)) == 0) return {};
  const int err = errno;
  if (err == EOPNOTSUPP || err == EINVAL || err == ENOSYS || err == ENODEV)
    return make_error(Errc::unsupported, "cannot punch a hole or offload zeroing").at(dev.path());
  return fsio::errno_error(err, "zeroing " + std::to_string(length) + " bytes at byte " + std::to_string(offset))
      .at(dev.path());
}

fsio::Result<bool> zero_without_data(const fsio::Device& dev, std::uint64_t offset, std::uint64_t length,
                                     bool& supported, std::string& zeroing) {
  if (length < kZeroRangeMin || !supported) return false;
  auto z = zero_range(dev, offset, length);
  if (z) {
    zeroing = dev.is_block_device() ? "write zeroes" : "punch hole";
    return true;
  }
  if (z.error().code != Errc::unsupported) return std::move(z).error();
  supported = false;
  return false;
}

TargetWriter::TargetWriter(fsio::IoQueue* queue, const Header& h, bool keep_unused, fsio::Progress* progress)
    : q_(queue),
      h_(h),
      keep_unused_(keep_unused),
      progress_(progress),
      cursor_(h.runs),
      head_end_(std::min(kHeadBytes, h.image_bytes)),
      head_((head_end_ + 4095) / 4096 * 4096),
      head_set_((head_end_ + kUnit - 1) / kUnit, false),
      zeros_(kZeroBuffer) {
  if (q_) {
    plug_.emplace(q_->plug());
    flusher_.emplace([dev = &q_->device()] { return dev->flush(); });
  }
  rep_.zeroing = "written";
}

void TargetWriter::hold_head(const Segment& s) {
  const std::uint64_t end = std::min(s.offset + s.length, head_end_);
  if (s.data) std::memcpy(head_.data() + s.offset, s.data, end - s.offset);
  else std::memset(head_.data() + s.offset, 0, end - s.offset);
  for (std::uint64_t u = s.offset / kUnit; u < (end + kUnit - 1) / kUnit; ++u) head_set_[u] = true;
}

fsio::Status TargetWriter::submit() {
  if (progress_) progress_->set(seen_);
  if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
  if (!plug_) return {};
  FSIO_TRY(flusher_->status());
  unflushed_ += plug_->pending_bytes();
  FSIO_TRY(plug_->finish());
  if (unflushed_ >= kFlushEvery) {
    flusher_->request();
    unflushed_ = 0;
  }
  return {};
}

fsio::Status TargetWriter::zero(std::uint64_t offset, std::uint64_t length) {
  if (!q_) return {};
  if (FSIO_TRY(zero_without_data(q_->device(), offset, length, zero_range_ok_, rep_.zeroing))) {
    rep_.zero_punched += length;
    return {};
  }
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t n = std::min(kZeroBuffer, length - done);
    plug_->write(offset + done, zeros_.span().first(n));
    done += n;
    if (plug_->pending_bytes() >= kPlugBytes) FSIO_TRY(submit());
  }
  rep_.zero_written += length;
  return {};
}

fsio::Status TargetWriter::segment(const Segment& seg) {
  Segment s = seg;
  seen_ = s.offset + s.length;
  if (s.unused && keep_unused_) {
    rep_.kept_bytes += s.length;
    return {};
  }
  if (s.offset < head_end_) {
    hold_head(s);
    const std::uint64_t cut = std::min(s.length, head_end_ - s.offset);
    // Written with the head at the end, and counted now, as what follows is.
    (s.data ? rep_.data_bytes : rep_.zero_written) += cut;
    s.offset += cut;
    s.length -= cut;
    if (s.data) s.data += cut;
    if (s.length == 0) return {};
  }
  if (s.data == nullptr) return zero(s.offset, s.length);
  rep_.data_bytes += s.length;
  if (plug_) {
    plug_->write(s.offset, {s.data, s.length});
    if (plug_->pending_bytes() >= kPlugBytes) FSIO_TRY(submit());
  }
  return {};
}

fsio::Status TargetWriter::frame(const Decoded& f) {
  FSIO_TRY(walk_frame(h_, cursor_, f, &pos_, [&](const Segment& s) { return segment(s); }));
  // The frame's buffer is reused after this call: everything from it goes now.
  FSIO_TRY(submit());
  rep_.frames += 1;
  return {};
}

fsio::Status TargetWriter::finish() {
  if (pos_ < h_.image_bytes) FSIO_TRY(segment({pos_, h_.image_bytes - pos_, nullptr, true}));
  pos_ = h_.image_bytes;
  FSIO_TRY(submit());
  if (!q_) return {};
  FSIO_TRY(flusher_->stop());
  FSIO_TRY(q_->flush());
  writing_head_ = true;
  // The head, in runs of what the image sets there.
  for (std::uint64_t u = 0; u < head_set_.size();) {
    if (!head_set_[u]) {
      ++u;
      continue;
    }
    std::uint64_t v = u;
    while (v < head_set_.size() && head_set_[v]) ++v;
    const std::uint64_t begin = u * kUnit, end = std::min(v * kUnit, head_end_);
    plug_->write(begin, head_.span().subspan(begin, end - begin));
    u = v;
  }
  FSIO_TRY(submit());
  FSIO_TRY(q_->flush());
  if (progress_) progress_->set(pos_);
  rep_.write_stats = q_->stats();
  return {};
}

}  // namespace img
