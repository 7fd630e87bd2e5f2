// fio's I/O priorities as ddbench reads and hands them out (priority.hpp):
// the values as linux/ioprio.h packs them, cmdprio_bssplit as fio 3.33's
// split_parse_prio_ddir reads it, and which priority a request gets, worked
// out by hand from fio's cmdprio.c (fio_cmdprio_set_ioprio).
#include <gtest/gtest.h>

#include "cmd/bench/fio_options.hpp"
#include "cmd/bench/priority.hpp"

namespace bench {
namespace {

TEST(IoprioValue, ClassInTheTopThreeBitsOfSixteenAndNoClassIsBestEffort) {
  EXPECT_EQ(ioprio_value(1, 0), 0x2000);  // realtime 0, as fio logs it
  EXPECT_EQ(ioprio_value(3, 2), 0x6002);
  EXPECT_EQ(ioprio_value(0, 7), 0x4007);  // fio's ioprio_value: no class is best effort
  EXPECT_EQ(ioprio_class(0x6002), 3u);
  EXPECT_EQ(ioprio_level(0x6002), 2u);
}

TEST(CmdPrioSplit, DropsZeroPercentEntriesAndSortsBySize) {
  auto s = parse_cmdprio_split("1024k/0:64k/25/1/1:64k/75/3/2", 1024);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].bs, 65536u);
  EXPECT_EQ((*s)[0].percent, 25u);
  EXPECT_EQ((*s)[0].ioprio, std::optional<std::uint16_t>(0x2001));
  EXPECT_EQ((*s)[1].ioprio, std::optional<std::uint16_t>(0x6002));
}

TEST(CmdPrioSplit, ClampsAsFioDoesAndRefusesOverOneHundredPerSize) {
  auto s = parse_cmdprio_split("4k/150/9/9", 1024);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)[0].percent, 100u);
  EXPECT_EQ((*s)[0].ioprio, std::optional<std::uint16_t>(0x6007));
  EXPECT_FALSE(parse_cmdprio_split("4k/60:4k/50", 1024).has_value());
  EXPECT_FALSE(parse_cmdprio_split("4k/10/1", 1024).has_value());  // a class without a level
}

TEST(PriorityPlan, JobPriorityFirstThenEachCmdprioValueOnce) {
  // cmdprio-bssplit.fio's last job: prioclass=2 prio=7, 64k reads 25% at 1/1
  // and 75% at 3/2.
  PriorityOptions o;
  o.prioclass = 2;
  o.prio = 7;
  o.bssplit[0] = *parse_cmdprio_split("64k/25/1/1:64k/75/3/2:1024k/0", 1024);
  o.bssplit_given = true;
  const PriorityPlan p(o, true, false);
  EXPECT_EQ(p.values(0), (std::vector<std::uint16_t>{0x4007, 0x2001, 0x6002}));
  EXPECT_EQ(p.pick(0, 65536, 0), 1u);
  EXPECT_EQ(p.pick(0, 65536, 24), 1u);
  EXPECT_EQ(p.pick(0, 65536, 25), 2u);
  EXPECT_EQ(p.pick(0, 65536, 99), 2u);
  EXPECT_EQ(p.pick(0, 1 << 20, 0), 0u);                          // 1024k: no entry, the job's own
  EXPECT_EQ(p.values(1), (std::vector<std::uint16_t>{0x4007}));  // the job does not write
}

TEST(PriorityPlan, PercentageBelowTheDrawGetsTheImplicitRealtimeClass) {
  PriorityOptions o;
  o.cmd_percent = {20, 0};
  const PriorityPlan p(o, true, true);
  EXPECT_EQ(p.values(0), (std::vector<std::uint16_t>{0, 0x2000}));
  EXPECT_EQ(p.pick(0, 4096, 19), 1u);
  EXPECT_EQ(p.pick(0, 4096, 20), 0u);
  EXPECT_EQ(p.pick(1, 4096, 0), 0u);  // writes: 0 percent
  EXPECT_EQ(p.pick(2, 4096, 0), 0u);  // trims take no cmdprio
}

TEST(PriorityPlan, AValueEqualToTheJobsOwnSharesItsIndex) {
  PriorityOptions o;
  o.prioclass = 1;
  o.cmd_percent = {50, 50};
  const PriorityPlan p(o, true, true);
  EXPECT_EQ(p.values(0), (std::vector<std::uint16_t>{0x2000}));
  EXPECT_EQ(p.pick(0, 4096, 0), 0u);
}

TEST(PriorityOptions, CmdprioNeedsAnEngineThatCarriesAPriorityPerRequest) {
  FioJob j = fio_defaults();  // psync
  auto st = apply_fio_lines(j, {split_fio_option("cmdprio_percentage=10", "job.fio:3")});
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().message().find("job.fio:3: cmdprio_percentage '10': an option of fio's io_uring and libaio"),
            std::string::npos)
      << st.error().message();
  FioJob k = fio_defaults();
  st = apply_fio_lines(
      k, {split_fio_option("ioengine=libaio", "job.fio:1"), split_fio_option("cmdprio_percentage=10", "job.fio:2"),
          split_fio_option("cmdprio_bssplit=4k/10", "job.fio:3")});
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().message().find("mutually exclusive"), std::string::npos);
}

}  // namespace
}  // namespace bench
