// fio's options and command line as ddbench reads them: defaults, the
// option table, what is refused and why, and the order fio applies things in
// (fio HOWTO "Job file format", init.c parse_cmd_line).
#include <gtest/gtest.h>

#include <fstream>

#include "cmd/bench/command_line.hpp"
#include "cmd/bench/jobs.hpp"
#include "tests/support/support.hpp"
#include "tests/bench/fio_lines.hpp"

namespace bench {
namespace {

using namespace fsio;

FioLine line(const std::string& text) { return split_fio_option(text, "job.fio:1"); }

std::string refusal(std::initializer_list<const char*> lines) {
  FioJob j = fio_defaults();
  std::vector<FioLine> v;
  for (const char* l : lines) v.push_back(line(l));
  auto st = apply_fio_lines(j, v);
  EXPECT_FALSE(st.has_value());
  EXPECT_EQ(st ? Errc::io : st.error().code, Errc::invalid_argument);
  return st ? "" : st.error().message();
}

TEST(FioOptions, FioDefaultsAreFiosAndTerseDefaultsAreDdbenchs) {
  const FioJob f = fio_defaults();
  EXPECT_EQ(f.bench.bs, 4096u);
  EXPECT_EQ(f.bench.iodepth, 1u);
  EXPECT_EQ(f.bench.engine, EngineKind::psync);
  EXPECT_FALSE(f.bench.direct);
  // fio's HOWTO: iodepth_batch_submit "defaults to 1 which means that we
  // submit each I/O as soon as it is available".
  EXPECT_EQ(f.bench.batch, 1u);
  EXPECT_FALSE(f.bench.merge);
  const FioJob t = terse_defaults();
  EXPECT_EQ(t.bench.bs, 1u << 20);
  EXPECT_EQ(t.bench.iodepth, 32u);
  EXPECT_TRUE(t.bench.direct);
}

TEST(FioOptions, CommonJobReadsAsFioMeansIt) {
  const FioJob j = fio_applied({"rw=randrw", "rwmixwrite=30", "bs=4KB", "iodepth=32", "ioengine=io_uring", "direct=1",
                                "size=10%", "io_size=1g", "offset=1m", "runtime=2m", "time_based", "ramp_time=500ms",
                                "loops=3", "fdatasync=8", "numjobs=2", "group_reporting", "stonewall"});
  EXPECT_EQ(j.bench.rw, BenchRw::randrw);
  EXPECT_EQ(j.bench.rwmixread, 70u);
  EXPECT_EQ(j.bench.bs, 4096u);
  EXPECT_EQ(j.bench.iodepth, 32u);
  EXPECT_EQ(j.bench.engine, EngineKind::uring);
  EXPECT_TRUE(j.bench.direct);
  EXPECT_TRUE(j.size.is_percent());
  EXPECT_EQ(j.io_size.bytes, 1ull << 30);
  EXPECT_EQ(j.offset.bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(j.bench.runtime, 120.0);
  EXPECT_TRUE(j.bench.time_based);
  EXPECT_DOUBLE_EQ(j.bench.ramp_time, 0.5);
  EXPECT_EQ(j.bench.loops, 3u);
  EXPECT_EQ(j.bench.fsync_every, 8u);
  EXPECT_TRUE(j.bench.fsync_data_only);
  EXPECT_EQ(j.numjobs, 2u);
  EXPECT_TRUE(j.group_reporting);
  EXPECT_TRUE(j.stonewall);
}

TEST(FioOptions, KbBaseAppliesToEveryLineWhereverItIs) {
  EXPECT_EQ(fio_applied({"bs=4k", "kb_base=1000"}).bench.bs, 4000u);
  EXPECT_EQ(fio_applied({"kb_base=1000", "bs=4KiB"}).bench.bs, 4096u);
}

TEST(FioOptions, BsPerDirectionAndBssplit) {
  const FioJob rw = fio_applied({"bs=4k,64k"});
  EXPECT_EQ(rw.bench.bssplit[dir_read].size(), 1u);
  EXPECT_EQ(rw.bench.bssplit[dir_read][0].bs, 4096u);
  EXPECT_EQ(rw.bench.bssplit[dir_write][0].bs, 65536u);
  EXPECT_EQ(rw.bench.max_bs(), 65536u);
  EXPECT_EQ(rw.bench.min_bs(), 4096u);
  // Blank percentages share what is left equally (fio's rule).
  const FioJob s = fio_applied({"bssplit=4k/50:8k/:64k/"});
  ASSERT_EQ(s.bench.bssplit[dir_read].size(), 3u);
  EXPECT_EQ(s.bench.bssplit[dir_read][1].percent + s.bench.bssplit[dir_read][2].percent, 50u);
  EXPECT_EQ(s.bench.bssplit[dir_write].size(), 3u);
  const FioJob w = fio_applied({"bssplit=4k/100,1m/100"});
  EXPECT_EQ(w.bench.bssplit[dir_write][0].bs, 1u << 20);
  EXPECT_NE(refusal({"bssplit=4k/60:8k/60"}).find("more than 100"), std::string::npos);
}

TEST(FioOptions, EnginesMapAndSaySo) {
  const FioJob l = fio_applied({"ioengine=libaio"});
  EXPECT_EQ(l.bench.engine, EngineKind::uring);
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("libaio runs on io_uring"), std::string::npos);
  EXPECT_EQ(fio_applied({"ioengine=sync"}).bench.engine, EngineKind::psync);
  // posixaio, like libaio, keeps iodepth requests in flight: io_uring, said so (issue 27).
  const FioJob p = fio_applied({"ioengine=posixaio"});
  EXPECT_EQ(p.bench.engine, EngineKind::uring);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("posixaio runs on io_uring"), std::string::npos);
  EXPECT_TRUE(fio_applied({"ioengine=null"}).bench.null_engine);
  EXPECT_FALSE(fio_applied({"ioengine=null", "ioengine=psync"}).bench.null_engine);  // the last one wins
  EXPECT_NE(refusal({"ioengine=rdma"}).find("ioengine 'rdma'"), std::string::npos);
  // cpuio and exec run as fio's (task_engines.hpp), refused without what fio's need.
  EXPECT_EQ(fio_applied({"ioengine=cpuio", "cpuload=50"}).task.engine, TaskEngine::cpuio);
  EXPECT_NE(refusal({"ioengine=cpuio"}).find("needs cpuload="), std::string::npos);
  EXPECT_NE(refusal({"ioengine=exec"}).find("needs program="), std::string::npos);
}

// fio's ftruncate engine is synchronous and moves no data; it replaces the
// null engine when both are given, the last one winning as above.
TEST(FioOptions, FtruncateEngineIsSynchronousAndLastOneWins) {
  const FioJob t = fio_applied({"ioengine=null", "ioengine=ftruncate"});
  EXPECT_TRUE(t.bench.ftruncate_engine);
  EXPECT_FALSE(t.bench.null_engine);
  EXPECT_EQ(t.bench.engine, EngineKind::psync);
  EXPECT_FALSE(fio_applied({"ioengine=ftruncate", "ioengine=psync"}).bench.ftruncate_engine);
}

// fio's file engines work on nrfiles files a job; elsewhere a job has one
// target, so nrfiles above 1, openfiles and create_on_open are refused
// there, naming the line. The check runs after every line, so the engine
// may come after them (a [global] nrfiles, a job's own ioengine).
TEST(FioOptions, SeveralFilesOnlyWithAFileEngine) {
  const FioJob c = fio_applied({"nrfiles=31250", "create_on_open=1", "openfiles=1", "ioengine=filecreate"});
  EXPECT_EQ(c.file_op, FileOp::create);
  EXPECT_EQ(c.nrfiles, 31250u);
  EXPECT_TRUE(c.create_on_open);
  EXPECT_EQ(fio_applied({"ioengine=filestat"}).file_op, FileOp::stat);
  EXPECT_EQ(fio_applied({"ioengine=filedelete"}).file_op, FileOp::remove);
  EXPECT_EQ(fio_applied({"ioengine=filedelete", "ioengine=sync"}).file_op, FileOp::none);
  EXPECT_EQ(fio_applied({"nrfiles=1"}).nrfiles, 1u);  // fio's default, any engine
  EXPECT_NE(refusal({"nrfiles=2"}).find("nrfiles '2': several files per job"), std::string::npos);
  EXPECT_NE(refusal({"openfiles=1"}).find("openfiles"), std::string::npos);
  EXPECT_NE(refusal({"create_on_open=1"}).find("create_on_open"), std::string::npos);
  EXPECT_EQ(fio_applied({"create_on_open=0"}).create_on_open, false);
}

// verify_backlog is a count of blocks, with fio's size suffixes (t0009's "1m").
TEST(FioOptions, VerifyBacklogCountsBlocks) {
  EXPECT_EQ(fio_defaults().bench.verify_backlog, 0u);
  EXPECT_EQ(fio_applied({"verify_backlog=32"}).bench.verify_backlog, 32u);
  EXPECT_EQ(fio_applied({"verify_backlog=1m"}).bench.verify_backlog, 1u << 20);
  EXPECT_NE(refusal({"verify_backlog_batch=4"}).find("not supported"), std::string::npos);
}

// verify_pattern takes fio's byte forms: hex in order (an odd digit count
// padded in front, as fio reads 0xaaa: 0a aa), a decimal number as its
// little-endian bytes, a quoted string; alone it turns verify on
// (fio's verify=pattern), and verify=0 after it still turns it off.
TEST(FioOptions, VerifyPatternInFiosByteForms) {
  const auto b = [](std::initializer_list<unsigned> l) {
    std::vector<std::byte> v;
    for (unsigned x : l) v.push_back(std::byte(x));
    return v;
  };
  const FioJob h = fio_applied({"verify_pattern=0xaaa"});
  EXPECT_EQ(h.bench.verify_pattern, b({0x0a, 0xaa}));
  EXPECT_TRUE(h.bench.verify);
  EXPECT_EQ(fio_applied({"verify_pattern=0xaa555aa5"}).bench.verify_pattern, b({0xaa, 0x55, 0x5a, 0xa5}));
  EXPECT_EQ(fio_applied({"verify_pattern=1234"}).bench.verify_pattern, b({0xd2, 0x04}));
  EXPECT_EQ(fio_applied({"verify_pattern=0"}).bench.verify_pattern, b({0x00}));
  EXPECT_EQ(fio_applied({"verify_pattern='ab'"}).bench.verify_pattern, b({'a', 'b'}));
  EXPECT_FALSE(fio_applied({"verify_pattern=0xff", "verify=0"}).bench.verify);
  EXPECT_NE(refusal({"verify_pattern=0xff|%o"}).find("%o"), std::string::npos);
  EXPECT_NE(refusal({"verify_pattern=0xfg"}).find("hex"), std::string::npos);
}

// zonemode=strided as fio's init.c sets it up: zonesize needed, zonerange
// defaulting to it; zbd and zone sizes without the mode are refused.
TEST(FioOptions, StridedZonesAsFioSetsThemUp) {
  const FioJob z = fio_applied({"zonemode=strided", "zonesize=256m", "zoneskip=2g"});
  EXPECT_EQ(z.bench.zone_size, 256u << 20);
  EXPECT_EQ(z.bench.zone_range, 256u << 20);
  EXPECT_EQ(z.bench.zone_skip, std::uint64_t{2} << 30);
  EXPECT_EQ(fio_applied({"zonemode=strided", "zonesize=192k", "zonerange=128k"}).bench.zone_range, 128u << 10);
  EXPECT_EQ(fio_applied({"zonemode=none"}).bench.zone_size, 0u);
  EXPECT_NE(refusal({"zonemode=strided"}).find("needs zonesize"), std::string::npos);
  EXPECT_NE(refusal({"zonesize=1m"}).find("need zonemode=strided"), std::string::npos);
  EXPECT_NE(refusal({"zonemode=zbd"}).find("zoned devices"), std::string::npos);
}

// write_iolog names the log; a job with requests ddbench would leave out of
// it (a verify read-back, the ramp, fsync=N's flushes) is refused.
TEST(FioOptions, WriteIologOnlyWhereEveryRequestIsLogged) {
  EXPECT_EQ(fio_applied({"write_iolog=log"}).write_iolog, "log");
  EXPECT_NE(refusal({"write_iolog=log", "rw=write", "verify=md5"}).find("verify read-back"), std::string::npos);
  (void)fio_applied({"write_iolog=log", "rw=read", "verify=md5"});  // a verify read is a logged request
  EXPECT_NE(refusal({"write_iolog=log", "ramp_time=1"}).find("ramp_time"), std::string::npos);
  EXPECT_NE(refusal({"fsync=4", "write_iolog=log"}).find("fsync"), std::string::npos);
}

// fallocate=none is what ddbench does when it makes a file (ftruncate, then
// write); fio's other modes preallocate, which ddbench does not.
TEST(FioOptions, FallocateNoneOnly) {
  (void)fio_applied({"fallocate=none"});
  (void)fio_applied({"fallocate=0"});
  EXPECT_NE(refusal({"fallocate=posix"}).find("only none"), std::string::npos);
}

// fio HOWTO: do_verify "Run the verify phase after a write phase" (default
// true); verify_fatal "exit the job on the first observed failure" (default
// false); experimental_verify changes only how fio finds what to read back.
TEST(FioOptions, VerifyKnobsAsFiosHowtoGivesThem) {
  const FioJob d = fio_defaults();
  EXPECT_TRUE(d.bench.do_verify);
  EXPECT_FALSE(d.bench.verify_fatal);
  const FioJob j = fio_applied({"verify=md5", "do_verify=0", "verify_fatal=1", "experimental_verify=1"});
  EXPECT_TRUE(j.bench.verify);
  EXPECT_FALSE(j.bench.do_verify);
  EXPECT_TRUE(j.bench.verify_fatal);
  EXPECT_NE(refusal({"verify_fatal=2"}).find("verify_fatal"), std::string::npos);
}

// fio HOWTO: bsrange=irange "1k-4k"; a second range after ',' is for writes;
// fio's range parser takes ':' as well as '-' ("512:1M" in fio's own jobs).
TEST(FioOptions, BsrangeTakesFiosRangeSyntax) {
  const FioJob one = fio_applied({"bsrange=1k-4k"});
  for (unsigned d = 0; d < 2; ++d) {
    EXPECT_EQ(one.bench.bsrange[d].min, 1024u);
    EXPECT_EQ(one.bench.bsrange[d].max, 4096u);
  }
  EXPECT_EQ(one.bench.min_bs(), 1024u);
  EXPECT_EQ(one.bench.max_bs(), 4096u);
  const FioJob two = fio_applied({"blocksize_range=512:1M,4k-8k"});
  EXPECT_EQ(two.bench.bsrange[dir_read].min, 512u);
  EXPECT_EQ(two.bench.bsrange[dir_read].max, 1u << 20);
  EXPECT_EQ(two.bench.bsrange[dir_write].min, 4096u);
  EXPECT_EQ(two.bench.bsrange[dir_write].max, 8192u);
  EXPECT_EQ(fio_applied({"bsrange=1k-4k", "bs=8k"}).bench.max_bs(), 8192u);  // the later bs replaces the range
  // A bssplit decides the sizes whatever the range says, as fio's get_next_buflen.
  EXPECT_EQ(fio_applied({"bssplit=4k/50:8k/50", "bsrange=1k-64k"}).bench.max_bs(), 8192u);
  // fio swaps ends given high first, and reads an end as its number and unit
  // only (t/jobs/t0023.fio's "bsrange=512/25:1k:25:..." is 512-1k in fio 3.33).
  EXPECT_EQ(fio_applied({"bsrange=4k-1k"}).bench.bsrange[dir_read].min, 1024u);
  const FioJob odd = fio_applied({"bsrange=512/25:1k:25:2k:25:4k/25"});
  for (unsigned d = 0; d < bench_dirs; ++d) {
    EXPECT_EQ(odd.bench.bsrange[d].min, 512u);
    EXPECT_EQ(odd.bench.bsrange[d].max, 1024u);
  }
  EXPECT_NE(refusal({"bsrange=0-1k"}).find("low end"), std::string::npos);
  EXPECT_NE(refusal({"bsrange=4k"}).find("MIN-MAX"), std::string::npos);
}

// fio HOWTO: bs=R,W,T; "a value not terminated in a comma applies to
// subsequent types". Trim sizes count in min_bs and max_bs only in a trim
// job, where the smallest is the trims' (only trims pick random offsets).
// fio opens a trim job's file without O_DIRECT.
TEST(FioOptions, TrimwriteTakesTheThirdBlockSize) {
  const FioJob j = fio_applied({"rw=randtrimwrite", "bs=4k,4k,8k", "direct=1"});
  EXPECT_EQ(j.bench.rw, BenchRw::randtrimwrite);
  EXPECT_EQ(j.bench.bssplit[dir_trim][0].bs, 8192u);
  EXPECT_EQ(j.bench.min_bs(), 8192u);
  EXPECT_FALSE(j.bench.direct);
  const FioJob two = fio_applied({"bs=4k,16k"});
  EXPECT_EQ(two.bench.bssplit[dir_trim][0].bs, 16384u);
  EXPECT_EQ(two.bench.max_bs(), 16384u);
  EXPECT_EQ(fio_applied({"bs=4k,4k,1m"}).bench.max_bs(), 4096u);  // not a trim job
  EXPECT_EQ(fio_applied({"bs=8k,8k,8k"}).bench.bs, 8192u);
  EXPECT_EQ(fio_applied({"rw=trimwrite", "bssplit=4k/100,8k/100,16k/100"}).bench.max_bs(), 16384u);
  const auto refused = [](std::initializer_list<const char*> lines) {
    auto st = validate(fio_applied(lines).bench);
    return st ? std::string() : st.error().message();
  };
  EXPECT_NE(refused({"rw=trimwrite", "verify=md5"}).find("verify with rw=trimwrite"), std::string::npos);
  EXPECT_NE(refused({"rw=trimwrite", "rate=1m"}).find("rate limits"), std::string::npos);
  EXPECT_NE(refused({"rw=trimwrite", "ioengine=ftruncate"}).find("fails trims"), std::string::npos);
}

// fio HOWTO: rw=TYPE:N is an offset modifier; on sequential I/O, N bytes
// are added after each request (negative: backwards).
TEST(FioOptions, OffsetModifiersOnSequentialIoOnly) {
  EXPECT_EQ(fio_applied({"rw=read:-8k"}).bench.seq_add, -8192);
  EXPECT_EQ(fio_applied({"rw=write:112k"}).bench.seq_add, 112 * 1024);
  EXPECT_EQ(fio_applied({"rw=write:112k", "rw=write"}).bench.seq_add, 0);
  EXPECT_NE(refusal({"rw=randread:8"}).find("random I/O"), std::string::npos);
}

// Options that only tune how fio goes about the same I/O: accepted, said so.
TEST(FioOptions, InternalTuningIsAcceptedAndSaidSo) {
  const FioJob j = fio_applied({"io_submit_mode=offload", "random_generator=lfsr", "per_job_logs=0", "gtod_reduce"});
  ASSERT_EQ(j.notes.size(), 2u);
  EXPECT_NE(j.notes[0].find("offload"), std::string::npos);
  EXPECT_NE(j.notes[1].find("lfsr"), std::string::npos);
  EXPECT_FALSE(j.per_job_logs);
  EXPECT_TRUE(j.bench.gtod_reduce);
  EXPECT_TRUE(fio_applied({"io_submit_mode=inline"}).notes.empty());
  EXPECT_NE(refusal({"io_submit_mode=later"}).find("inline or offload"), std::string::npos);
  EXPECT_NE(refusal({"random_generator=mt"}).find("tausworthe"), std::string::npos);
  EXPECT_NE(refusal({"random_distribution=normal:10"}).find("not normal"), std::string::npos);
}

// fio HOWTO: filesize is the file's size; size then only defaults io_size.
TEST(FioOptions, FilesizeIsOneFilesSize) {
  EXPECT_EQ(fio_applied({"filesize=256k"}).filesize, 256u << 10);
  EXPECT_NE(refusal({"filesize=1k-4k"}).find("range of file sizes"), std::string::npos);
  EXPECT_NE(refusal({"filesize=0"}).find("more than 0"), std::string::npos);
}

TEST(FioOptions, VerifyTypesMapOntoOurStamps) {
  for (const char* v : {"verify=crc32c", "verify=md5", "verify=pattern", "verify"})
    EXPECT_TRUE(fio_applied({v}).bench.verify) << v;
  EXPECT_FALSE(fio_applied({"verify=0"}).bench.verify);
  EXPECT_NE(refusal({"verify=bogus"}).find("verify 'bogus'"), std::string::npos);
}

TEST(FioOptions, UnsupportedOptionsAreNamedWithTheReason) {
  const std::string m = refusal({"thinktime_spin=1"});
  EXPECT_NE(m.find("job.fio:1: thinktime_spin: fio's thinktime_spin is not supported by ddbench: "), std::string::npos)
      << m;
  EXPECT_NE(m.find("sleeps after every request"), std::string::npos) << m;
  EXPECT_NE(refusal({"wibble=1"}).find("wibble: unknown option"), std::string::npos);
  EXPECT_NE(refusal({"bs"}).find("bs: needs a value"), std::string::npos);
  EXPECT_NE(refusal({"bs=12Q"}).find("bs '12Q': unknown unit 'Q'"), std::string::npos);
  EXPECT_NE(refusal({"rw=trim"}).find("does not trim alone"), std::string::npos);
  EXPECT_NE(refusal({"filename=/dev/a:/dev/b"}).find("several files"), std::string::npos);
  EXPECT_NE(refusal({"direct=1", "buffered=1"}).find("contradict"), std::string::npos);
}

TEST(FioOptions, EveryOptionInTheTableIsFoundAndNoneIsAlsoRefused) {
  for (const auto& o : fio_options()) {
    EXPECT_EQ(find_fio_option(o.name), &o);
    for (const auto& [name, why] : fio_unsupported_options()) EXPECT_STRNE(o.name, name);
  }
  EXPECT_NE(find_fio_option("time-based"), nullptr);  // '-' and '_' alike
}

class FioCommand : public ::testing::Test {
 protected:
  test::TempDir dir;
  std::string file(const std::string& name, const std::string& text) {
    const std::string p = dir.path() + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  DdbenchCommand ok(std::vector<std::string> args) {
    auto c = parse_ddbench_command(args);
    EXPECT_TRUE(c.has_value()) << c.error().message();
    return c ? *c : DdbenchCommand{};
  }
  std::string err(std::vector<std::string> args) {
    auto c = parse_ddbench_command(args);
    EXPECT_FALSE(c.has_value());
    return c ? "" : c.error().message();
  }
};

TEST_F(FioCommand, TerseFormKeepsDdbenchsDefaults) {
  auto c = ok({"--rw", "randread", "--bs", "4KB", "/dev/null"});
  EXPECT_FALSE(c.fio_mode);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].filename, "/dev/null");
  EXPECT_EQ(c.jobs[0].bench.bs, 4096u);
  EXPECT_EQ(c.jobs[0].bench.iodepth, 32u);
  EXPECT_TRUE(c.jobs[0].bench.direct);
  EXPECT_NE(err({}).find("no target"), std::string::npos);
  EXPECT_NE(err({"a", "b"}).find("more than one target"), std::string::npos);
}

TEST_F(FioCommand, NameStartsAJobAndEarlierOptionsAreGlobal) {
  auto c = ok({"--rw=write", "--name=a", "--bs=8k", "--name=b", "--filename=/x", "--output-format=json"});
  EXPECT_TRUE(c.fio_mode);
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(c.jobs[0].name, "a");
  EXPECT_EQ(c.jobs[0].bench.rw, BenchRw::write);
  EXPECT_EQ(c.jobs[0].bench.bs, 8192u);
  EXPECT_EQ(c.jobs[1].bench.bs, 4096u);  // fio's default, not a's
  EXPECT_EQ(c.jobs[1].bench.iodepth, 1u);
  EXPECT_EQ(c.jobs[1].filename, "/x");
  EXPECT_EQ(c.formats, std::vector<std::string>{"json"});
  ASSERT_EQ(c.global_options.size(), 1u);
  EXPECT_EQ(c.global_options[0].first, "rw");
  ASSERT_GE(c.jobs[0].options.size(), 2u);
  EXPECT_EQ(c.jobs[0].options[0].first, "name");
}

TEST_F(FioCommand, AJobFileIsNeverATarget) {
  const std::string job = file("job.fio", "; test\n[global]\nbs=64k\nsize=1m\n[one]\nrw=read\n[two]\nrw=write\n");
  auto c = ok({"--rw=randwrite", job});
  EXPECT_TRUE(c.fio_mode);
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(c.jobs[0].bench.rw, BenchRw::read);  // the section wins
  EXPECT_EQ(c.jobs[0].bench.bs, 65536u);         // [global]
  EXPECT_TRUE(c.jobs[0].filename.empty());       // made as one.0.0, never job.fio
  EXPECT_EQ(c.jobs[1].bench.rw, BenchRw::write);
  auto t = ok({"--name=x", job, "/dev/null"});
  ASSERT_EQ(t.jobs.size(), 3u);
  for (const auto& j : t.jobs) EXPECT_EQ(j.filename, "/dev/null");  // the one target is the default filename
}

TEST_F(FioCommand, EachJobFileAfterTheFirstStartsWithAStonewall) {
  const std::string a = file("a.fio", "[a1]\n[a2]\n");
  const std::string b = file("b.fio", "[global]\nrw=write\n[b1]\n[b2]\n");
  auto c = ok({a, b});
  ASSERT_EQ(c.jobs.size(), 4u);
  EXPECT_FALSE(c.jobs[0].stonewall);
  EXPECT_FALSE(c.jobs[1].stonewall);
  EXPECT_TRUE(c.jobs[2].stonewall);
  EXPECT_FALSE(c.jobs[3].stonewall);
  EXPECT_EQ(c.jobs[0].bench.rw, BenchRw::read);  // b's [global] is b's own
  EXPECT_EQ(c.jobs[2].bench.rw, BenchRw::write);
  auto only = ok({"--section=b2", a, b});
  ASSERT_EQ(only.jobs.size(), 1u);
  EXPECT_EQ(only.jobs[0].name, "b2");
}

TEST_F(FioCommand, ToolOptionsAndRefusals) {
  const std::string a = file("a.fio", "[w]\nrw=write\n");
  EXPECT_NE(err({"--readonly", a}).find("--readonly: job 'w' writes"), std::string::npos);
  const std::string del = file("del.fio", "[d]\nioengine=filedelete\nfilesize=4k\n");
  EXPECT_NE(err({"--readonly", del}).find("removes files (ioengine=filedelete)"), std::string::npos);
  EXPECT_NE(err({"--output-format=xml", a}).find("xml"), std::string::npos);
  EXPECT_NE(err({"--name=x", "--lockfile=exclusive"}).find("--lockfile: fio's lockfile is not supported"),
            std::string::npos);
  EXPECT_NE(err({"-x", a}).find("unknown option -x"), std::string::npos);
  auto c = ok({"--output-format=json,terse", "--output", "o.txt", "--plot=p.svg", a});
  EXPECT_EQ(c.formats, (std::vector<std::string>{"json", "terse"}));
  EXPECT_EQ(c.output, "o.txt");
  EXPECT_EQ(c.plot, "p.svg");
}

TEST_F(FioCommand, NumjobsAndGroupsExpandAsFiosDo) {
  auto c = ok({"--name=a", "--numjobs=2", "--size=1m", "--name=b", "--new_group", "--name=c", "--stonewall",
               "--directory=/tmp"});
  auto jobs = expand_fio_jobs(c.jobs);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].target, "a.0.0");
  EXPECT_EQ(jobs[1].target, "a.1.0");
  EXPECT_EQ(jobs[0].group, 0u);
  EXPECT_EQ(jobs[1].group, 0u);
  EXPECT_EQ(jobs[2].group, 1u);
  EXPECT_EQ(jobs[3].group, 2u);
  EXPECT_TRUE(jobs[3].stonewall);
  EXPECT_EQ(jobs[3].target, "/tmp/c.0.0");
  EXPECT_NE(jobs[0].options.order_salt, jobs[1].options.order_salt);
}

// fio's wait_for=NAME, as examples/waitfor.fio chains it: each job waits
// for the one before, which ran alone; that is a stonewall without a new
// reporting group. Waiting past a job, or for a job sharing its wave, is refused.
TEST(FioOptions, WaitForTheJobJustBeforeIsAStonewall) {
  auto jobs_of = [](std::initializer_list<std::pair<const char*, const char*>> spec) {
    std::vector<FioJob> jobs;
    for (const auto& [name, wait] : spec) {
      FioJob j = fio_defaults();
      j.name = name;
      if (*wait) {
        EXPECT_TRUE(apply_fio_lines(j, {line(std::string("wait_for=") + wait)}).has_value());
      }
      jobs.push_back(j);
    }
    return jobs;
  };
  auto chain = jobs_of({{"writers", ""}, {"readers", "writers"}, {"writers2", "readers"}});
  ASSERT_TRUE(resolve_wait_for(chain).has_value());
  EXPECT_FALSE(chain[0].wait_previous);
  EXPECT_TRUE(chain[1].wait_previous && chain[2].wait_previous);
  EXPECT_FALSE(chain[1].stonewall || chain[1].new_group);
  const auto jobs = expand_fio_jobs(chain);
  EXPECT_TRUE(jobs[1].stonewall && jobs[2].stonewall);
  EXPECT_EQ(jobs[1].group, 0u);  // fio's wait_for starts no reporting group

  auto past = jobs_of({{"a", ""}, {"b", ""}, {"c", "a"}});
  auto st = resolve_wait_for(past);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("job.fio:1: wait_for 'a': ddbench runs jobs in waves"), std::string::npos);
  auto shared = jobs_of({{"a", ""}, {"b", ""}, {"c", "b"}});  // b runs beside a
  EXPECT_FALSE(resolve_wait_for(shared));
  auto missing = jobs_of({{"a", ""}, {"b", "zz"}});
  st = resolve_wait_for(missing);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("no job of that name"), std::string::npos);
}

// fio's blockalign (ba): one alignment for random offsets; per direction
// only when both agree.
TEST(FioOptions, BlockalignIsOneAlignment) {
  EXPECT_EQ(fio_applied({"blockalign=4k"}).bench.blockalign, 4096u);
  EXPECT_EQ(fio_applied({"ba=8k,8k"}).bench.blockalign, 8192u);
  EXPECT_EQ(fio_applied({"ba=,4k"}).bench.blockalign, 4096u);
  EXPECT_NE(refusal({"ba=4k,8k"}).find("an alignment per direction"), std::string::npos);
  EXPECT_NE(refusal({"ba=100"}).find("multiple of 512"), std::string::npos);
}

}  // namespace
}  // namespace bench
