// Progress on a terminal, and clean interruption, driven by Boost.Asio
// (timers and signal_set on a background thread; the data path never waits on
// Asio). Headers stay Asio-free so fat/ and ext/ can report progress without
// including it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fsio {

bool stderr_is_terminal();

// A one-line progress bar on stderr, redrawn five times a second while work
// runs: "mkfat  1.2 GiB / 4.0 GiB  30%  812 MB/s". Does nothing unless enabled
// (callers pass `!quiet && !json && stderr_is_terminal()`). Thread-safe add().
class Progress {
 public:
  Progress(std::string label, std::uint64_t total_bytes, bool enabled);
  ~Progress();  // erases the line
  void add(std::uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }
  void set(std::uint64_t bytes) { done_.store(bytes, std::memory_order_relaxed); }
  // Work that also comes in items (mkfat -d's files): the line shows
  // "  1234/5000 files" after the bytes. Call before the work starts.
  void count_items(std::uint64_t total, std::string noun) {
    items_total_ = total;
    noun_ = std::move(noun);
  }
  void add_item(std::uint64_t n = 1) { items_.fetch_add(n, std::memory_order_relaxed); }

 private:
  struct Impl;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> items_{0};
  std::uint64_t items_total_ = 0;
  std::string noun_;
  std::unique_ptr<Impl> impl_;
};

// Several progress bars at once, one line each, redrawn together five times
// a second (one work on several devices: fsimg restore to many targets):
//   /dev/sdb  120 MiB / 512 MiB  23%  19 MB/s
//   /dev/sdc  verify  40 MiB / 200 MiB  20%  38 MB/s
// Each line reads its own counter, which any thread may store to; phase()
// starts a line over with a new total and a word before it. Does nothing
// unless enabled; the lines are erased when it goes.
class ProgressLines {
 public:
  ProgressLines(std::vector<std::string> labels, std::uint64_t total_bytes, bool enabled);
  ~ProgressLines();
  std::atomic<std::uint64_t>& counter(std::size_t line) { return counters_[line]; }
  void phase(std::size_t line, std::string what, std::uint64_t total_bytes);

 private:
  struct Impl;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counters_;
  std::unique_ptr<Impl> impl_;
};

// While alive, SIGINT and SIGTERM do not kill the process: they set a flag
// that long operations poll between batches (finish the batch in flight,
// leave the filesystem consistent, report Errc::interrupted). A second signal
// restores the default action, so a stuck tool can still be killed.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  static bool requested();
  static int signal_number();  // the signal that arrived, or 0

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fsio
