// fio's workloads on real files, with counts worked out by hand: mixed
// reads and writes by rwmixread, per-direction sequential offsets, bssplit
// sizes, loops, io_size, fsync every N writes (fio 3.33 issues 127 syncs
// for 2048 writes with fsync=16: none after the last), ramp_time, windows.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "cmd/bench/command_line.hpp"
#include "cmd/bench/jobs.hpp"
#include "cmd/bench/run.hpp"

namespace bench {
namespace {

using namespace fsio;

class File {
 public:
  explicit File(std::uint64_t size) {
    char tmpl[] = "/var/tmp/fsio-work-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0 || ftruncate(fd, off_t(size)) != 0) std::abort();
    ::close(fd);
    path_ = tmpl;
  }
  ~File() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BenchResult run(const std::string& path, BenchOptions o) {
  auto dev = open_bench_target(path, o);
  if (!dev) {
    ADD_FAILURE() << dev.error().message();
    return {};
  }
  auto r = run_bench(*dev, o);
  if (!r) {
    ADD_FAILURE() << r.error().message();
    return {};
  }
  return std::move(*r);
}

BenchOptions workload_opts(BenchRw rw) {
  BenchOptions o;
  o.rw = rw;
  o.bs = 4096;
  o.iodepth = 8;
  o.direct = false;
  o.force = true;
  return o;
}

TEST(Workloads, RandrwSplitsByRwmixreadAndTouchesEveryBlockOnce) {
  File f(4 << 20);
  auto o = workload_opts(BenchRw::randrw);
  o.rwmixread = 70;
  o.log_ios = true;
  const auto r = run(f.path(), o);
  EXPECT_EQ(r.dir[dir_read].ios + r.dir[dir_write].ios, 1024u);
  EXPECT_EQ(r.io_bytes, 4u << 20);
  EXPECT_GT(r.dir[dir_read].ios, 1024u * 60 / 100);
  EXPECT_LT(r.dir[dir_read].ios, 1024u * 80 / 100);
  std::set<std::uint64_t> offsets;
  for (const auto& e : r.io_events) offsets.insert(e.offset);
  EXPECT_EQ(offsets.size(), 1024u);  // one random map shared by both directions
  EXPECT_EQ(r.dir[dir_read].clat.count(), r.dir[dir_read].ios);
  EXPECT_EQ(r.dir[dir_write].lat.count(), r.dir[dir_write].ios);
}

// fio's trimwrite on the null engine (t/jobs/t0024.fio): each block is
// trimmed, then written; with bs=4k,4k,8k the writes catch up with each 8k
// trim, and the pass ends where the next trim would start past the end, one
// write short (fio 3.33: 128 trims, 255 writes on 1 MiB). randtrimwrite
// writes each trimmed block right after its trim.
TEST(Workloads, TrimwriteTrimsEachBlockThenWritesIt) {
  File f(1 << 20);
  auto o = workload_opts(BenchRw::trimwrite);
  o.null_engine = true;
  o.iodepth = 1;
  o.bssplit = {std::vector<BsSplit>{{4096, 100}}, {{4096, 100}}, {{8192, 100}}};
  auto r = run(f.path(), o);
  EXPECT_EQ(r.dir[dir_trim].ios, 128u);
  EXPECT_EQ(r.dir[dir_trim].io_bytes, 1u << 20);
  EXPECT_EQ(r.dir[dir_write].ios, 255u);
  EXPECT_EQ(r.dir[dir_read].ios, 0u);
  o.rw = BenchRw::randtrimwrite;
  o.log_ios = true;
  r = run(f.path(), o);
  ASSERT_EQ(r.io_events.size(), 256u);
  std::set<std::uint64_t> trimmed;
  for (std::size_t k = 0; k + 1 < r.io_events.size(); k += 2) {
    EXPECT_EQ(r.io_events[k].dir, dir_trim);
    EXPECT_EQ(r.io_events[k + 1].dir, dir_write);
    EXPECT_EQ(r.io_events[k + 1].offset, r.io_events[k].offset);
    EXPECT_EQ(r.io_events[k + 1].bytes, 8192u);  // the trim's size, not the write's bs
    trimmed.insert(r.io_events[k].offset);
  }
  EXPECT_EQ(trimmed.size(), 128u);  // the random map: every 8k block once
}

// fio 3.33 trims only with BLKDISCARD (os_trim), so on a regular file the
// first trim fails with ENOTTY, as fio's job does (err=25).
TEST(Workloads, TrimOnARegularFileFailsAsFios) {
  File f(1 << 20);
  auto o = workload_opts(BenchRw::trimwrite);
  auto dev = open_bench_target(f.path(), o);
  ASSERT_TRUE(dev);
  auto r = run_bench(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("Inappropriate ioctl"), std::string::npos) << r.error().message();
}

TEST(Workloads, SequentialRwKeepsAnOffsetPerDirection) {
  File f(1 << 20);
  auto o = workload_opts(BenchRw::rw);
  o.log_ios = true;
  const auto r = run(f.path(), o);
  EXPECT_EQ(r.io_bytes, 1u << 20);
  // Reads and writes each went from offset 0 upwards (fio's last_pos[ddir]).
  std::uint64_t max_off[2] = {0, 0};
  for (const auto& e : r.io_events) max_off[e.dir] = std::max(max_off[e.dir], e.offset);
  EXPECT_EQ(max_off[dir_read], (r.dir[dir_read].ios - 1) * 4096);
  EXPECT_EQ(max_off[dir_write], (r.dir[dir_write].ios - 1) * 4096);
}

TEST(Workloads, BssplitDrawsItsSizesAndStopsAtTheRange) {
  File f(8 << 20);
  auto o = workload_opts(BenchRw::randwrite);
  o.bssplit[dir_write] = {{4096, 50}, {65536, 50}};
  o.log_ios = true;
  const auto r = run(f.path(), o);
  std::set<std::uint32_t> sizes;
  for (const auto& e : r.io_events) {
    if (e.offset + 65536 > (8u << 20)) continue;  // a request the range's end cuts short
    sizes.insert(e.bytes);
  }
  EXPECT_EQ(sizes, (std::set<std::uint32_t>{4096, 65536}));
  EXPECT_GE(r.io_bytes, 8u << 20);
  EXPECT_LT(r.io_bytes, (8u << 20) + 65536);
}

TEST(Workloads, LoopsAndIoSizeRepeatTheRange) {
  File f(1 << 20);
  auto o = workload_opts(BenchRw::read);
  o.loops = 3;
  EXPECT_EQ(run(f.path(), o).io_bytes, 3u << 20);
  o.loops = 1;
  o.io_size = 5u << 19;  // 2.5 MiB over a 1 MiB range: sequential reads wrap
  EXPECT_EQ(run(f.path(), o).io_bytes, 5u << 19);
}

TEST(Workloads, FsyncAfterEveryNWritesButNotAfterTheLast) {
  File f(256 << 10);  // 64 blocks
  auto o = workload_opts(BenchRw::write);
  o.fsync_every = 16;
  const auto r = run(f.path(), o);
  EXPECT_EQ(r.sync_lat.count(), 3u);  // after 16, 32, 48
  EXPECT_EQ(r.stats.flushes, 3u);
  o.fsync_data_only = false;
  o.end_fsync = true;
  EXPECT_EQ(run(f.path(), o).sync_lat.count(), 4u);
}

TEST(Workloads, RampTimeIsRunButNotMeasured) {
  File f(1 << 20);
  auto o = workload_opts(BenchRw::read);
  o.runtime = 0.2;
  o.time_based = true;
  o.ramp_time = 0.1;
  o.stat_window_ms = 20;
  const auto r = run(f.path(), o);
  EXPECT_GE(r.elapsed, 0.19);
  EXPECT_LT(r.elapsed, 0.5);
  // Windows of 20 ms over 200 ms of measurement: about ten, each with bytes.
  EXPECT_GE(r.stat_samples.size(), 8u);
  EXPECT_LE(r.stat_samples.size(), 11u);
  for (const auto& s : r.stat_samples) EXPECT_EQ(s.dir, dir_read);
  std::uint64_t in_windows = 0;
  for (const auto& s : r.stat_samples) in_windows += s.bytes;
  EXPECT_LE(in_windows, r.io_bytes);
}

TEST(Workloads, VerifyIsRefusedWhereItCannotReplay) {
  auto o = workload_opts(BenchRw::randrw);
  o.verify = true;
  EXPECT_TRUE(validate(o));
  o.loops = 2;  // a mixed pass is replayed once, whole
  EXPECT_FALSE(validate(o));
  o = workload_opts(BenchRw::randwrite);
  o.verify = true;
  o.norandommap = true;
  EXPECT_FALSE(validate(o));
}

// fio's verify of a mixed workload: the writes are stamped and read back
// (every byte written, no other); the pass's own reads are not checked.
TEST(Workloads, MixedVerifyReadsBackExactlyWhatWasWritten) {
  for (BenchRw rw : {BenchRw::rw, BenchRw::randrw}) {
    File f(4 << 20);
    auto o = workload_opts(rw);
    o.verify = true;
    o.rwmixread = 30;
    const auto r = run(f.path(), o);
    ASSERT_TRUE(r.verify);
    EXPECT_GT(r.dir[dir_write].io_bytes, 0u);
    EXPECT_EQ(r.verify->bytes_checked, r.dir[dir_write].io_bytes);
    EXPECT_TRUE(r.verify_ok());
  }
}

TEST(BenchJobs, CopiesRunTogetherAndStonewallsWait) {
  File f(2 << 20);
  auto c = parse_ddbench_command({"--name=r", "--rw=randread", "--numjobs=2", "--filename=" + f.path(), "--name=w",
                                  "--stonewall", "--rw=write", "--bs=64k", "--filename=" + f.path()});
  ASSERT_TRUE(c) << c.error().message();
  for (auto& j : c->jobs) j.bench.force = true;
  auto jobs = expand_fio_jobs(c->jobs);
  auto run = run_bench_jobs(jobs, nullptr);
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->results.size(), 3u);
  EXPECT_EQ(run->results[0].io_bytes, 2u << 20);
  EXPECT_EQ(run->results[1].io_bytes, 2u << 20);
  EXPECT_EQ(run->results[2].dir[dir_write].io_bytes, 2u << 20);
  const BenchResult merged = merge_results({&run->results[0], &run->results[1]});
  EXPECT_EQ(merged.dir[dir_read].ios, 1024u);
  EXPECT_EQ(merged.dir[dir_read].clat.count(), 1024u);
}

TEST(BenchJobs, AMissingFileWithASizeIsMadeAndLaidOutForReads) {
  char dir[] = "/var/tmp/fsio-jobs-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto c = parse_ddbench_command({"--name=lay", "--rw=read", "--size=1m", std::string("--directory=") + dir});
  ASSERT_TRUE(c) << c.error().message();
  auto jobs = expand_fio_jobs(c->jobs);
  auto run = run_bench_jobs(jobs, nullptr);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->results[0].io_bytes, 1u << 20);
  const std::string made = std::string(dir) + "/lay.0.0";
  struct stat st {};
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_GE(std::uint64_t(st.st_blocks) * 512, 1u << 20);  // written, not a hole
  ::unlink(made.c_str());
  ::rmdir(dir);
  auto none = parse_ddbench_command({"--name=nosize", "--rw=read", "--filename=/dev/fsio-no-such-device"});
  ASSERT_TRUE(none);
  auto jobs2 = expand_fio_jobs(none->jobs);
  auto r2 = run_bench_jobs(jobs2, nullptr);
  ASSERT_FALSE(r2);
  EXPECT_NE(r2.error().message().find("makes no files under /dev"), std::string::npos) << r2.error().message();
}

}  // namespace
}  // namespace bench
