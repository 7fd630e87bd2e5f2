// verify(): every block an image holds compared with the target, through
// the same checked frames restore writes from; the first difference is
// named by block, byte and both values.
#include <chrono>
#include <cstring>

#include "cmd/img/decode.hpp"
#include "cmd/img/restore.hpp"
#include "cmd/img/save.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kBatch = 16u << 20;

// Segments waiting for one batched read of the target.
class Comparer {
 public:
  Comparer(fsio::IoQueue& q, const Header& h, bool unused) : q_(q), h_(h), unused_(unused), buf_(kBatch) {}

  fsio::Status add(const Segment& s) {
    if (s.unused && !unused_) return {};
    for (std::uint64_t done = 0; done < s.length;) {
      if (used_ == kBatch) FSIO_TRY(check());
      const std::uint64_t n = std::min(s.length - done, kBatch - used_);
      pending_.push_back({s.offset + done, n, s.data ? s.data + done : nullptr, s.unused});
      used_ += n;
      done += n;
    }
    return {};
  }

  // Reads what is pending and compares it; records the first difference.
  fsio::Status check() {
    auto plug = q_.plug();
    std::uint64_t at = 0;
    for (const Segment& s : pending_) {
      plug.read(s.offset, buf_.span().subspan(at, s.length));
      at += s.length;
    }
    FSIO_TRY(plug.finish());
    at = 0;
    for (const Segment& s : pending_) {
      if (!difference_) compare(s, buf_.data() + at);
      compared_ += s.length;
      at += s.length;
    }
    pending_.clear();
    used_ = 0;
    return {};
  }

  std::uint64_t compared() const { return compared_; }
  const std::optional<std::string>& difference() const { return difference_; }

 private:
  void compare(const Segment& s, const std::byte* got) {
    const bool same = s.data ? std::memcmp(s.data, got, s.length) == 0 : all_zero({got, s.length});
    if (same) return;
    std::uint64_t i = 0;
    while ((s.data ? s.data[i] : std::byte{0}) == got[i]) ++i;
    const std::uint64_t off = s.offset + i;
    const auto want = std::to_integer<unsigned>(s.data ? s.data[i] : std::byte{0});
    char text[64];
    std::snprintf(text, sizeof text, "0x%02X, the target has 0x%02X", want, std::to_integer<unsigned>(got[i]));
    difference_ = "block " + std::to_string(off / h_.block_size) + " (" +
                  (s.unused ? "unused, expected zeros"
                   : s.data ? "saved"
                            : "saved, all zeros") +
                  ") differs at byte " + std::to_string(off) + " (" + fsio::format_hex(off) + "): the image has " +
                  text;
  }

  fsio::IoQueue& q_;
  const Header& h_;
  bool unused_;
  fsio::AlignedBuffer buf_;
  std::vector<Segment> pending_;
  std::uint64_t used_ = 0, compared_ = 0;
  std::optional<std::string> difference_;
};

}  // namespace

fsio::Result<VerifyReport> verify(ImageReader& reader, const std::string& target, const VerifyOptions& o) {
  const Header& h = reader.header();
  fsio::OpenOptions oo;
  oo.offset = o.offset;
  auto dev = FSIO_TRY(fsio::Device::open(target, oo));
  const std::uint64_t a = dev.topology().dio_offset_align;
  if (dev.direct() && (h.block_size % a || h.image_bytes % a || dev.offset() % a)) {
    oo.direct = false;
    dev = FSIO_TRY(fsio::Device::open(target, oo));
  }
  if (dev.size() < h.image_bytes)
    return make_error(Errc::invalid_argument, std::to_string(dev.size()) +
                                                  " bytes, smaller than the image's filesystem (" +
                                                  std::to_string(h.image_bytes) + " bytes)")
        .at(target);
  auto queue = FSIO_TRY(fsio::IoQueue::create(dev, {.engine = o.engine}));
  Comparer cmp(queue, h, o.unused);
  MapCursor cursor(h.runs);
  std::uint64_t pos = 0;
  VerifyReport rep;
  auto end = decode_frames(reader, resolve_threads(o.threads), [&](Decoded& f) -> fsio::Status {
    FSIO_TRY(walk_frame(h, cursor, f, &pos, [&](const Segment& s) { return cmp.add(s); }));
    FSIO_TRY(cmp.check());  // the frame's buffer is reused after this call
    if (o.progress) o.progress->set(pos);
    rep.frames += 1;
    if (cmp.difference()) return make_error(Errc::corrupt, "differs");  // stop reading: the answer is known
    return {};
  });
  if (!end && !cmp.difference()) return std::move(end).error();
  if (!cmp.difference() && pos < h.image_bytes) {
    FSIO_TRY(cmp.add({pos, h.image_bytes - pos, nullptr, true}));
    FSIO_TRY(cmp.check());
  }
  rep.compared_bytes = cmp.compared();
  rep.difference = cmp.difference();
  return rep;
}

}  // namespace img
