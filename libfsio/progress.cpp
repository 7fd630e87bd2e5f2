// Progress bar on Boost.Asio, interrupt handling on sigaction. A progress
// bar runs its own io_context on a std::jthread: its timer runs there,
// never on the thread doing I/O, so the data path pays one relaxed atomic add
// per batch and nothing else. This is the one place in the library that
// prints: the progress line goes to stderr by design.
#include "libfsio/progress.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include "libfsio/size.hpp"

namespace fsio {

namespace asio = boost::asio;
using namespace std::chrono_literals;

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

struct Progress::Impl {
  std::string label;
  std::uint64_t total;
  const std::atomic<std::uint64_t>* done;
  const std::atomic<std::uint64_t>* items;
  const std::uint64_t* items_total;
  const std::string* noun;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  asio::io_context io;
  asio::steady_timer timer{io};
  bool drawn = false;
  std::jthread thread;  // last: joins before the members it uses go away

  void arm() {
    // Five redraws a second: smooth enough to look alive, rare enough that a
    // slow terminal never becomes the bottleneck.
    timer.expires_after(200ms);
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      draw();
      arm();
    });
  }

  void draw() {
    std::uint64_t now = done->load(std::memory_order_relaxed);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Decimal MB/s, as dd and fio report throughput.
    double mbps = secs > 0 ? double(now) / secs / 1e6 : 0;
    std::string line = "\r" + label + "  " + format_size(now);
    if (total != 0) {
      line += " / " + format_size(total);
      line += "  " + std::to_string(total ? now * 100 / total : 0) + "%";
    }
    char rate[32];
    std::snprintf(rate, sizeof rate, "  %.0f MB/s", mbps);
    line += rate;
    if (*items_total != 0)
      line += "  " + std::to_string(items->load(std::memory_order_relaxed)) + "/" + std::to_string(*items_total) + " " +
              *noun;
    line += "\033[K";  // clear what a longer previous line left behind
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    drawn = true;
  }
};

Progress::Progress(std::string label, std::uint64_t total_bytes, bool enabled) {
  if (!enabled) return;
  impl_ = std::make_unique<Impl>();
  impl_->label = std::move(label);
  impl_->total = total_bytes;
  impl_->done = &done_;
  impl_->items = &items_;
  impl_->items_total = &items_total_;
  impl_->noun = &noun_;
  impl_->arm();
  impl_->thread = std::jthread([impl = impl_.get()] { impl->io.run(); });
}

Progress::~Progress() {
  if (!impl_) return;
  impl_->io.stop();
  impl_->thread.join();
  // Only now, with the drawing thread gone, erase the line it left.
  if (impl_->drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

struct ProgressLines::Impl {
  struct Line {
    std::string label, phase;
    std::uint64_t total = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  };
  std::vector<Line> lines;
  const std::atomic<std::uint64_t>* counters = nullptr;
  std::size_t width = 0;  // the longest label, so the numbers line up
  std::mutex m;           // phase() against draw()
  asio::io_context io;
  asio::steady_timer timer{io};
  bool drawn = false;
  std::jthread thread;  // last: joins before the members it uses go away

  void arm() {
    timer.expires_after(200ms);
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      draw();
      arm();
    });
  }

  std::string text(std::size_t i) {
    const Line& l = lines[i];
    const std::uint64_t now = counters[i].load(std::memory_order_relaxed);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - l.start).count();
    std::string s = l.label + std::string(width - l.label.size(), ' ') + "  ";
    if (!l.phase.empty()) s += l.phase + "  ";
    s += format_size(now);
    if (l.total) s += " / " + format_size(l.total) + "  " + std::to_string(now * 100 / l.total) + "%";
    char rate[32];
    std::snprintf(rate, sizeof rate, "  %.0f MB/s", secs > 0 ? double(now) / secs / 1e6 : 0.0);
    return s + rate + "\033[K";
  }

  void draw() {
    std::lock_guard lock(m);
    // Back to the first line, then every line over what it said before.
    std::string out = drawn ? "\033[" + std::to_string(lines.size()) + "A" : "";
    for (std::size_t i = 0; i < lines.size(); ++i) out += "\r" + text(i) + "\n";
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
    drawn = true;
  }
};

ProgressLines::ProgressLines(std::vector<std::string> labels, std::uint64_t total_bytes, bool enabled)
    : counters_(new std::atomic<std::uint64_t>[labels.size()]) {
  for (std::size_t i = 0; i < labels.size(); ++i) counters_[i].store(0);
  if (!enabled || labels.empty()) return;
  impl_ = std::make_unique<Impl>();
  for (auto& l : labels) {
    impl_->width = std::max(impl_->width, l.size());
    impl_->lines.push_back({std::move(l), "", total_bytes});
  }
  impl_->counters = counters_.get();
  impl_->arm();
  impl_->thread = std::jthread([impl = impl_.get()] { impl->io.run(); });
}

ProgressLines::~ProgressLines() {
  if (!impl_) return;
  impl_->io.stop();
  impl_->thread.join();
  if (impl_->drawn) {
    std::fputs(("\033[" + std::to_string(impl_->lines.size()) + "A\r\033[J").c_str(), stderr);
    std::fflush(stderr);
  }
}

void ProgressLines::phase(std::size_t line, std::string what, std::uint64_t total_bytes) {
  counters_[line].store(0);
  if (!impl_) return;
  std::lock_guard lock(impl_->m);
  auto& l = impl_->lines[line];
  l.phase = std::move(what);
  l.total = total_bytes;
  l.start = std::chrono::steady_clock::now();
}

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch a lock-free atomic");

// A plain handler, not an Asio signal_set: the flag is all the work, so a
// thread, an io_context and an epoll set per run (a quarter of a millisecond
// of every mkext4 run) bought nothing. Everything here is async-signal-safe.
extern "C" void on_interrupt(int sig) {
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) return;  // first signal: stop at the next check
  // Second signal: the user means it. The default action back, and the
  // signal again: it stays pending while this handler runs, then kills.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  (void)::sigaction(sig, &dfl, nullptr);
  (void)std::raise(sig);
}

}  // namespace

struct InterruptGuard::Impl {
  struct sigaction old_int {
  }, old_term{};
};

InterruptGuard::InterruptGuard() : impl_(std::make_unique<Impl>()) {
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigfillset(&sa.sa_mask);  // as Asio's was: no other signal inside it; no SA_RESTART (EINTR wakes waits)
  (void)::sigaction(SIGINT, &sa, &impl_->old_int);
  (void)::sigaction(SIGTERM, &sa, &impl_->old_term);
}

InterruptGuard::~InterruptGuard() {
  (void)::sigaction(SIGINT, &impl_->old_int, nullptr);
  (void)::sigaction(SIGTERM, &impl_->old_term, nullptr);
}

bool InterruptGuard::requested() { return g_signal.load() != 0; }
int InterruptGuard::signal_number() { return g_signal.load(); }

}  // namespace fsio
