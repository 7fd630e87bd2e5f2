// fio's cpuio and exec engines (task_engines.hpp): the numbers worked out by
// hand from fio 3.33's engines/cpu.c and engines/exec.c.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmd/bench/task_engines.hpp"

namespace bench {
namespace {

using Args = std::vector<std::string>;

TEST(CpuThink, SleepMakesTheBusyShareTheLoad) {
  // busy x (100 - load) / load: 50 ms at 50 % sleeps 50 ms, at 25 % 150 ms.
  EXPECT_EQ(cpu_think_us(50000, 50), 50000u);
  EXPECT_EQ(cpu_think_us(50000, 25), 150000u);
  EXPECT_EQ(cpu_think_us(20000, 100), 0u);
  EXPECT_EQ(cpu_think_us(10000, 30), 23333u);  // 700000 / 30, rounded down as fio's integer division
}

TEST(CpuThink, LoadOverAHundredIsAHundred) { EXPECT_EQ(cpu_think_us(50000, 250), 0u); }

TEST(ExecArgv, ProgramThenArgumentsSplitAtSpaces) {
  ExecOptions e;
  e.program = "/usr/sbin/turbostat";
  e.arguments = "-c package  -qS --interval 5";
  EXPECT_EQ(exec_argv(e, 30, "mon"), (Args{"/usr/sbin/turbostat", "-c", "package", "-qS", "--interval", "5"}));
}

TEST(ExecArgv, PercentRIsWholeSecondsOfRuntimeAndPercentNTheJobName) {
  ExecOptions e;
  e.program = "/bin/sleep";
  e.arguments = "%r %n%r";
  EXPECT_EQ(exec_argv(e, 10, "sleep"), (Args{"/bin/sleep", "10", "sleep10"}));
  EXPECT_EQ(exec_argv(e, 2.9, "x"), (Args{"/bin/sleep", "2", "x2"}));  // fio: timeout / 1000000, in us
}

TEST(ExecArgv, PercentRInTheJobNameIsNotReplaced) {
  // fio replaces %r first, then %n, so a %r the name brings in stays.
  ExecOptions e;
  e.program = "echo";
  e.arguments = "%n";
  EXPECT_EQ(exec_argv(e, 5, "a%rb"), (Args{"echo", "a%rb"}));
}

TEST(ExecArgv, NoArgumentsIsTheProgramAlone) {
  ExecOptions e;
  e.program = "/bin/true";
  EXPECT_EQ(exec_argv(e, 1, "t"), (Args{"/bin/true"}));
}

// fio 3.33's fio_netio_init and setup_listen_inet: what a net job must say.
NetOptions net(NetProtocol p, unsigned port, std::string host = {}, bool listen = false) {
  NetOptions n;
  n.protocol = p;
  n.port = port;
  n.hostname = std::move(host);
  n.listen = listen;
  return n;
}

TEST(NetJob, TcpListensOrConnectsToAHost) {
  EXPECT_TRUE(check_net_job(net(NetProtocol::tcp, 8888, {}, true), BenchRw::read));
  EXPECT_TRUE(check_net_job(net(NetProtocol::tcp, 8888, "localhost"), BenchRw::write));
  EXPECT_TRUE(check_net_job(net(NetProtocol::tcp, 8888, "localhost"), BenchRw::read));  // a reader may connect
  EXPECT_FALSE(check_net_job(net(NetProtocol::tcp, 8888), BenchRw::write));             // neither
  EXPECT_FALSE(check_net_job(net(NetProtocol::tcp, 8888, "localhost", true), BenchRw::read));
}

TEST(NetJob, PortIsRequiredAndIoIsSequential) {
  EXPECT_FALSE(check_net_job(net(NetProtocol::tcp, 0, {}, true), BenchRw::read));
  EXPECT_FALSE(check_net_job(net(NetProtocol::tcp, 8888, {}, true), BenchRw::randread));
}

TEST(NetJob, UdpReaderBindsOrJoinsAGroupAndWriterNeedsAHost) {
  EXPECT_TRUE(check_net_job(net(NetProtocol::udp, 10000), BenchRw::read));
  EXPECT_TRUE(check_net_job(net(NetProtocol::udp, 10000, "239.0.0.0"), BenchRw::read));
  EXPECT_FALSE(check_net_job(net(NetProtocol::udp, 10000, "127.0.0.1"), BenchRw::read));  // not a group
  EXPECT_FALSE(check_net_job(net(NetProtocol::udp, 10000, {}, true), BenchRw::read));     // listen is TCP's
  EXPECT_FALSE(check_net_job(net(NetProtocol::udp, 10000), BenchRw::write));
  EXPECT_TRUE(check_net_job(net(NetProtocol::udp, 10000, "239.0.0.0"), BenchRw::write));
}

TEST(NetJob, InterfaceIsForAMulticastGroupOnly) {
  NetOptions n = net(NetProtocol::udp, 10000, "239.0.0.0");
  n.interface = "10.8.16.22";
  EXPECT_TRUE(check_net_job(n, BenchRw::write));
  n.hostname = "10.0.0.1";
  EXPECT_FALSE(check_net_job(n, BenchRw::write));
}

}  // namespace
}  // namespace bench
