// IdMap: FROM:TO:COUNT ranges as a user namespace's uid_map reads them,
// with the numbers worked by hand: the first and last id of each range, the
// ids just outside, and the ends of the id space.
#include <gtest/gtest.h>

#include "ext/id_map.hpp"

namespace ext {
namespace {

TEST(IdMap, MapsEachRangeAndNothingOutside) {
  IdMap m;
  ASSERT_TRUE(m.add("1000:100000:3", "--uid-map"));
  ASSERT_TRUE(m.add("0:0:1", "--uid-map"));
  ASSERT_TRUE(m.add("4294967294:5:1", "--uid-map"));
  EXPECT_EQ(m.map(1000), 100000u);
  EXPECT_EQ(m.map(1002), 100002u);
  EXPECT_EQ(m.map(0), 0u);
  EXPECT_EQ(m.map(4294967294u), 5u);
  EXPECT_EQ(m.map(999), std::nullopt);
  EXPECT_EQ(m.map(1003), std::nullopt);
  EXPECT_EQ(m.map(1), std::nullopt);
  EXPECT_EQ(m.map(4294967295u), std::nullopt);
}

TEST(IdMap, WholeSpaceButNoOwner) {
  IdMap m;
  ASSERT_TRUE(m.add("0:0:4294967295", "--gid-map"));  // 0 .. 4294967294
  EXPECT_EQ(m.map(4294967294u), 4294967294u);
  EXPECT_EQ(m.map(4294967295u), std::nullopt);
  EXPECT_FALSE(m.add("0:0:4294967296", "--gid-map"));  // COUNT past 32 bits
}

TEST(IdMap, RefusesBadSpecsNamingThem) {
  for (const char* bad :
       {"", "1", "1:2", "1:2:3:4", ":1:1", "1::1", "1:1:", "-1:0:1", "+1:0:1", " 1:0:1", "1:0:1 ", "0x1:0:1", "1:0:0",
        "4294967295:0:1", "0:4294967295:1", "4294967294:0:2", "99999999999:0:1"}) {
    IdMap m;
    auto st = m.add(bad, "--uid-map");
    ASSERT_FALSE(st) << bad;
    EXPECT_EQ(st.error().code, fsio::Errc::invalid_argument) << bad;
    EXPECT_NE(st.error().message().find(std::string("--uid-map '") + bad + "'"), std::string::npos)
        << st.error().message();
  }
}

TEST(IdMap, RefusesOverlapOnEitherSide) {
  IdMap m;
  ASSERT_TRUE(m.add("10:100:10", "--uid-map"));  // 10..19 -> 100..109
  EXPECT_FALSE(m.add("19:200:1", "--uid-map"));  // source 19 taken
  EXPECT_FALSE(m.add("5:300:6", "--uid-map"));   // source 5..10 reaches 10
  EXPECT_FALSE(m.add("30:109:1", "--uid-map"));  // target 109 taken
  EXPECT_FALSE(m.add("30:95:6", "--uid-map"));   // target 95..100 reaches 100
  EXPECT_TRUE(m.add("20:110:1", "--uid-map"));   // both just past
  EXPECT_TRUE(m.add("9:99:1", "--uid-map"));     // both just before
  EXPECT_EQ(m.ranges().size(), 3u);
}

}  // namespace
}  // namespace ext
