// Progress output and InterruptGuard's two-signal behaviour.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "libfsio/progress.hpp"

namespace fsio {
namespace {

using namespace std::chrono_literals;

bool wait_for_interrupt() {
  for (int i = 0; i < 200 && !InterruptGuard::requested(); ++i) std::this_thread::sleep_for(10ms);
  return InterruptGuard::requested();
}

TEST(Progress, DisabledPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p("mkfat", 1000, false);
    p.add(500);
    std::this_thread::sleep_for(450ms);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, EnabledRedrawsLabelAmountAndPercentThenErasesTheLine) {
  testing::internal::CaptureStderr();
  {
    Progress p("mkfat", 4 << 20, true);
    p.set(1 << 20);
    std::this_thread::sleep_for(450ms);
  }
  std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("\rmkfat  1 MiB / 4 MiB  25%"), std::string::npos) << out;
  EXPECT_NE(out.find("MB/s"), std::string::npos) << out;
  ASSERT_GE(out.size(), 4u);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
}

TEST(Progress, ShortWorkDrawsNothing) {
  testing::internal::CaptureStderr();
  { Progress p("quick", 100, true); }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(InterruptGuard, FirstSignalSetsTheFlagAndTheProcessLives) {
  for (int sig : {SIGINT, SIGTERM}) {
    InterruptGuard guard;
    EXPECT_FALSE(InterruptGuard::requested());
    std::raise(sig);
    ASSERT_TRUE(wait_for_interrupt()) << strsignal(sig);
    EXPECT_EQ(InterruptGuard::signal_number(), sig);
  }
}

TEST(InterruptGuardDeathTest, SecondSignalKillsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        InterruptGuard guard;
        std::raise(SIGINT);
        if (!wait_for_interrupt()) std::_Exit(3);
        std::raise(SIGINT);
        std::this_thread::sleep_for(5s);
        std::_Exit(4);  // still alive: the second signal did not kill us
      },
      testing::KilledBySignal(SIGINT), "");
}

TEST(InterruptGuard, DestroyingTheGuardRestoresTheDefaultAction) {
  { InterruptGuard guard; }
  struct sigaction sa {};
  ASSERT_EQ(sigaction(SIGINT, nullptr, &sa), 0);
  EXPECT_EQ(sa.sa_handler, SIG_DFL);
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &sa), 0);
  EXPECT_EQ(sa.sa_handler, SIG_DFL);
}

}  // namespace
}  // namespace fsio
