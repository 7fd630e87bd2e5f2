// OrderedPool: a fixed set of worker threads that apply one function to
// items and hand the results back in the order the items went in (the
// frames of a stream must come out in order; compressing or decompressing
// them need not happen in order).
//
// One producer thread calls submit(), which blocks while `capacity` items
// are in the pool and not yet taken: that bounds memory. One consumer
// thread calls next(). stop() abandons everything (an error on either
// side): blocked calls return at once, and the workers finish the item in
// hand and exit. The destructor stops and joins.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace img {

template <class In, class Out>
class OrderedPool {
 public:
  // work(item, worker): `worker` in [0, threads) lets a worker keep state
  // of its own (a zstd context).
  using Work = std::function<Out(In&, unsigned)>;

  OrderedPool(unsigned threads, std::size_t capacity, Work work) : capacity_(capacity), work_(std::move(work)) {
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this, i] { run(i); });
  }
  ~OrderedPool() {
    stop();
    for (auto& t : workers_) t.join();
  }
  OrderedPool(const OrderedPool&) = delete;
  OrderedPool& operator=(const OrderedPool&) = delete;

  // False when the pool was stopped (the item is dropped).
  bool submit(In item) {
    std::unique_lock lock(m_);
    space_.wait(lock, [&] { return stopped_ || submitted_ - taken_ < capacity_; });
    if (stopped_) return false;
    pending_.emplace_back(submitted_++, std::move(item));
    work_ready_.notify_one();
    return true;
  }
  // No more items; next() returns nullopt once every result is taken.
  void close() {
    std::lock_guard lock(m_);
    closed_ = true;
    work_ready_.notify_all();
    result_ready_.notify_all();
  }
  void stop() {
    std::lock_guard lock(m_);
    stopped_ = true;
    work_ready_.notify_all();
    result_ready_.notify_all();
    space_.notify_all();
  }
  std::optional<Out> next() {
    std::unique_lock lock(m_);
    result_ready_.wait(lock, [&] { return stopped_ || done_.count(taken_) || (closed_ && taken_ == submitted_); });
    auto it = done_.find(taken_);
    if (stopped_ || it == done_.end()) return std::nullopt;
    Out out = std::move(it->second);
    done_.erase(it);
    ++taken_;
    space_.notify_all();
    return out;
  }

 private:
  void run(unsigned worker) {
    for (;;) {
      std::unique_lock lock(m_);
      work_ready_.wait(lock, [&] { return stopped_ || !pending_.empty() || closed_; });
      if (stopped_ || pending_.empty()) return;
      auto [seq, item] = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      Out out = work_(item, worker);
      lock.lock();
      done_.emplace(seq, std::move(out));
      result_ready_.notify_all();
    }
  }

  std::size_t capacity_;
  Work work_;
  std::mutex m_;
  std::condition_variable work_ready_, result_ready_, space_;
  std::deque<std::pair<std::uint64_t, In>> pending_;
  std::map<std::uint64_t, Out> done_;
  std::uint64_t submitted_ = 0, taken_ = 0;
  bool closed_ = false, stopped_ = false;
  std::vector<std::thread> workers_;  // last: started after everything above exists
};

}  // namespace img

namespace img {

// Buffers handed from one thread to another and back for reuse: a frame
// buffer is filled by a reader, then returned by the writer; reusing it
// saves zeroing and faulting in 16 MiB per frame.
template <class T>
class Bin {
 public:
  explicit Bin(std::function<T()> make) : make_(std::move(make)) {}
  T get() {
    {
      std::lock_guard lock(m_);
      if (!free_.empty()) {
        T b = std::move(free_.back());
        free_.pop_back();
        return b;
      }
    }
    return make_();
  }
  void put(T b) {
    std::lock_guard lock(m_);
    free_.push_back(std::move(b));
  }

 private:
  std::function<T()> make_;
  std::mutex m_;
  std::vector<T> free_;
};

}  // namespace img
