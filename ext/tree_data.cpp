// TreeFill's second step (see tree_fill.hpp): the source's contents copied
// into the blocks the plan gave them. Contents are packed one after another
// (each from a block boundary, its last block zero-padded) into one aligned
// arena of at most `batch_bytes`, reused: a full arena is submitted as one
// plug, which IoQueue sorts and merges, so thousands of small files cost a
// few large submissions and no allocation each, and memory holds one arena.
#include <algorithm>
#include <cstring>

#include "ext/tree_fill.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

class FillSink : public fsio::ContentSink {
 public:
  FillSink(const fsio::Tree& tree, const std::vector<TreeFill::Placement>& places, std::uint32_t block_size,
           fsio::IoQueue& queue, const TreeFillOptions& o, TreeFillReport& rep)
      : tree_(tree), places_(places), bs_(block_size), plug_(queue.plug()), o_(o), rep_(rep), done_(places.size(), 0) {
    std::uint64_t total = 0;  // what the arena could ever hold at once: all the data, if less than a batch
    for (const auto& p : places) total += (p.size + bs_ - 1) / bs_ * bs_;
    cap_ = std::max<std::uint64_t>(bs_, std::min(total, o.batch_bytes / bs_ * bs_));
  }

  fsio::Result<std::span<std::byte>> reserve(std::uint32_t content, std::uint64_t offset, std::uint64_t want) override {
    if (o_.interrupted && o_.interrupted())
      return make_error(Errc::interrupted, "interrupted before the tree's data was all written; nothing links it");
    if (content >= places_.size() || offset != done_[content] || offset + want > places_[content].size)
      return make_error(Errc::corrupt, where(content) + ": more bytes than listed; it changed while read");
    if (!arena_.size()) arena_ = fsio::AlignedBuffer(std::size_t(cap_));
    if (!open_ || content != cur_) {
      if (open_) FSIO_TRY(close_segment());
      if (pos_ == cap_) FSIO_TRY(submit());
      open_ = true, cur_ = content, base_ = offset, start_ = pos_, fill_ = 0;
    }
    return arena_.span().subspan(std::size_t(start_ + fill_),
                                 std::size_t(std::min<std::uint64_t>(cap_ - start_ - fill_, want)));
  }

  fsio::Status commit(std::uint32_t content, std::uint64_t offset, std::size_t n) override {
    fill_ += n;
    done_[content] = offset + n;
    if (o_.progress) o_.progress->add(n);
    if (done_[content] == places_[content].size) return close_segment();
    if (start_ + fill_ == cap_) {  // the arena is full mid-content: the rest starts a new segment
      FSIO_TRY(close_segment());
      return submit();
    }
    return {};
  }

  // What is left submitted; every content arrived whole.
  fsio::Status finish() {
    if (open_) FSIO_TRY(close_segment());
    FSIO_TRY(submit());
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

  // The open segment's blocks (the last one zero-padded) plugged at their planned places.
  fsio::Status close_segment() {
    open_ = false;
    const std::uint64_t whole = (fill_ + bs_ - 1) / bs_ * bs_;
    std::memset(arena_.data() + start_ + fill_, 0, std::size_t(whole - fill_));
    const std::uint64_t first = base_ / bs_, last = first + whole / bs_;
    for (const Extent& e : places_[cur_].extents) {
      const std::uint64_t from = std::max<std::uint64_t>(first, e.logical);
      const std::uint64_t to = std::min<std::uint64_t>(last, std::uint64_t(e.logical) + e.len);
      if (from >= to) continue;
      plug_.write((e.physical + (from - e.logical)) * bs_,
                  arena_.span().subspan(std::size_t(start_ + (from - first) * bs_), std::size_t((to - from) * bs_)));
    }
    rep_.bytes_written += whole;
    pos_ = start_ + whole;
    return {};
  }

  fsio::Status submit() {
    pos_ = 0;
    return plug_.finish();
  }

  const fsio::Tree& tree_;
  const std::vector<TreeFill::Placement>& places_;
  std::uint32_t bs_;
  fsio::IoQueue::Plug plug_;
  const TreeFillOptions& o_;
  TreeFillReport& rep_;
  std::vector<std::uint64_t> done_;  // per content: bytes received
  fsio::AlignedBuffer arena_;
  std::uint64_t cap_ = 0;  // the arena's size, whole blocks
  std::uint64_t pos_ = 0;  // where the next segment starts (block-aligned)
  bool open_ = false;      // a segment of content cur_ is being filled
  std::uint32_t cur_ = 0;
  std::uint64_t base_ = 0;   // the content offset of the segment's first byte (block-aligned)
  std::uint64_t start_ = 0;  // the segment's place in the arena
  std::uint64_t fill_ = 0;   // bytes in the segment
};

}  // namespace

fsio::Status TreeFill::write_data(fsio::TreeSource& src) {
  Filesystem& fs = tx_.fs();
  if (!symlink_blocks_.empty()) {
    auto plug = fs.queue().plug();
    for (Pending& p : symlink_blocks_) {
      plug.write(p.block * fs.layout().block_size, p.data.span());
      rep_.bytes_written += p.data.size();
    }
    FSIO_TRY(plug.finish());
    symlink_blocks_.clear();
  }
  FillSink sink(tree_, places_, fs.layout().block_size, fs.queue(), o_, rep_);
  FSIO_TRY(src.read_contents(sink));
  return sink.finish();  // the data before any metadata that points at it (the commit flushes first)
}

}  // namespace ext
