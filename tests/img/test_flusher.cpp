// Flusher (cmd/img/flusher.hpp): a flush per request, requests made during
// a flush coalesced into one more, the first error kept and reported.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cmd/img/flusher.hpp"

namespace {

// A flush that counts its calls and, while `hold` is set, waits inside the
// flush until released: a test can make requests while a flush runs.
struct FakeFlush {
  std::mutex m;
  std::condition_variable cv;
  int calls = 0;
  bool hold = false, inside = false;
  int fail_errno = 0;

  fsio::Status operator()() {
    std::unique_lock lock(m);
    ++calls;
    inside = true;
    cv.notify_all();
    cv.wait(lock, [&] { return !hold; });
    inside = false;
    cv.notify_all();
    if (fail_errno) return fsio::errno_error(fail_errno, "tgt: fdatasync");
    return {};
  }
  // Waits until `pred` holds (or 10 s: a test failure, not a hang).
  template <class P>
  bool wait(P pred) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, std::chrono::seconds(10), pred);
  }
  void release() {
    std::lock_guard lock(m);
    hold = false;
    cv.notify_all();
  }
};

TEST(Flusher, StopWithoutRequestNeverFlushes) {
  FakeFlush f;
  img::Flusher flusher([&] { return f(); });
  EXPECT_TRUE(flusher.stop());
  EXPECT_EQ(f.calls, 0);
}

TEST(Flusher, RequestFlushesOnItsOwnThread) {
  FakeFlush f;
  img::Flusher flusher([&] { return f(); });
  flusher.request();
  EXPECT_TRUE(f.wait([&] { return f.calls == 1 && !f.inside; }));
  EXPECT_TRUE(flusher.stop());
  EXPECT_EQ(f.calls, 1);
}

TEST(Flusher, RequestsDuringAFlushCoalesceIntoOneMore) {
  FakeFlush f;
  f.hold = true;
  img::Flusher flusher([&] { return f(); });
  flusher.request();
  ASSERT_TRUE(f.wait([&] { return f.inside; }));
  for (int i = 0; i < 5; ++i) flusher.request();
  // The first flush is still running: five requests, one more flush.
  f.release();
  EXPECT_TRUE(f.wait([&] { return f.calls == 2 && !f.inside; }));
  EXPECT_TRUE(flusher.stop());
  EXPECT_EQ(f.calls, 2);
}

TEST(Flusher, StopWaitsForTheFlushInProgress) {
  FakeFlush f;
  f.hold = true;
  img::Flusher flusher([&] { return f(); });
  flusher.request();
  ASSERT_TRUE(f.wait([&] { return f.inside; }));
  std::atomic<bool> stopped = false;
  std::thread t([&] {
    (void)flusher.stop();
    stopped = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(stopped);  // still inside the flush
  f.release();
  t.join();
  EXPECT_TRUE(stopped);
  EXPECT_EQ(f.calls, 1);
}

TEST(Flusher, FirstErrorIsKeptAndFlushingStops) {
  FakeFlush f;
  f.fail_errno = EIO;
  img::Flusher flusher([&] { return f(); });
  EXPECT_TRUE(flusher.status());
  flusher.request();
  ASSERT_TRUE(f.wait([&] { return f.calls == 1 && !f.inside; }));
  // The error is published once the flush has returned.
  for (int i = 0; i < 1000 && flusher.status(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto st = flusher.status();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().sys_errno, EIO);
  EXPECT_EQ(st.error().message(), "tgt: fdatasync (a background flush): Input/output error");
  flusher.request();
  auto again = flusher.stop();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().sys_errno, EIO);
  EXPECT_EQ(f.calls, 1);  // no flush after the failure
}

}  // namespace
