// main() for every GoogleTest executable: gtest's own, plus what meson needs
// to see skips. Meson counts one executable as one test, and GTEST_SKIP
// alone exits 0, so a binary whose every case skipped (no root, no loop
// devices) would count as a pass. Here:
//   - every case skipped (or none ran) -> exit 77, meson's SKIP;
//   - some ran, some skipped -> exit 0 (or 1 on a failure), and the skips
//     are printed one per line for tools/test.sh to count and list:
//       [fsio-gtest] 72 run: 70 passed, 2 skipped, 0 failed
//       [fsio-gtest] skipped: MountedImage.X: mounting needs root
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

// The message of a case's GTEST_SKIP, first line only.
std::string skip_reason(const testing::TestResult& result) {
  for (int i = 0; i < result.total_part_count(); ++i) {
    const auto& part = result.GetTestPartResult(i);
    if (!part.skipped()) continue;
    std::string msg = part.message();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    return msg.empty() ? "(no reason given)" : msg;
  }
  return "(no reason given)";
}

void print_skips(const testing::UnitTest& unit) {
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const testing::TestInfo& info = *suite.GetTestInfo(t);
      if (!info.should_run() || !info.result()->Skipped()) continue;
      std::printf("[fsio-gtest] skipped: %s.%s: %s\n", suite.name(), info.name(), skip_reason(*info.result()).c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (GTEST_FLAG_GET(list_tests)) return rc;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  const int run = unit.test_to_run_count();
  const int skipped = unit.skipped_test_count();
  std::printf("[fsio-gtest] %d run: %d passed, %d skipped, %d failed\n", run, unit.successful_test_count(), skipped,
              unit.failed_test_count());
  print_skips(unit);
  std::fflush(stdout);
  if (rc == 0 && skipped == run) return 77;  // nothing was really tested
  return rc;
}
