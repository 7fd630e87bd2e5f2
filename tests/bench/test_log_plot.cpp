// fio's log format (fio HOWTO "Log File Formats", checked against fio 3.33's
// own logs: "time, value, ddir, bs, prio" and with log_offset "time, value,
// ddir, bs, offset, prio"), and the SVG plot's structure.
#include <gtest/gtest.h>

#include "cmd/bench/log.hpp"
#include "cmd/bench/plot.hpp"

namespace bench {
namespace {

using namespace fsio;

BenchResult windows() {
  BenchResult r;
  r.rw = BenchRw::randrw;
  r.log_window_ms = 100;
  // 100 ms windows: 4 MiB read in 1024 requests, 1 MiB written in 256.
  BenchSample a{100, dir_read, 4u << 20, 1024, 1024 * 50000.0, 1024 * 40000.0, 1024 * 10000.0};
  BenchSample b{100, dir_write, 1u << 20, 256, 0, 0, 0};
  BenchSample c{200, dir_read, 0, 0, 0, 0, 0};
  r.log_samples = {a, b, c};
  return r;
}

TEST(BenchLog, WindowsAverageAndHaveNoBlockSize) {
  const BenchResult r = windows();
  EXPECT_EQ(format_bench_log(r, BenchLogKind::bw, true, false),
            "100, 40960, 0, 0, 0\n100, 10240, 1, 0, 0\n200, 0, 0, 0, 0\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::iops, true, false),
            "100, 10240, 0, 0, 0\n100, 2560, 1, 0, 0\n200, 0, 0, 0, 0\n");
  // Latency logs have no line for a window without requests.
  EXPECT_EQ(format_bench_log(r, BenchLogKind::lat, true, false), "100, 50000, 0, 0, 0\n100, 0, 1, 0, 0\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::slat, true, true), "100, 10000, 0, 0, 0, 0\n");
}

TEST(BenchLog, EveryRequestWithoutWindows) {
  BenchResult r;
  r.io_events = {{1500000, 8192, 4096, dir_write, 3000, 1000}};
  EXPECT_EQ(format_bench_log(r, BenchLogKind::clat, false, false), "1, 3000, 1, 4096, 0\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::lat, false, true), "1, 4000, 1, 4096, 8192, 0\n");
  // log_prio: the priority value as fio prints it (log_prio=1, no priority set: 0x0000).
  EXPECT_EQ(format_bench_log(r, BenchLogKind::lat, false, true, true), "1, 4000, 1, 4096, 8192, 0x0000\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::clat, false, false, true), "1, 3000, 1, 4096, 0x0000\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::iops, false, false), "1, 1, 1, 4096, 0\n");
  // 4096 bytes in 4 us: 1.024e9 bytes/s, 1000000 KiB/s.
  EXPECT_EQ(format_bench_log(r, BenchLogKind::bw, false, false), "1, 1000000, 1, 4096, 0\n");
  // A realtime request (class 1, level 0): fio's high-priority bit is 1, its value 0x2000.
  r.io_events[0].ioprio = 0x2000;
  EXPECT_EQ(format_bench_log(r, BenchLogKind::clat, false, false), "1, 3000, 1, 4096, 1\n");
  EXPECT_EQ(format_bench_log(r, BenchLogKind::clat, false, false, true), "1, 3000, 1, 4096, 0x2000\n");
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(BenchPlot, ThreeChartsAndASeriesPerJobAndDirection) {
  BenchResult a = windows();
  for (int i = 0; i < 1000; ++i) a.dir[dir_read].clat.add(1000 + i);
  BenchResult b = windows();
  b.rw = BenchRw::read;
  const std::string svg = plot_svg({{"one <&>", &a}, {"two", &b}}, "t");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<g class=\"chart\""), 3u);
  // a is mixed (read and write), b reads: 3 series in each chart.
  EXPECT_EQ(count(svg, "<polyline class=\"series\""), 9u);
  EXPECT_EQ(count(svg, "data-axis=\"x\""), 3u);
  EXPECT_NE(svg.find("one &lt;&amp;&gt; read"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_NE(svg.find("data-x-scale=\"nines\""), std::string::npos);
}

}  // namespace
}  // namespace bench
