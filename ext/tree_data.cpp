// TreeFill's second step (see tree_fill.hpp): the source's contents copied
// into the blocks the plan gave them. Contents are packed one after another
// (each from a block boundary, its last block zero-padded) into an aligned
// arena: a full arena is written as one plug, which IoQueue sorts and
// merges, so thousands of small files cost a few large submissions and no
// allocation each. Two arenas take turns: the source reads into one on a
// reader thread while the calling thread writes the other (the queue stays
// on the thread that made it: an io_uring ring set up for a single issuer
// refuses others), so the fill runs near the slower of reading and writing,
// not at their sum. A source that can (a directory) is read by two such
// threads, each with its own pair of arenas and its own runs of contents
// (copying many small files out of the page cache is CPU work, and one
// thread of it was slower than the writes); `batch_bytes` is shared among
// all the arenas.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "ext/tree_fill.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// One arena's writes: where each of its segments goes.
using Batch = std::vector<std::pair<std::uint64_t, std::span<const std::byte>>>;

// Batches from the reader threads to the writer (the calling thread). A
// reader's put() of its batch k returns once its batch k-1 is written, so
// the arena that one used (the one the reader fills next) is free again.
class Channel {
 public:
  explicit Channel(unsigned readers) : put_(readers, 0), written_(readers, 0), status_(readers) {}

  fsio::Status put(unsigned reader, Batch b) {
    std::unique_lock lock(m_);
    const std::uint64_t k = put_[reader]++;
    cv_.wait(lock, [&] { return written_[reader] >= k || failed_; });
    if (failed_) return make_error(Errc::io, "the write failed");  // the writer reports its own error
    q_.emplace_back(reader, std::move(b));
    cv_.notify_all();
    return {};
  }
  void close(unsigned reader, fsio::Status st) {
    std::lock_guard lock(m_);
    ++closed_;
    status_[reader] = std::move(st);
    cv_.notify_all();
  }
  // The writer's loop: every batch written until all readers close; after
  // a failed write the rest are dropped (each reader stops at its next put).
  fsio::Status drain(fsio::IoQueue& q) {
    fsio::Status first;
    for (;;) {
      std::pair<unsigned, Batch> b;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return !q_.empty() || closed_ == status_.size(); });
        if (q_.empty()) return first ? readers_status() : std::move(first);
        b = std::move(q_.front());
        q_.pop_front();
      }
      fsio::Status st;
      if (first) {
        auto plug = q.plug();
        for (const auto& [off, data] : b.second) plug.write(off, data);
        st = plug.finish();
      }
      std::lock_guard lock(m_);
      ++written_[b.first];
      if (!st && first) first = std::move(st), failed_ = true;
      cv_.notify_all();
    }
  }

 private:
  fsio::Status readers_status() {
    for (fsio::Status& st : status_)
      if (!st) return std::move(st);
    return {};
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::pair<unsigned, Batch>> q_;  // reader, batch
  std::vector<std::uint64_t> put_, written_;  // per reader
  std::vector<fsio::Status> status_;          // per reader, once closed
  std::size_t closed_ = 0;
  bool failed_ = false;
};

class FillSink : public fsio::ContentSink {
 public:
  // Reader `reader`'s sink, for the contents `picked` marks (all if none),
  // in arenas of `arena_bytes`.
  FillSink(const fsio::Tree& tree, const std::vector<TreeFill::Placement>& places, std::uint32_t block_size,
           Channel& out, unsigned reader, const std::vector<bool>* picked, std::uint64_t arena_bytes,
           const TreeFillOptions& o)
      : tree_(tree),
        places_(places),
        bs_(block_size),
        out_(out),
        reader_(reader),
        picked_(picked),
        o_(o),
        done_(places.size(), 0),
        range_(places.size(), 0) {
    std::uint64_t total = 0;  // what the arena could ever hold at once: all the data, if less than a batch
    for (std::uint32_t c = 0; c < places.size(); ++c)
      if (mine(c)) total += (places[c].size + bs_ - 1) / bs_ * bs_;
    cap_ = std::max<std::uint64_t>(bs_, std::min(total, arena_bytes / bs_ * bs_));
  }

  std::uint64_t bytes_written() const { return bytes_written_; }

  // Bytes arrive in order within a data range (a dense content is one,
  // [0, size)); a sparse content's next range may start further on.
  fsio::Result<std::span<std::byte>> reserve(std::uint32_t content, std::uint64_t offset, std::uint64_t want) override {
    if (o_.interrupted && o_.interrupted())
      return make_error(Errc::interrupted, "interrupted before the tree's data was all written; nothing links it");
    if (content >= places_.size() || want == 0 || !in_range(content, offset))
      return make_error(Errc::corrupt, where(content) + ": bytes at " + std::to_string(offset) +
                                           " that were not listed; it changed while read");
    if (open_ && content == cur_ && offset != done_[content]) {
      if (offset / bs_ == (done_[content] - 1) / bs_) {  // a hole inside the open segment's last block
        std::memset(arena().data() + start_ + fill_, 0, std::size_t(offset - done_[content]));
        fill_ += offset - done_[content];
      } else {
        FSIO_TRY(close_segment());
      }
    }
    if (!open_ || content != cur_) {
      if (open_) FSIO_TRY(close_segment());
      if (pos_ == cap_) FSIO_TRY(submit());
      // A segment starts at a block boundary: a range starting inside a block has zeros before it.
      open_ = true, cur_ = content, base_ = offset / bs_ * bs_, start_ = pos_, fill_ = offset - base_;
      std::memset(arena().data() + start_, 0, std::size_t(fill_));
    }
    const std::uint64_t room = std::min(cap_ - start_ - fill_, range_end(content, range_[content]) - offset);
    return arena().span().subspan(std::size_t(start_ + fill_), std::size_t(std::min(room, want)));
  }

  fsio::Status commit(std::uint32_t content, std::uint64_t offset, std::size_t n) override {
    fill_ += n;
    done_[content] = offset + n;
    if (o_.progress) o_.progress->add(n);
    if (done_[content] == range_end(content, range_[content]) && range_[content] + 1 < ranges(content))
      ++range_[content];
    if (done_[content] == places_[content].size || done_[content] == data_end(content)) return close_segment();
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
      if (mine(c) && (done_[c] != data_end(c) || range_[c] + 1 < ranges(c)))
        return make_error(Errc::corrupt, where(c) + ": " + std::to_string(done_[c]) + " bytes read of " +
                                             std::to_string(places_[c].size) + " listed; it changed while read");
    return {};
  }

 private:
  bool mine(std::uint32_t c) const { return !picked_ || (*picked_)[c]; }
  std::size_t ranges(std::uint32_t c) const {
    return places_[c].sparse ? places_[c].data.size() : places_[c].size > 0 ? 1 : 0;
  }
  std::uint64_t range_start(std::uint32_t c, std::size_t k) const {
    return places_[c].sparse ? places_[c].data[k].offset : 0;
  }
  std::uint64_t range_end(std::uint32_t c, std::size_t k) const {
    return places_[c].sparse ? places_[c].data[k].offset + places_[c].data[k].length : places_[c].size;
  }
  std::uint64_t data_end(std::uint32_t c) const { return ranges(c) ? range_end(c, ranges(c) - 1) : 0; }

  // Whether bytes at `offset` are the next the plan expects of `c`: inside
  // its current data range, where the last ones ended or, if none of the
  // range came yet, at its start.
  bool in_range(std::uint32_t c, std::uint64_t offset) const {
    const std::size_t k = range_[c];
    if (k >= ranges(c)) return false;
    const std::uint64_t start = range_start(c, k), end = range_end(c, k);
    if (offset < start || offset >= end) return false;
    return offset == (done_[c] > start ? done_[c] : start);
  }

  std::string where(std::uint32_t content) const {
    return content < tree_.contents.size() ? tree_.where(tree_.contents[content].node) : "a content";
  }

  // The open segment's blocks (the last one zero-padded) plugged at their planned places.
  fsio::Status close_segment() {
    open_ = false;
    const std::uint64_t whole = (fill_ + bs_ - 1) / bs_ * bs_;
    std::memset(arena().data() + start_ + fill_, 0, std::size_t(whole - fill_));
    const std::uint64_t first = base_ / bs_, last = first + whole / bs_;
    for (const Extent& e : places_[cur_].extents) {
      const std::uint64_t from = std::max<std::uint64_t>(first, e.logical);
      const std::uint64_t to = std::min<std::uint64_t>(last, std::uint64_t(e.logical) + e.len);
      if (from >= to) continue;
      writes_.emplace_back(
          (e.physical + (from - e.logical)) * bs_,
          arena().span().subspan(std::size_t(start_ + (from - first) * bs_), std::size_t((to - from) * bs_)));
    }
    bytes_written_ += whole;
    pos_ = start_ + whole;
    return {};
  }

  fsio::AlignedBuffer& arena() {  // made on first use: a tree of little data takes one small one
    if (!arenas_[which_].size()) arenas_[which_] = fsio::AlignedBuffer(std::size_t(cap_));
    return arenas_[which_];
  }

  // The arena's writes to the writer; the other arena is filled next.
  fsio::Status submit() {
    pos_ = 0;
    if (writes_.empty()) return {};
    FSIO_TRY(out_.put(reader_, std::move(writes_)));
    writes_.clear();
    which_ ^= 1;
    return {};
  }

  const fsio::Tree& tree_;
  const std::vector<TreeFill::Placement>& places_;
  std::uint32_t bs_;
  Channel& out_;
  unsigned reader_;
  const std::vector<bool>* picked_;
  const TreeFillOptions& o_;
  std::uint64_t bytes_written_ = 0;
  std::vector<std::uint64_t> done_;   // per content: where its last bytes ended
  std::vector<std::uint32_t> range_;  // per content: the data range being received
  fsio::AlignedBuffer arenas_[2];
  unsigned which_ = 0;     // the arena being filled
  Batch writes_;           // its segments' places
  std::uint64_t cap_ = 0;  // an arena's size, whole blocks
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
  const auto picks = share_contents(src.max_readers());
  const auto readers = unsigned(std::max<std::size_t>(picks.size(), 1));
  Channel channel(readers);
  std::vector<std::unique_ptr<FillSink>> sinks;
  for (unsigned r = 0; r < readers; ++r)
    sinks.push_back(std::make_unique<FillSink>(tree_, places_, fs.layout().block_size, channel, r,
                                               picks.empty() ? nullptr : &picks[r], o_.batch_bytes / 2 / readers, o_));
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < readers; ++r)
    threads.emplace_back([&, r] {
      fsio::Status st = picks.empty() ? src.read_contents(*sinks[r]) : src.read_picked(*sinks[r], picks[r]);
      if (st) st = sinks[r]->finish();
      channel.close(r, std::move(st));
    });
  fsio::Status st =
      channel.drain(fs.queue());  // the data before any metadata that points at it (the commit flushes first)
  for (std::thread& t : threads) t.join();
  for (const auto& sink : sinks) rep_.bytes_written += sink->bytes_written();
  return st;
}

// Which reader reads which contents: none (one reader, all of them) unless
// the source allows two and there is data for more than two batches; then
// runs of contents of at least an arena's bytes each, alternately, so each
// batch is still contiguous data that the queue merges into large writes.
std::vector<std::vector<bool>> TreeFill::share_contents(unsigned max_readers) const {
  constexpr unsigned kReaders = 2;
  std::uint64_t total = 0;
  for (const Placement& p : places_) total += p.size;
  const std::uint64_t run = o_.batch_bytes / 2 / kReaders;
  if (max_readers < kReaders || run == 0 || total <= 2 * o_.batch_bytes) return {};
  std::vector<std::vector<bool>> picks(kReaders, std::vector<bool>(places_.size(), false));
  unsigned reader = 0;
  std::uint64_t in_run = 0;  // bytes given to `reader` since it took over
  for (std::size_t c = 0; c < places_.size(); ++c) {
    picks[reader][c] = true;
    in_run += places_[c].size;
    if (in_run >= run) reader = (reader + 1) % kReaders, in_run = 0;
  }
  return picks;
}

}  // namespace ext
