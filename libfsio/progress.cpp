// Progress bar and interrupt handling on Boost.Asio. Each object runs its own
// io_context on a std::jthread: the timer and the signal handler run there,
// never on the thread doing I/O, so the data path pays one relaxed atomic add
// per batch and nothing else. This is the one place in the library that
// prints: the progress line goes to stderr by design.
#include "libfsio/progress.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
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

namespace {
std::atomic<int> g_signal{0};
}

struct InterruptGuard::Impl {
  asio::io_context io;
  asio::signal_set signals{io, SIGINT, SIGTERM};
  std::jthread thread;

  void wait() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      int none = 0;
      if (g_signal.compare_exchange_strong(none, sig)) {
        wait();  // first signal: the work stops cleanly at its next check
        return;
      }
      // Second signal: the user means it. Give the signal its default
      // action back and deliver it again, so a stuck tool still dies.
      boost::system::error_code ignored;
      signals.clear(ignored);
      std::signal(sig, SIG_DFL);
      std::raise(sig);
    });
  }
};

InterruptGuard::InterruptGuard() : impl_(std::make_unique<Impl>()) {
  g_signal.store(0);
  impl_->wait();
  impl_->thread = std::jthread([impl = impl_.get()] { impl->io.run(); });
}

InterruptGuard::~InterruptGuard() {
  impl_->io.stop();
  impl_->thread.join();
}

bool InterruptGuard::requested() { return g_signal.load() != 0; }
int InterruptGuard::signal_number() { return g_signal.load(); }

}  // namespace fsio
