// TreeWriter (see tree_fill.hpp): the data area of a volume made from a tree.
//
// The files were laid out one after another in tree order, so the data
// area is one stream. It is cut into windows of 8 MiB of the disk: the
// source reads each file straight into the window that holds its place
// (ContentSink::reserve), and a window whose clusters have all arrived goes
// out as one plug of large merged requests while the source reads on: the
// source runs on a thread of its own, the caller's thread writes. A
// cluster's tail after a file's last byte is zeroed in the window, never
// left as what the buffer held. A source that delivers out of disk order
// (an archive made in readdir order) leaves windows partly filled: when
// more than kMaxLive are held, the runs that have arrived are written and
// the windows let go, so memory stays bounded whatever the order. A content
// that several files share (hard links, links followed to one file) is
// copied into each file's place as it arrives.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "fat/tree_fill.hpp"
#include "libfsio/progress.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kWriteWindow = 8u << 20;  // a multiple of every cluster size (at most 4 MiB)
constexpr std::size_t kMaxLive = 8;               // windows held while a source delivers out of disk order
constexpr std::size_t kMaxQueued = 4;             // windows waiting for the writing thread

struct WritePiece {
  std::uint64_t offset;
  std::span<const std::byte> bytes;
};

struct WriteBatch {
  std::vector<WritePiece> pieces;
  std::vector<fsio::AlignedBuffer> buffers;  // owned until written, then reused
};

fsio::Error write_interrupted() {
  return make_error(Errc::interrupted,
                    "interrupted while writing the files: the old boot sector is erased and the new volume is not "
                    "complete, so the target holds no usable filesystem; run mkfat again");
}

// Windows on their way from the reading thread (the sink) to the writing
// one. The writing thread is the caller's: an io_uring ring with
// SINGLE_ISSUER belongs to the thread that first used it, so the queue never
// changes threads; the source reads on a thread of its own instead. At most
// kMaxQueued batches wait; the reader waits for room (back-pressure).
class Handoff {
 public:
  explicit Handoff(TreeWriteStats& stats) : stats_(stats) {}

  // Reader side: waits for room; the writer's error (or interrupt) if it stopped.
  fsio::Status push(WriteBatch b) {
    std::unique_lock lock(mu_);
    const auto t0 = Clock::now();
    cv_.wait(lock, [&] { return queued_.size() < kMaxQueued || !stopped_; });
    stats_.write_wait_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!stopped_) return stopped_;
    queued_.push_back(std::move(b));
    cv_.notify_all();
    return {};
  }
  fsio::Status stopped() {
    std::lock_guard lock(mu_);
    return stopped_;
  }
  // Reader side: no more batches; `status` is how reading ended.
  void close(fsio::Status status) {
    std::lock_guard lock(mu_);
    closed_ = true;
    read_status_ = std::move(status);
    cv_.notify_all();
  }
  // Writer side: every batch queued (waiting for one), merged into `b` so
  // that they go out in one plug and keep the device's queue full; false
  // once the reader closed and all were taken.
  bool pop(WriteBatch& b) {
    std::unique_lock lock(mu_);
    const auto t0 = Clock::now();
    cv_.wait(lock, [&] { return !queued_.empty() || closed_; });
    stats_.read_wait_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (queued_.empty()) return false;
    for (; !queued_.empty(); queued_.pop_front()) {
      WriteBatch& q = queued_.front();
      b.pieces.insert(b.pieces.end(), q.pieces.begin(), q.pieces.end());
      for (auto& buf : q.buffers) b.buffers.push_back(std::move(buf));
    }
    cv_.notify_all();
    return true;
  }
  // Writer side: stop the reader at its next push or reserve.
  void stop(fsio::Error e) {
    std::lock_guard lock(mu_);
    if (stopped_) stopped_ = std::move(e);
    cv_.notify_all();
  }
  fsio::Status read_status() {
    std::lock_guard lock(mu_);
    return read_status_;
  }
  fsio::AlignedBuffer buffer() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return fsio::AlignedBuffer(kWriteWindow);
    fsio::AlignedBuffer b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void recycle(fsio::AlignedBuffer b) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(b));
  }

 private:
  TreeWriteStats& stats_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WriteBatch> queued_;
  std::vector<fsio::AlignedBuffer> free_;
  fsio::Status stopped_;      // the writer's error, or an interrupt
  fsio::Status read_status_;  // how reading ended
  bool closed_ = false;
};

// Where byte `off` of a node lies on the device, and how many bytes of its
// run follow from there.
std::pair<std::uint64_t, std::uint64_t> locate(const Layout& l, const std::vector<Extent>& ex, std::uint64_t off) {
  const std::uint64_t cb = l.cluster_bytes();
  std::uint64_t skip = off;
  for (const Extent& e : ex) {
    const std::uint64_t len = std::uint64_t(e.count) * cb;
    if (skip < len) return {l.cluster_offset(e.first) + skip, len - skip};
    skip -= len;
  }
  FSIO_ASSERT(false);
  return {0, 0};
}

class DataSink final : public fsio::ContentSink {
 public:
  DataSink(const TreeLayout& l, const fsio::Tree& t, Handoff& h, fsio::Progress* p, TreeWriteStats& s);
  fsio::Result<std::span<std::byte>> reserve(std::uint32_t c, std::uint64_t off, std::uint64_t want) override;
  fsio::Status commit(std::uint32_t c, std::uint64_t off, std::size_t n) override;
  fsio::Status finish();

 private:
  struct Window {
    fsio::AlignedBuffer buf;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // device [begin, end) arrived, not yet written
  };
  std::uint64_t start_of(std::uint64_t w) const { return base_ + w * kWriteWindow; }
  Window& window(std::uint64_t w);
  // Calls f(window, byte in window buffer, device offset, byte of the node, length) over bytes [from, to) of a node.
  template <class F>
  void each_piece(std::uint32_t node, std::uint64_t from, std::uint64_t to, F f);
  fsio::Status mark(std::uint32_t node, std::uint64_t from, std::uint64_t to);
  fsio::Status send(std::uint64_t w);
  fsio::Status evict();

  const TreeLayout& l_;
  const fsio::Tree& tree_;
  Handoff& handoff_;
  fsio::Progress* progress_;
  TreeWriteStats& stats_;
  std::uint64_t base_;
  std::uint64_t cb_;
  std::vector<std::vector<std::uint32_t>> dests_;  // per content: the nodes that hold it
  std::vector<std::uint64_t> delivered_, ready_;   // per content: bytes arrived, bytes marked ready
  std::vector<std::uint64_t> planned_, done_;      // per window: file bytes in it, bytes ready
  std::map<std::uint64_t, Window> live_;
  std::span<std::byte> room_;  // what reserve handed out last
  std::uint64_t contents_done_ = 0;
};

DataSink::DataSink(const TreeLayout& l, const fsio::Tree& t, Handoff& h, fsio::Progress* p, TreeWriteStats& s)
    : l_(l),
      tree_(t),
      handoff_(h),
      progress_(p),
      stats_(s),
      base_(l.layout.cluster_offset(2)),
      cb_(l.layout.cluster_bytes()),
      dests_(t.contents.size()),
      delivered_(t.contents.size()),
      ready_(t.contents.size()) {
  for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
    const std::uint32_t c = t.nodes[i].content;
    if (c == fsio::kNoContent || l.extents[i].empty()) continue;
    dests_[c].push_back(i);
    for (const Extent& e : l.extents[i]) {
      std::uint64_t at = l.layout.cluster_offset(e.first);
      const std::uint64_t end = at + std::uint64_t(e.count) * cb_;
      while (at < end) {
        const std::uint64_t w = (at - base_) / kWriteWindow;
        const std::uint64_t len = std::min(end, start_of(w) + kWriteWindow) - at;
        if (planned_.size() <= w) planned_.resize(w + 1, 0);
        planned_[w] += len;
        at += len;
      }
    }
  }
  done_.assign(planned_.size(), 0);
}

DataSink::Window& DataSink::window(std::uint64_t w) {
  auto it = live_.find(w);
  if (it == live_.end()) it = live_.emplace(w, Window{handoff_.buffer(), {}}).first;
  return it->second;
}

template <class F>
void DataSink::each_piece(std::uint32_t node, std::uint64_t from, std::uint64_t to, F f) {
  while (from < to) {
    const auto [dev, run] = locate(l_.layout, l_.extents[node], from);
    const std::uint64_t w = (dev - base_) / kWriteWindow;
    const std::uint64_t len = std::min({run, start_of(w) + kWriteWindow - dev, to - from});
    f(w, dev - start_of(w), dev, from, len);
    from += len;
  }
}

fsio::Result<std::span<std::byte>> DataSink::reserve(std::uint32_t c, std::uint64_t off, std::uint64_t want) {
  FSIO_TRY(handoff_.stopped());
  if (fsio::InterruptGuard::requested()) return write_interrupted();
  FSIO_ASSERT(c < dests_.size() && !dests_[c].empty() && off == delivered_[c] && off < tree_.contents[c].size);
  const auto [dev, run] = locate(l_.layout, l_.extents[dests_[c][0]], off);
  const std::uint64_t w = (dev - base_) / kWriteWindow;
  const std::uint64_t n = std::min({want, run, start_of(w) + kWriteWindow - dev, tree_.contents[c].size - off});
  room_ = window(w).buf.span().subspan(std::size_t(dev - start_of(w)), std::size_t(n));
  return room_;
}

fsio::Status DataSink::commit(std::uint32_t c, std::uint64_t off, std::size_t n) {
  FSIO_ASSERT(off == delivered_[c] && n <= room_.size());
  const std::span<const std::byte> bytes = room_.first(n);
  for (std::size_t k = 1; k < dests_[c].size(); ++k)  // the other files holding this content
    each_piece(dests_[c][k], off, off + n,
               [&](std::uint64_t w, std::uint64_t at, std::uint64_t, std::uint64_t pos, std::uint64_t len) {
                 std::memcpy(window(w).buf.data() + at, bytes.data() + (pos - off), len);
               });
  delivered_[c] = off + n;
  stats_.file_bytes += n;
  if (progress_) progress_->add(n);
  const std::uint64_t size = tree_.contents[c].size;
  const bool complete = delivered_[c] == size;
  const std::uint64_t ready = complete ? (size + cb_ - 1) / cb_ * cb_ : delivered_[c] / cb_ * cb_;
  for (std::uint32_t node : dests_[c]) {
    if (complete)  // the last cluster's tail: zeros, not what the buffer held
      each_piece(node, size, ready,
                 [&](std::uint64_t w, std::uint64_t at, std::uint64_t, std::uint64_t, std::uint64_t len) {
                   std::memset(window(w).buf.data() + at, 0, len);
                 });
    if (ready > ready_[c]) FSIO_TRY(mark(node, ready_[c], ready));
  }
  ready_[c] = std::max(ready_[c], ready);
  if (!complete) return {};
  ++contents_done_;
  if (progress_) progress_->add_item(dests_[c].size());
  return live_.size() > kMaxLive ? evict() : fsio::Status{};
}

fsio::Status DataSink::mark(std::uint32_t node, std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> full;
  each_piece(node, from, to, [&](std::uint64_t w, std::uint64_t, std::uint64_t dev, std::uint64_t, std::uint64_t len) {
    auto& runs = window(w).runs;
    if (!runs.empty() && runs.back().second == dev) runs.back().second += len;
    else runs.emplace_back(dev, dev + len);
    done_[w] += len;
    if (done_[w] == planned_[w]) full.push_back(w);
  });
  for (std::uint64_t w : full) FSIO_TRY(send(w));
  return {};
}

// The window's arrived runs, merged, to the writer thread; the window is let go.
fsio::Status DataSink::send(std::uint64_t w) {
  auto node = live_.extract(w);
  Window& win = node.mapped();
  auto& runs = win.runs;
  std::sort(runs.begin(), runs.end());
  WriteBatch b;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!b.pieces.empty() && b.pieces.back().offset + b.pieces.back().bytes.size() == runs[i].first) {
      auto& last = b.pieces.back();
      last.bytes = std::span<const std::byte>(last.bytes.data(), last.bytes.size() + (runs[i].second - runs[i].first));
      continue;
    }
    b.pieces.push_back({runs[i].first, win.buf.span().subspan(std::size_t(runs[i].first - start_of(w)),
                                                              std::size_t(runs[i].second - runs[i].first))});
  }
  if (b.pieces.empty()) {
    handoff_.recycle(std::move(win.buf));
    return {};
  }
  b.buffers.push_back(std::move(win.buf));
  return handoff_.push(std::move(b));
}

fsio::Status DataSink::evict() {
  while (!live_.empty()) FSIO_TRY(send(live_.begin()->first));
  return {};
}

fsio::Status DataSink::finish() {
  if (contents_done_ !=
      dests_.size() - std::size_t(std::count_if(dests_.begin(), dests_.end(), [](const auto& d) { return d.empty(); })))
    return make_error(Errc::corrupt, tree_.label + ": the source delivered the bytes of " +
                                         std::to_string(contents_done_) + " of its files, not all of them");
  return evict();
}

// Every directory's clusters but those format_volume writes (the FAT12/16
// root region, the FAT32 root's first cluster): one batch, from the layout's buffers.
WriteBatch directory_batch(const TreeLayout& l) {
  WriteBatch b;
  const std::uint64_t cb = l.layout.cluster_bytes();
  for (std::size_t i = 0; i < l.dirs.size(); ++i) {
    if (l.dirs[i].size() == 0 || l.extents[i].empty()) continue;
    std::uint64_t at = 0;
    for (const Extent& e : l.extents[i]) {
      const std::uint64_t len = std::uint64_t(e.count) * cb;
      std::uint64_t skip = i == 0 && at == 0 ? cb : 0;  // the FAT32 root's first cluster
      if (skip < len)
        b.pieces.push_back({l.layout.cluster_offset(e.first) + skip, l.dirs[i].span().subspan(at + skip, len - skip)});
      at += len;
    }
  }
  return b;
}

}  // namespace

TreeWriter::TreeWriter(const TreeLayout& layout, const fsio::Tree& tree, fsio::TreeSource& source)
    : layout_(layout), tree_(tree), source_(source) {
  const Layout& l = layout.layout;
  content_.fat = layout.fat.span();
  const std::uint64_t root = l.type == FatType::fat32 ? l.cluster_bytes() : layout.dirs[0].size();
  content_.root = layout.dirs[0].span().first(std::size_t(root));
  content_.free_clusters = layout.free_clusters;
  content_.next_free = layout.last_allocated;
  content_.write_data = [this](fsio::IoQueue& q, fsio::Progress* p) { return write_data(q, p); };
}

// This thread writes; a reader thread runs the source into the sink.
fsio::Status TreeWriter::write_data(fsio::IoQueue& queue, fsio::Progress* progress) {
  auto write = [&](WriteBatch& b) -> fsio::Status {
    auto plug = queue.plug();
    for (const WritePiece& p : b.pieces) plug.write(p.offset, p.bytes);
    const std::uint64_t bytes = plug.pending_bytes();
    FSIO_TRY_CTX(plug.finish(), "writing the files");
    stats_.bytes_written += bytes;
    ++stats_.batches;
    return {};
  };
  WriteBatch dirs = directory_batch(layout_);
  FSIO_TRY(write(dirs));
  Handoff handoff(stats_);
  std::thread reader([&] {
    DataSink sink(layout_, tree_, handoff, progress, stats_);
    fsio::Status st = source_.read_contents(sink);
    if (st) st = sink.finish();
    handoff.close(std::move(st));
  });
  fsio::Status written;
  for (WriteBatch b; handoff.pop(b);) {
    if (written) written = write(b);
    if (written && fsio::InterruptGuard::requested()) written = write_interrupted();
    if (!written) handoff.stop(written.error());
    for (auto& buf : b.buffers) handoff.recycle(std::move(buf));
    b = {};
  }
  reader.join();
  if (!written) return written;
  return handoff.read_status();
}

}  // namespace fat
