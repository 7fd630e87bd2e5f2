// fio's job-file grammar (fio HOWTO "Job file format", fio 3.33's
// __parse_jobs_ini): sections, comments, includes, ${VAR}; and what a file
// looks like when a write would destroy it.
#include <gtest/gtest.h>

#include <fstream>

#include "cmd/bench/fio_job.hpp"
#include "tests/support/support.hpp"

namespace bench {
namespace {

using namespace fsio;

FioEnv fake_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (name == "SIZE") return "64m";
    if (name == "EMPTY") return "";
    return std::nullopt;
  };
}

std::vector<FioSection> parse_ok(const std::string& text) {
  auto r = parse_fio_job_text(text, "job.fio", fake_env());
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? *r : std::vector<FioSection>{};
}

std::string parse_error(const std::string& text) {
  auto r = parse_fio_job_text(text, "job.fio", fake_env());
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message();
}

TEST(FioJobFile, SectionsOptionsAndComments) {
  auto s = parse_ok(
      "; a comment\n"
      "# another\n"
      "[global]\n"
      "  rw = randread   ; trailing comment\n"
      "direct=1#no space\n"
      "\n"
      "[job1]\r\n"
      "time_based\n"
      "[job2]\n");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].is_global());
  ASSERT_EQ(s[0].lines.size(), 2u);
  EXPECT_EQ(s[0].lines[0].key, "rw");
  EXPECT_EQ(s[0].lines[0].value, "randread");
  EXPECT_TRUE(s[0].lines[0].has_value);
  EXPECT_EQ(s[0].lines[0].where, "job.fio:4");
  EXPECT_EQ(s[0].lines[1].value, "1");
  EXPECT_EQ(s[1].name, "job1");
  ASSERT_EQ(s[1].lines.size(), 1u);
  EXPECT_EQ(s[1].lines[0].key, "time_based");
  EXPECT_FALSE(s[1].lines[0].has_value);
  EXPECT_TRUE(s[2].lines.empty());
}

TEST(FioJobFile, EnvironmentVariablesExpandInValuesAndUnsetOnesVanish) {
  auto s = parse_ok("[j]\nsize=${SIZE}\nfilename=/tmp/${UNSET}x${EMPTY}\nbs=${SIZE\n");
  ASSERT_EQ(s[0].lines.size(), 3u);
  EXPECT_EQ(s[0].lines[0].value, "64m");
  EXPECT_EQ(s[0].lines[1].value, "/tmp/x");
  EXPECT_EQ(s[0].lines[2].value, "${SIZE");  // unterminated: left as written
}

TEST(FioJobFile, ErrorsNameTheLine) {
  EXPECT_NE(parse_error("rw=read\n[j]\n").find("job.fio:1: option 'rw=read' outside of a [section]"),
            std::string::npos);
  EXPECT_NE(parse_error("[j]\n[broken\n").find("job.fio:2: expected [section name]"), std::string::npos);
  EXPECT_NE(parse_error("; nothing\n").find("no [section]"), std::string::npos);
  EXPECT_NE(parse_error("[j]\ninclude\n").find("job.fio:2: include needs a file name"), std::string::npos);
  EXPECT_NE(parse_error("[j]\ninclude /nonexistent/x.fio\n").find("job.fio:2: include /nonexistent/x.fio"),
            std::string::npos);
}

TEST(FioJobFile, IncludesAreFoundNextToTheIncludingFileAndMayNotOpenSections) {
  test::TempDir dir;
  {
    std::ofstream(dir.path() + "/common.fio") << "; shared\nbs=4k\ninclude deeper.fio\n";
    std::ofstream(dir.path() + "/deeper.fio") << "iodepth=8\n";
    std::ofstream(dir.path() + "/bad.fio") << "[sneaky]\n";
    std::ofstream(dir.path() + "/loop.fio") << "include loop.fio\n";
    std::ofstream(dir.path() + "/main.fio") << "[global]\ninclude common.fio\n[j]\nrw=read\n";
  }
  auto r = parse_fio_job_file(dir.path() + "/main.fio", fake_env());
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ((*r)[0].lines.size(), 2u);
  EXPECT_EQ((*r)[0].lines[0].key, "bs");
  EXPECT_EQ((*r)[0].lines[0].where, dir.path() + "/common.fio:2");
  EXPECT_EQ((*r)[0].lines[1].key, "iodepth");
  auto bad = parse_fio_job_text("[j]\ninclude bad.fio\n", dir.path() + "/x.fio", fake_env());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("may not start sections"), std::string::npos) << bad.error().message();
  auto loop = parse_fio_job_text("[j]\ninclude loop.fio\n", dir.path() + "/x.fio", fake_env());
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message().find("nested more than 16 deep"), std::string::npos);
}

TEST(FioJobFile, CommandLineOptionsSplitAtTheFirstEquals) {
  auto l = split_fio_option("filename=/dev/a=b", "command line");
  EXPECT_EQ(l.key, "filename");
  EXPECT_EQ(l.value, "/dev/a=b");
  auto flag = split_fio_option("direct", "command line");
  EXPECT_FALSE(flag.has_value);
}

TEST(LooksLikeFioJob, FirstRealLineIsASection) {
  EXPECT_TRUE(looks_like_fio_job("[global]\nrw=read\n"));
  EXPECT_TRUE(looks_like_fio_job("; job\n\n  [randread]  \nbs=4k\n"));
  EXPECT_FALSE(looks_like_fio_job("rw=read\n[j]\n"));
  // fio takes a file opening with "include" as a job file (and refuses it).
  EXPECT_TRUE(looks_like_fio_job("; shared\ninclude common.fio\n"));
  EXPECT_FALSE(looks_like_fio_job("included = yes\n"));
  EXPECT_FALSE(looks_like_fio_job("#!/bin/sh\n[ -x foo ]\n"));
  EXPECT_FALSE(looks_like_fio_job(std::string("[j]\0\n", 5)));
  EXPECT_FALSE(looks_like_fio_job(""));
}

TEST(DescribeText, NamesWhatAWriteWouldDestroy) {
  EXPECT_EQ(describe_text("[global]\nrw=write\n"), "a fio job file");
  EXPECT_EQ(describe_text("#!/bin/bash\necho hi\n"), "a script (#!/bin/bash)");
  EXPECT_EQ(describe_text("{\"a\": 1}\n"), "a JSON document");
  EXPECT_EQ(describe_text("<?xml version=\"1.0\"?>\n"), "an XML or HTML document");
  EXPECT_EQ(describe_text("# settings\nkey = value\n"), "a config file");
  EXPECT_EQ(describe_text("Dear diary, today I benchmarked.\n"), "a text file");
  EXPECT_EQ(describe_text("caf\xc3\xa9 au lait\n"), "a text file");
}

TEST(DescribeText, BinaryAndEmptyAreNotText) {
  EXPECT_FALSE(describe_text(""));
  EXPECT_FALSE(describe_text(std::string("abc\0def", 7)));
  EXPECT_FALSE(describe_text("\x01\x02\x03"));
  EXPECT_FALSE(describe_text("\xff\xfe text"));  // not UTF-8
  EXPECT_FALSE(describe_text("\xc3(bad continuation"));
  EXPECT_TRUE(describe_text("cut at the end \xe2\x82"));  // a prefix may end mid-character
}

}  // namespace
}  // namespace bench
