// Label and volume-id parsing.
#include <gtest/gtest.h>

#include <cstring>

#include "fat/label.hpp"

namespace fat {
namespace {

TEST(Label, PadsWithSpacesAndIsPresent) {
  auto l = parse_label("DATA");
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->present);
  EXPECT_EQ(std::memcmp(l->bytes.data(), "DATA       ", 11), 0);
  EXPECT_TRUE(l->warnings.empty());
}

TEST(Label, EmptyOrBlankMeansNoName) {
  for (const char* s : {"", "   ", "           "}) {
    auto l = parse_label(s);
    ASSERT_TRUE(l.has_value()) << s;
    EXPECT_FALSE(l->present);
    EXPECT_EQ(l->bytes, kNoName);
  }
}

TEST(Label, ElevenBytesFitTwelveDoNot) {
  EXPECT_TRUE(parse_label("ABCDEFGHIJK").has_value());
  auto l = parse_label("ABCDEFGHIJKL");
  ASSERT_FALSE(l.has_value());
  EXPECT_EQ(l.error().code, fsio::Errc::invalid_argument);
  EXPECT_NE(l.error().context.find("12 bytes"), std::string::npos) << l.error().context;
}

TEST(Label, EveryForbiddenCharacterIsRefusedAndNamed) {
  for (char c : std::string("\"*+,./:;<=>?[\\]|")) {
    auto l = parse_label(std::string("A") + c + "B");
    ASSERT_FALSE(l.has_value()) << c;
    EXPECT_EQ(l.error().code, fsio::Errc::invalid_argument);
    EXPECT_NE(l.error().context.find(std::string("'") + c + "'"), std::string::npos) << l.error().context;
  }
  for (char c : std::string("!#$%&'()-@^_`{}~ 0123456789"))
    EXPECT_TRUE(parse_label(std::string("A") + c).has_value()) << c;
}

TEST(Label, ControlCharactersAndLeadingSpaceAreRefused) {
  EXPECT_FALSE(parse_label(std::string("A\tB")).has_value());
  EXPECT_FALSE(parse_label(std::string("A\x7F")).has_value());
  EXPECT_FALSE(parse_label(" AB").has_value());
  auto l = parse_label("\xC3\xA9T\xC3\xA9");
  ASSERT_FALSE(l.has_value());
  EXPECT_EQ(l.error().code, fsio::Errc::invalid_argument);
}

TEST(Label, LowercaseIsKeptWithAWarningOrUppercased) {
  auto kept = parse_label("Photos");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(std::memcmp(kept->bytes.data(), "Photos     ", 11), 0);
  ASSERT_EQ(kept->warnings.size(), 1u);
  auto upper = parse_label("Photos", true);
  ASSERT_TRUE(upper.has_value());
  EXPECT_EQ(std::memcmp(upper->bytes.data(), "PHOTOS     ", 11), 0);
  EXPECT_TRUE(upper->warnings.empty());
}

TEST(VolumeId, ParsesHexLikeMkfsFat) {
  EXPECT_EQ(parse_volume_id("1234abcd").value(), 0x1234ABCDu);
  EXPECT_EQ(parse_volume_id("0xDEADBEEF").value(), 0xDEADBEEFu);
  EXPECT_EQ(parse_volume_id("0").value(), 0u);
  EXPECT_EQ(parse_volume_id("FFFFFFFF").value(), 0xFFFFFFFFu);
  EXPECT_FALSE(parse_volume_id("100000000").has_value());
  EXPECT_FALSE(parse_volume_id("12g4").has_value());
  EXPECT_FALSE(parse_volume_id("").has_value());
  EXPECT_FALSE(parse_volume_id("0x").has_value());
  EXPECT_FALSE(parse_volume_id("-1").has_value());
  EXPECT_EQ(format_volume_id(0x1234ABCD), "1234-ABCD");
}

}  // namespace
}  // namespace fat
