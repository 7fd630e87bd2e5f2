// mke2fs.conf as e2fsprogs' profile library reads it (lib/support/profile.c
// parse_line): sections, subsections with the brace on either line,
// quoting, comments, first-value-wins lookups, and the refusals.
#include <gtest/gtest.h>

#include "ext/mke2fs_conf.hpp"

namespace ext {
namespace {

Mke2fsConf parse(const std::string& text) {
  auto c = Mke2fsConf::parse(text, "test.conf");
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message());
  return c ? std::move(c).value() : Mke2fsConf::builtin();
}

std::string refusal(const std::string& text) {
  auto c = Mke2fsConf::parse(text, "test.conf");
  EXPECT_FALSE(c.has_value());
  return c ? "" : c.error().message();
}

TEST(Mke2fsConf, BuiltinIsDebiansFile) {
  const auto c = Mke2fsConf::builtin();
  EXPECT_EQ(c.get("defaults", "", "blocksize"), "4096");
  EXPECT_EQ(c.get("defaults", "", "inode_ratio"), "16384");
  EXPECT_EQ(c.get("fs_types", "ext4", "features"),
            "has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize");
  EXPECT_EQ(c.get("fs_types", "small", "inode_ratio"), "4096");
  EXPECT_EQ(c.get("fs_types", "floppy", "blocksize"), "1024");
  EXPECT_EQ(c.get("fs_types", "largefile", "blocksize"), "-1");
  EXPECT_EQ(c.get("fs_types", "hurd", "inode_size"), "128");
  EXPECT_TRUE(c.has_subsection("fs_types", "big"));
  EXPECT_FALSE(c.has_subsection("fs_types", "default"));  // only [defaults] applies to "default"
}

TEST(Mke2fsConf, LinesBeforeTheFirstSectionAreComments) {
  const auto c = parse("anything = at all\n}{ junk\n[defaults]\n\tblocksize = 1024\n");
  EXPECT_EQ(c.get("defaults", "", "blocksize"), "1024");
}

TEST(Mke2fsConf, CommentsBlanksAndTrailingText) {
  const auto c = parse("[defaults] # trailing comment\n  ; a comment\n# another\n\n  a = 1 ; why\n b=2#x\n");
  EXPECT_EQ(c.get("defaults", "", "a"), "1");
  EXPECT_EQ(c.get("defaults", "", "b"), "2");
}

TEST(Mke2fsConf, SubsectionBraceOnTheSameLineOrTheNext) {
  const auto c = parse("[fs_types]\n ext4 = {\n  features = has_journal\n }\n small =\n {\n  blocksize = 1024\n }\n");
  EXPECT_EQ(c.get("fs_types", "ext4", "features"), "has_journal");
  EXPECT_EQ(c.get("fs_types", "small", "blocksize"), "1024");
}

TEST(Mke2fsConf, TheFirstValueWinsAndSectionsMerge) {
  const auto c = parse("[defaults]\n a = 1\n a = 2\n[other]\n x = y\n[defaults]\n a = 3\n b = 4\n");
  EXPECT_EQ(c.get("defaults", "", "a"), "1");
  EXPECT_EQ(c.get("defaults", "", "b"), "4");
}

TEST(Mke2fsConf, SubsectionsOfOneNameAreSearchedInOrder) {
  const auto c = parse("[fs_types]\n t = {\n a = 1\n }\n t = {\n a = 2\n b = 3\n }\n");
  EXPECT_EQ(c.get("fs_types", "t", "a"), "1");
  EXPECT_EQ(c.get("fs_types", "t", "b"), "3");
}

TEST(Mke2fsConf, QuotedValuesAndEscapes) {
  const auto c = parse("[defaults]\n s = \"a b\\tc\\\"d\"\n \"q k\" = v\n");
  EXPECT_EQ(c.get("defaults", "", "s"), "a b\tc\"d");
  EXPECT_EQ(c.get("defaults", "", "q k"), "v");
}

TEST(Mke2fsConf, AnEmptySubsectionIsNotAType) {
  const auto c = parse("[fs_types]\n empty = {\n }\n");
  EXPECT_FALSE(c.has_subsection("fs_types", "empty"));
}

TEST(Mke2fsConf, FinalMarkersAreAccepted) {
  const auto c = parse("[defaults]*\n a* = 1\n t* = {\n b = 2\n }*\n");
  EXPECT_EQ(c.get("defaults", "", "a"), "1");
  EXPECT_EQ(c.get("defaults", "t", "b"), "2");
}

TEST(Mke2fsConf, RefusesWhatTheProfileLibraryRefuses) {
  EXPECT_NE(refusal("[defaults]\n }\n").find("line 2"), std::string::npos);
  EXPECT_NE(refusal("[defaults\n").find("without ']'"), std::string::npos);
  EXPECT_NE(refusal("[]\n").find("without a name"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n a b = 1\n").find("more than one word"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n a = 1 2\n").find("more than one word"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n novalue\n").find("tag = value"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n t =\n x\n").find("'{'"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n t = {\n [inner]\n").find("inside braces"), std::string::npos);
  EXPECT_NE(refusal("[defaults]\n t = { x\n").find("after '{'"), std::string::npos);
  EXPECT_NE(refusal("[defaults] x\n").find("after ']'"), std::string::npos);
}

TEST(Mke2fsConf, WhereNamesFileLineAndKey) {
  const auto c = parse("[fs_types]\n\n ext4 = {\n  inode_ratio = x\n }\n");
  EXPECT_EQ(c.where("fs_types", "ext4", "inode_ratio"), "test.conf line 4: [fs_types] ext4.inode_ratio");
}

TEST(Mke2fsConfValues, IntegersAsStrtolBaseZero) {
  EXPECT_EQ(conf_integer("4096", "w").value(), 4096);
  EXPECT_EQ(conf_integer("0x1000", "w").value(), 4096);
  EXPECT_EQ(conf_integer("010", "w").value(), 8);
  EXPECT_EQ(conf_integer("-1", "w").value(), -1);
  EXPECT_FALSE(conf_integer("", "w").has_value());
  EXPECT_FALSE(conf_integer("12k", "w").has_value());
  EXPECT_FALSE(conf_integer("4294967296", "w").has_value());  // beyond int, as profile_get_integer
}

TEST(Mke2fsConfValues, BooleansInAnyCase) {
  for (const char* y : {"y", "YES", "True", "t", "1", "on"}) EXPECT_TRUE(conf_boolean(y, "w").value()) << y;
  for (const char* n : {"n", "No", "FALSE", "nil", "0", "off"}) EXPECT_FALSE(conf_boolean(n, "w").value()) << n;
  EXPECT_FALSE(conf_boolean("maybe", "w").has_value());
  EXPECT_EQ(conf_double("5.5", "w").value(), 5.5);
  EXPECT_FALSE(conf_double("5%", "w").has_value());
}

}  // namespace
}  // namespace ext
