#include "cmd/img/flusher.hpp"

namespace img {

Flusher::Flusher(std::function<fsio::Status()> flush)
    : flush_(std::move(flush)), thread_([this](std::stop_token st) { run(st); }) {}

Flusher::~Flusher() { (void)stop(); }

fsio::Status Flusher::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  return status();
}

void Flusher::request() {
  std::lock_guard lock(m_);
  wanted_ = true;
  wake_.notify_one();
}

fsio::Status Flusher::status() {
  std::lock_guard lock(m_);
  if (!error_) return {};
  fsio::Error e = *error_;
  e.context += " (a background flush)";
  return e;
}

void Flusher::run(std::stop_token stop) {
  std::unique_lock lock(m_);
  while (wake_.wait(lock, stop, [&] { return wanted_; })) {
    wanted_ = false;
    lock.unlock();
    auto st = flush_();
    lock.lock();
    if (!st) {
      error_ = std::move(st).error();
      return;
    }
  }
}

}  // namespace img
