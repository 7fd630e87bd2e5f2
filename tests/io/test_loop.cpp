// Integration on real loop devices: the end-of-device guard where the kernel
// does not help (a 4 KiB-sector device over a backing file that is not a
// multiple of 4 KiB), with O_DIRECT, through both engines.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "io_test_util.hpp"
#include "libfsio/block_writer.hpp"
#include "libfsio/buffer.hpp"
#include "tests/support/support.hpp"

namespace fsio::test {
namespace {

struct LoopCase {
  EngineKind engine;
  unsigned sector;
};

class Loop : public ::testing::TestWithParam<LoopCase> {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "loop device tests need root";
    if (!have_tool("losetup")) GTEST_SKIP() << "losetup is not installed";
    if (GetParam().engine == EngineKind::uring) {
      std::string why;
      if (!make_inner(EngineKind::uring, -1, 4, &why)) GTEST_SKIP() << "io_uring unavailable here: " << why;
    }
    img_ = std::make_unique<TempImage>(kBacking);
    loop_ = std::make_unique<LoopDevice>(img_->path(), GetParam().sector);
    if (!loop_->ok()) GTEST_SKIP() << "cannot set up a loop device: " << loop_->why();
  }

  static constexpr std::uint64_t kBacking = (1 << 20) + 1536;  // not a multiple of 4096
  std::unique_ptr<TempImage> img_;
  std::unique_ptr<LoopDevice> loop_;
};

TEST_P(Loop, ReadingTheWholeDeviceReturnsExactlyItsReadableBytesWithoutEio) {
  OpenOptions opt;
  opt.direct = true;
  auto dev = Device::open(loop_->path(), opt);
  ASSERT_TRUE(dev) << dev.error().message();
  ASSERT_TRUE(dev->is_block_device());
  ASSERT_TRUE(dev->direct()) << dev->direct_fallback();
  const unsigned sector = dev->logical_sector_size();
  EXPECT_EQ(sector, GetParam().sector);
  // Whatever size the device reports, only whole logical sectors are readable.
  const std::uint64_t readable = dev->size() / sector * sector;
  EXPECT_EQ(readable, GetParam().sector == 512 ? kBacking : std::uint64_t(1) << 20);

  QueueOptions o;
  o.engine = GetParam().engine;
  o.max_request = 128 << 10;
  auto q = IoQueue::create(*dev, o);
  ASSERT_TRUE(q) << q.error().message();
  // Ask for the size rounded up to 4 KiB, as a tool reading in blocks would.
  AlignedBuffer buf((dev->size() + 4095) / 4096 * 4096);
  std::memset(buf.data(), 0xee, buf.size());
  auto st = q->read(0, buf.span());
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(q->stats().bytes_read, readable);
  auto disk = img_->contents(0, readable);
  EXPECT_EQ(std::memcmp(buf.data(), disk.data(), readable), 0);
  for (std::uint64_t i = readable; i < buf.size(); ++i) ASSERT_EQ(buf.data()[i], std::byte(0)) << i;

  // Past the readable end, nothing is submitted: an error naming the offset.
  AlignedBuffer one(sector);
  auto beyond = q->read(readable, one.span());
  ASSERT_FALSE(beyond);
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(readable));
  EXPECT_NE(beyond.error().message().find(hex), std::string::npos) << beyond.error().message();
}

TEST_P(Loop, BlockWriterOnTheDeviceLandsInTheBackingFile) {
  OpenOptions opt;
  opt.write = true;
  opt.direct = true;
  opt.allow_mounted = true;
  auto dev = Device::open(loop_->path(), opt);
  ASSERT_TRUE(dev) << dev.error().message();
  QueueOptions o;
  o.engine = GetParam().engine;
  auto q = IoQueue::create(*dev, o);
  ASSERT_TRUE(q) << q.error().message();
  BlockWriter w(*q, 4096);
  auto data = pattern(300000, 8);
  for (std::uint64_t off = 0; off < data.size(); off += 7000) {
    std::uint64_t len = std::min<std::uint64_t>(7000, data.size() - off);
    ASSERT_TRUE(w.write(333 + off, std::span(data).subspan(off, len)));
  }
  ASSERT_TRUE(w.finish());
  EXPECT_EQ(w.edge_reads(), 2u);
  ASSERT_TRUE(q->flush());
  auto disk = img_->contents(333, data.size());
  EXPECT_EQ(disk, data);
}

std::string loop_name(const ::testing::TestParamInfo<LoopCase>& info) {
  return std::string(engine_label(info.param.engine)) + "_" + std::to_string(info.param.sector);
}

INSTANTIATE_TEST_SUITE_P(Devices, Loop,
                         ::testing::Values(LoopCase{EngineKind::uring, 512}, LoopCase{EngineKind::uring, 4096},
                                           LoopCase{EngineKind::psync, 512}, LoopCase{EngineKind::psync, 4096}),
                         loop_name);

}  // namespace
}  // namespace fsio::test
