// TreeFill's second step (see tree_fill.hpp): the source's contents copied
// into the blocks the plan gave them. Each content is gathered in an
// aligned buffer of at most kBufferBytes; a full buffer, or a content's
// last bytes (its last block zero-padded), goes into the data batch, which
// submits one plug at `batch_bytes`: thousands of small files cost a few
// large submissions, and memory holds at most a batch and a buffer.
#include <algorithm>
#include <cstring>

#include "ext/tree_fill.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kBufferBytes = 4u << 20;

class FillSink : public fsio::ContentSink {
 public:
  FillSink(const fsio::Tree& tree, const std::vector<TreeFill::Placement>& places, std::uint32_t block_size,
           DataBatch& batch, const TreeFillOptions& o, TreeFillReport& rep)
      : tree_(tree), places_(places), bs_(block_size), batch_(batch), o_(o), rep_(rep), done_(places.size(), 0) {}

  fsio::Result<std::span<std::byte>> reserve(std::uint32_t content, std::uint64_t offset, std::uint64_t want) override {
    if (o_.interrupted && o_.interrupted())
      return make_error(Errc::interrupted, "interrupted before the tree's data was all written; nothing links it");
    if (content >= places_.size() || offset != done_[content] || offset + want > places_[content].size)
      return make_error(Errc::corrupt, where(content) + ": more bytes than listed (" +
                                           std::to_string(places_[content].size) + "); it changed while read");
    if (!buf_.size() || content != cur_) start(content, offset);
    return buf_.span().subspan(fill_, std::size_t(std::min<std::uint64_t>(buf_.size() - fill_, want)));
  }

  fsio::Status commit(std::uint32_t content, std::uint64_t offset, std::size_t n) override {
    fill_ += n;
    done_[content] = offset + n;
    if (o_.progress) o_.progress->add(n);
    if (fill_ == buf_.size() || done_[content] == places_[content].size) return emit();
    return {};
  }

  // Every content arrived whole.
  fsio::Status check_complete() const {
    for (std::uint32_t c = 0; c < places_.size(); ++c)
      if (done_[c] != places_[c].size)
        return make_error(Errc::corrupt, where(c) + ": " + std::to_string(done_[c]) + " bytes read of " +
                                             std::to_string(places_[c].size) + " listed; it changed while read");
    return {};
  }

 private:
  std::string where(std::uint32_t content) const {
    return content < tree_.contents.size() ? tree_.where(tree_.contents[content].node) : "a content";
  }

  void start(std::uint32_t content, std::uint64_t offset) {
    cur_ = content;
    base_ = offset;
    fill_ = 0;
    const std::uint64_t left = (places_[content].size - offset + bs_ - 1) / bs_ * bs_;
    buf_ = fsio::AlignedBuffer(std::size_t(std::min(left, kBufferBytes)));
  }

  // The buffer's blocks (the last one zero-padded) plugged at their planned places.
  fsio::Status emit() {
    const std::size_t whole = (fill_ + bs_ - 1) / bs_ * bs_;
    std::memset(buf_.data() + fill_, 0, whole - fill_);
    std::uint64_t logical = base_ / bs_;
    const std::uint64_t last = logical + whole / bs_;
    for (const Extent& e : places_[cur_].extents) {
      const std::uint64_t from = std::max<std::uint64_t>(logical, e.logical),
                          to = std::min<std::uint64_t>(last, std::uint64_t(e.logical) + e.len);
      if (from >= to) continue;
      batch_.plug().write((e.physical + (from - e.logical)) * bs_,
                          buf_.span().subspan(std::size_t((from - base_ / bs_) * bs_), std::size_t((to - from) * bs_)));
    }
    rep_.bytes_written += whole;
    FSIO_TRY(batch_.adopt(std::move(buf_)));
    buf_ = fsio::AlignedBuffer();
    fill_ = 0;
    return {};
  }

  const fsio::Tree& tree_;
  const std::vector<TreeFill::Placement>& places_;
  std::uint32_t bs_;
  DataBatch& batch_;
  const TreeFillOptions& o_;
  TreeFillReport& rep_;
  std::vector<std::uint64_t> done_;  // per content: bytes received
  std::uint32_t cur_ = 0;
  std::uint64_t base_ = 0;  // the content offset of buf_[0] (block-aligned)
  std::size_t fill_ = 0;
  fsio::AlignedBuffer buf_;
};

}  // namespace

fsio::Status TreeFill::write_data(fsio::TreeSource& src) {
  Filesystem& fs = tx_.fs();
  DataBatch batch(fs.queue(), o_.batch_bytes);
  for (Pending& p : symlink_blocks_) {
    batch.plug().write(p.block * fs.layout().block_size, p.data.span());
    rep_.bytes_written += p.data.size();
    FSIO_TRY(batch.adopt(std::move(p.data)));
  }
  symlink_blocks_.clear();
  FillSink sink(tree_, places_, fs.layout().block_size, batch, o_, rep_);
  FSIO_TRY(src.read_contents(sink));
  FSIO_TRY(sink.check_complete());
  return batch.flush();  // the data before any metadata that points at it
}

}  // namespace ext
