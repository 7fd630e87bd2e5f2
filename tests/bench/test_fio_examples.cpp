// What fio's example jobs need (issue 27), run on real files, each number
// worked out by hand from fio's HOWTO or fio 3.33's io_u.c: the null
// engine, bsrange's sizes, filesize, do_verify=0 and verify_fatal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "cmd/bench/command_line.hpp"
#include "cmd/bench/jobs.hpp"
#include "cmd/bench/run.hpp"

namespace bench {
namespace {

using namespace fsio;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/var/tmp/fsio-fioex-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    (void)std::system(cmd.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BenchRun run_command(const std::vector<std::string>& args, bool log_ios = false) {
  auto c = parse_ddbench_command(args);
  EXPECT_TRUE(c) << (c ? "" : c.error().message());
  if (!c) return {};
  for (auto& j : c->jobs) j.bench.force = true;
  auto jobs = expand_fio_jobs(c->jobs);
  for (auto& j : jobs) j.options.log_ios = log_ios;  // every request's size, as ddbench does for a log
  auto run = run_bench_jobs(jobs, nullptr);
  EXPECT_TRUE(run) << (run ? "" : run.error().message());
  return run ? std::move(*run) : BenchRun{};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// fio HOWTO, ioengine=null: "Doesn't transfer any data, just pretends to";
// fio makes no file for it. 1 MiB in 4 KiB requests: 256 writes.
TEST(FioExamples, NullEngineMovesNoDataAndMakesNoFile) {
  TempDir d;
  const auto run = run_command(
      {"--name=n", "--ioengine=null", "--rw=randwrite", "--size=1m", "--iodepth=16", "--directory=" + d.path()});
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results[0].dir[dir_write].io_bytes, 1u << 20);
  EXPECT_EQ(run.results[0].dir[dir_write].ios, 256u);
  EXPECT_EQ(run.results[0].engine, "null");
  EXPECT_FALSE(exists(d.path() + "/n.0.0"));
  auto c = parse_ddbench_command({"--name=n", "--ioengine=null", "--rw=read", "--directory=" + d.path()});
  ASSERT_TRUE(c);
  auto jobs = expand_fio_jobs(c->jobs);
  auto none = run_bench_jobs(jobs, nullptr);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("ioengine=null needs size="), std::string::npos) << none.error().message();
}

// fio 3.33 io_u.c get_next_buflen: buflen = min + max x U[0,1), rounded
// down to a multiple of min, at most max. For 1k-4k that is 1k, 2k, 3k and
// 4k a quarter of the time each: 2.5 KiB on average.
TEST(FioExamples, BsrangeSizesAreFiosQuarters) {
  TempDir d;
  const std::string file = d.path() + "/f";
  const auto run = run_command({"--name=r", "--rw=write", "--bsrange=1k-4k", "--size=8m", "--filename=" + file}, true);
  ASSERT_EQ(run.results.size(), 1u);
  std::map<std::uint32_t, unsigned> sizes;
  for (const auto& e : run.results[0].io_events) ++sizes[e.bytes];
  const unsigned n = unsigned(run.results[0].io_events.size());
  ASSERT_GT(n, 3000u);  // 8 MiB / 2.5 KiB is about 3277 requests
  for (std::uint32_t bs : {1024u, 2048u, 3072u, 4096u}) {
    EXPECT_GT(sizes[bs], n * 22 / 100) << bs;  // 25% each, within a few percent
    EXPECT_LT(sizes[bs], n * 28 / 100) << bs;
  }
  for (const auto& [bs, count] : sizes) {
    if (bs != 1024 && bs != 2048 && bs != 3072 && bs != 4096) {
      EXPECT_LT(count, 3u) << bs;  // the range's cut end
    }
  }
}

// filesize: the file is that size. fio 3.33, measured: filesize=512k with
// size=2m reads 512 KiB (size caps the bytes at the file), with size=256k
// 256 KiB, with io_size=2m 2 MiB (going over the file again).
TEST(FioExamples, FilesizeMakesTheFileAndSizeCapsTheBytes) {
  TempDir d;
  auto bytes = [&](const std::string& name, const std::string& extra) {
    const auto run = run_command({"--name=" + name, "--rw=read", "--filesize=512k", extra, "--directory=" + d.path()});
    return run.results.size() == 1 ? run.results[0].dir[dir_read].io_bytes : 0;
  };
  EXPECT_EQ(bytes("a", "--size=2m"), 512u << 10);
  EXPECT_EQ(bytes("b", "--size=256k"), 256u << 10);
  EXPECT_EQ(bytes("c", "--io_size=2m"), 2u << 20);
  struct stat st {};
  ASSERT_EQ(::stat((d.path() + "/a.0.0").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 512 << 10);
  const auto alone = run_command({"--name=g", "--rw=write", "--filesize=128k", "--directory=" + d.path()});
  ASSERT_EQ(alone.results.size(), 1u);
  EXPECT_EQ(alone.results[0].dir[dir_write].io_bytes, 128u << 10);
}

// do_verify=0 writes the stamps and reads nothing back; a later read with
// verify checks them. verify_fatal=1 stops at the first bad block; without
// it every block is checked (fio HOWTO, verify_fatal).
TEST(FioExamples, DoVerifyZeroThenReadCheckAndVerifyFatal) {
  TempDir d;
  const std::string file = d.path() + "/v";
  const auto w =
      run_command({"--name=w", "--rw=write", "--size=1m", "--verify=md5", "--do_verify=0", "--filename=" + file});
  ASSERT_EQ(w.results.size(), 1u);
  EXPECT_FALSE(w.results[0].verify.has_value());
  EXPECT_EQ(w.results[0].dir[dir_read].io_bytes, 0u);
  const auto r = run_command({"--name=r", "--rw=read", "--size=1m", "--verify=md5", "--filename=" + file});
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_TRUE(r.results[0].verify_ok());
  EXPECT_EQ(r.results[0].verify->bytes_checked, 1u << 20);
  // Spoil blocks 16 and 200 (of 256).
  const int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string zeros(4096, '\0');
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), 16 * 4096), 4096);
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), 200 * 4096), 4096);
  ::close(fd);
  const auto all = run_command({"--name=r", "--rw=read", "--size=1m", "--verify=md5", "--filename=" + file});
  ASSERT_EQ(all.results.size(), 1u);
  EXPECT_EQ(all.results[0].verify->bad_blocks, 2u);
  EXPECT_EQ(all.results[0].verify->bytes_checked, 1u << 20);
  const auto fatal =
      run_command({"--name=r", "--rw=read", "--size=1m", "--verify=md5", "--verify_fatal=1", "--filename=" + file});
  ASSERT_EQ(fatal.results.size(), 1u);
  EXPECT_EQ(fatal.results[0].verify->bad_blocks, 1u);
  EXPECT_EQ(fatal.results[0].verify->first->offset / 4096, 16u);  // the first bad byte is in block 16
  EXPECT_EQ(fatal.results[0].verify->bytes_checked, 17u * 4096);  // blocks 0 to 16, iodepth 1
}

// fio 3.33 get_next_seq_offset, worked by hand for a 64 KiB range in 4 KiB
// requests. rw=read:-8k: 0, then 4k - 8k wraps to the end less 8k (56k),
// then 56k + 4k - 8k = 52k, 48k, ... rw=write:4k: 0, 8k, 16k, ... 56k, then
// 60k + 4k is the end: back to 0.
TEST(FioExamples, OffsetModifiersMakeHolesOrGoBackwards) {
  TempDir d;
  const std::string file = d.path() + "/m";
  const auto back = run_command({"--name=b", "--rw=read:-8k", "--size=64k", "--bs=4k", "--filename=" + file}, true);
  ASSERT_EQ(back.results.size(), 1u);
  std::vector<std::uint64_t> offs;
  for (const auto& e : back.results[0].io_events) offs.push_back(e.offset / 1024);
  ASSERT_EQ(offs.size(), 16u);  // size= bytes of I/O, as fio
  EXPECT_EQ(std::vector<std::uint64_t>(offs.begin(), offs.begin() + 5),
            (std::vector<std::uint64_t>{0, 56, 52, 48, 44}));
  const auto holes = run_command({"--name=h", "--rw=write:4k", "--size=64k", "--bs=4k", "--filename=" + file}, true);
  offs.clear();
  for (const auto& e : holes.results[0].io_events) offs.push_back(e.offset / 1024);
  ASSERT_EQ(offs.size(), 16u);
  EXPECT_EQ(std::vector<std::uint64_t>(offs.begin(), offs.begin() + 10),
            (std::vector<std::uint64_t>{0, 8, 16, 24, 32, 40, 48, 56, 0, 8}));
}

// fio's gtod_reduce=1 (HOWTO: disable_clat, disable_slat, disable_bw_measurement
// and more): no latency is recorded and no bw/iops window either; the bytes stay.
TEST(FioExamples, GtodReduceRecordsNoTimings) {
  TempDir d;
  const auto run = run_command(
      {"--name=g", "--ioengine=null", "--rw=randread", "--size=1m", "--gtod_reduce=1", "--directory=" + d.path()});
  ASSERT_EQ(run.results.size(), 1u);
  const BenchResult& r = run.results[0];
  EXPECT_EQ(r.dir[dir_read].io_bytes, 1u << 20);
  EXPECT_EQ(r.dir[dir_read].ios, 256u);
  EXPECT_EQ(r.dir[dir_read].clat.count(), 0u);
  EXPECT_EQ(r.dir[dir_read].lat.count(), 0u);
  EXPECT_TRUE(r.stat_samples.empty());
}

// verify_dump=1 (fio HOWTO: "dump the contents of both the original data
// block and the data block we read off disk to files"), named as fio 3.33's
// dump_buf names them: FILE.OFFSET.received and .expected.
TEST(FioExamples, VerifyDumpWritesTheBadBlockBothWays) {
  TempDir d;
  const std::string file = d.path() + "/dumped";
  run_command({"--name=w", "--rw=write", "--size=64k", "--verify=crc32c", "--filename=" + file});
  const int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string zeros(4096, '\0');
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), 8192), 4096);
  ::close(fd);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(d.path().c_str()), 0);
  const auto r =
      run_command({"--name=r", "--rw=read", "--size=64k", "--verify=crc32c", "--verify_dump=1", "--filename=" + file});
  ASSERT_EQ(::chdir(cwd), 0);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].verify->dumps, (std::vector<std::string>{"dumped.8192.received", "dumped.8192.expected"}));
  struct stat st {};
  ASSERT_EQ(::stat((d.path() + "/dumped.8192.received").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4096);
}

// allow_file_create=0: fio refuses a job whose file is missing instead of
// making it; serialize_overlap is only taken where nothing overlaps in flight.
TEST(FioExamples, AllowFileCreateZeroAndSerializeOverlap) {
  TempDir d;
  auto c = parse_ddbench_command(
      {"--name=n", "--rw=read", "--size=1m", "--allow_file_create=0", "--filename=" + d.path() + "/missing"});
  ASSERT_TRUE(c);
  auto jobs = expand_fio_jobs(c->jobs);
  auto none = run_bench_jobs(jobs, nullptr);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("allow_file_create=0"), std::string::npos) << none.error().message();
  EXPECT_FALSE(exists(d.path() + "/missing"));
  BenchOptions o;
  o.serialize_overlap = true;
  o.iodepth = 1;
  EXPECT_TRUE(validate(o));
  o.iodepth = 4;
  EXPECT_FALSE(validate(o));
}

}  // namespace
}  // namespace bench
