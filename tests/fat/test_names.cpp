// Names: 8.3 decoding (code page 437 checked against Python's codec), UTF-16
// and UTF-8 over every scalar value, and new names worked out by hand from
// fatgen103's basis-name algorithm and Linux's vfat_create_shortname.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <sstream>

#include "fat/names.hpp"
#include "tests/support/support.hpp"

namespace fat {
namespace {

namespace support = fsio::test;

ShortName sn(const char (&s)[12]) {
  ShortName out;
  std::memcpy(out.data(), s, 11);
  return out;
}

TEST(ShortNames, DecodeTrimsPadsAndAppliesCaseBits) {
  EXPECT_EQ(decode_short_name(sn("README  TXT")), "README.TXT");
  EXPECT_EQ(decode_short_name(sn("README  TXT"), kLowerBase | kLowerExt), "readme.txt");
  EXPECT_EQ(decode_short_name(sn("README  TXT"), kLowerBase), "readme.TXT");
  EXPECT_EQ(decode_short_name(sn("README  TXT"), kLowerExt), "README.txt");
  EXPECT_EQ(decode_short_name(sn("FOO        ")), "FOO");
  EXPECT_EQ(decode_short_name(sn("A B     C  ")), "A B.C");  // inner spaces stay
  EXPECT_EQ(decode_short_name(sn(".          ")), ".");
  EXPECT_EQ(decode_short_name(sn("..         ")), "..");
  ShortName kanji = sn("XAB     TXT");
  kanji[0] = 0x05;  // stands for 0xE5, which is sigma in code page 437
  EXPECT_EQ(decode_short_name(kanji),
            "\xCF\x83"
            "AB.TXT");
  ShortName umlaut = sn("GR  E   TXT");
  umlaut[2] = 0x9A;  // U-umlaut
  umlaut[3] = 0xE1;  // sharp s
  EXPECT_EQ(decode_short_name(umlaut),
            "GR\xC3\x9C\xC3\x9F"
            "E.TXT");
}

TEST(ShortNames, CodePage437MatchesPythonsCodec) {
  if (!support::have_tool("python3")) GTEST_SKIP() << "python3 is not installed; code page 437 not checked";
  const auto r = support::run(
      "python3 -c 'print(\" \".join(\"%x\" % ord(bytes([b]).decode(\"cp437\")) for b in range(128, 256)))'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream in(r.output);
  for (unsigned b = 0x80; b < 0x100; ++b) {
    unsigned cp = 0;
    in >> std::hex >> cp;
    ASSERT_EQ(cp437_to_unicode(std::uint8_t(b)), char32_t(cp)) << "byte " << b;
  }
  for (unsigned b = 0; b < 0x80; ++b) EXPECT_EQ(cp437_to_unicode(std::uint8_t(b)), char32_t(b));
}

TEST(ShortNames, ValidityFollowsFatgen103) {
  EXPECT_TRUE(is_valid_short_name(sn("README  TXT")));
  EXPECT_TRUE(is_valid_short_name(sn("A~1     $%'")));
  EXPECT_TRUE(is_valid_short_name(sn(".          ")));
  EXPECT_TRUE(is_valid_short_name(sn("..         ")));
  EXPECT_FALSE(is_valid_short_name(sn(" AB     TXT")));
  EXPECT_FALSE(is_valid_short_name(sn("readme  TXT")));
  for (char bad : std::string("\"*+,./:;<=>?[\\]|")) {
    ShortName n = sn("AB      TXT");
    n[1] = std::uint8_t(bad);
    EXPECT_FALSE(is_valid_short_name(n)) << bad;
  }
  ShortName ctl = sn("AB      TXT");
  ctl[3] = 0x01;
  EXPECT_FALSE(is_valid_short_name(ctl));
  ctl = sn("AB      TXT");
  ctl[0] = 0x05;  // allowed first: it stands for 0xE5
  EXPECT_TRUE(is_valid_short_name(ctl));
}

TEST(Utf, EveryScalarValueRoundTrips) {
  std::string utf8;
  std::u16string utf16;
  for (char32_t c = 1; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    utf8.clear();
    if (c < 0x80) {
      utf8 += char(c);
    } else if (c < 0x800) {
      utf8 += char(0xC0 | (c >> 6));
      utf8 += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      utf8 += char(0xE0 | (c >> 12));
      utf8 += char(0x80 | ((c >> 6) & 0x3F));
      utf8 += char(0x80 | (c & 0x3F));
    } else {
      utf8 += char(0xF0 | (c >> 18));
      utf8 += char(0x80 | ((c >> 12) & 0x3F));
      utf8 += char(0x80 | ((c >> 6) & 0x3F));
      utf8 += char(0x80 | (c & 0x3F));
    }
    auto u = utf8_to_utf16(utf8);
    ASSERT_TRUE(u.has_value()) << std::hex << unsigned(c);
    ASSERT_EQ(u->size(), c < 0x10000 ? 1u : 2u);
    ASSERT_EQ(utf16_to_utf8(*u), utf8) << std::hex << unsigned(c);
  }
}

TEST(Utf, MalformedUtf8IsRefusedAndLoneSurrogatesBecomeReplacementCharacters) {
  for (const char* bad : {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\xFF"})
    EXPECT_FALSE(utf8_to_utf16(bad).has_value()) << bad;
  EXPECT_EQ(utf16_to_utf8(std::u16string{u'a', char16_t(0xD800), u'b'}),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(utf16_to_utf8(std::u16string{char16_t(0xDC00)}), "\xEF\xBF\xBD");
}

std::function<bool(const ShortName&)> taken_set(std::set<std::string> names) {
  return [names = std::move(names)](const ShortName& n) { return names.count(std::string(n.begin(), n.end())) != 0; };
}
const auto kNone = taken_set({});

std::string as_string(const ShortName& n) { return std::string(n.begin(), n.end()); }

struct NameCase {
  const char* long_name;
  const char* short_name;  // 11 bytes as stored
  bool lfn;
};

TEST(MakeName, BasisNamesAndTailsAsLinuxMakesThem) {
  const NameCase cases[] = {
      {"README.TXT", "README  TXT", false},  // valid upper-case 8.3: no LFN
      {"FOO", "FOO        ", false},
      {"A~1.$%'", "A~1     $%'", false},
      {"readme.txt", "README  TXT", true},  // fits 8.3, lower case: LFN, no tail (win95)
      {"ReadMe.Txt", "README  TXT", true},
      {"A Long File Name.text", "ALONGF~1TEX", true},  // spaces dropped, cut: tail
      {"file.tar.gz", "FILETA~1GZ ", true},            // the last dot starts the extension
      {".bashrc", "BASHRC~1   ", true},                // only dots before it: no extension
      {"...test", "TEST~1     ", true},
      {"a+b.c", "A_B~1   C  ", true},  // + , ; = [ ] become '_'
      {"x[1];y=2,z", "X_1__Y~1   ", true},
      {"\xC3\xBC"
       "ber.txt",
       "_BER~1  TXT", true},                   // non-ASCII: lossy
      {"12345678.1234", "123456~1123", true},  // extension cut to 3
      {"123456789", "123456~1   ", true},
      {"a.b.c.d", "ABC~1   D  ", true},
      {"  lead", "LEAD~1     ", true},
  };
  for (const NameCase& c : cases) {
    auto r = make_name(c.long_name, kNone);
    ASSERT_TRUE(r.has_value()) << c.long_name << ": " << r.error().message();
    EXPECT_EQ(as_string(r->short_name), c.short_name) << c.long_name;
    EXPECT_EQ(!r->lfn.empty(), c.lfn) << c.long_name;
    EXPECT_EQ(r->case_bits, 0) << c.long_name;
  }
}

TEST(MakeName, WinntStyleKeepsOneCasePartsAsCaseBits) {
  struct Case {
    const char* name;
    const char* short_name;
    std::uint8_t bits;
    bool lfn;
  };
  for (const Case& c :
       {Case{"readme.txt", "README  TXT", kLowerBase | kLowerExt, false},
        Case{"readme.TXT", "README  TXT", kLowerBase, false}, Case{"README.txt", "README  TXT", kLowerExt, false},
        Case{"ReadMe.txt", "README  TXT", 0, true},  // mixed case in one part
        Case{"lower", "LOWER      ", kLowerBase, false}, Case{"123.abc", "123     ABC", kLowerExt, false}}) {
    auto r = make_name(c.name, kNone, ShortNameStyle::winnt);
    ASSERT_TRUE(r.has_value()) << c.name;
    EXPECT_EQ(as_string(r->short_name), c.short_name) << c.name;
    EXPECT_EQ(r->case_bits, c.bits) << c.name;
    EXPECT_EQ(!r->lfn.empty(), c.lfn) << c.name;
    if (!c.lfn) {
      EXPECT_EQ(decode_short_name(r->short_name, r->case_bits), c.name) << "reads back as written";
    }
  }
}

TEST(MakeName, TailsSkipShortNamesTheDirectoryHolds) {
  // ~1..~9 first, as Linux and fatgen103 count.
  auto r = make_name("readme file.txt", taken_set({"README~1TXT", "README~2TXT"}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(as_string(r->short_name), "README~3TXT");
  std::set<std::string> nine;
  for (int i = 1; i <= 9; ++i) nine.insert("README~" + std::to_string(i) + "TXT");
  r = make_name("readme file.txt", taken_set(nine));
  ASSERT_TRUE(r.has_value());
  // Past ~9, Linux's form: 2 base characters, 4 hex digits, "~", a digit.
  const std::string hashed = as_string(r->short_name);
  EXPECT_EQ(hashed.substr(0, 2), "RE") << hashed;
  EXPECT_EQ(hashed.find_first_not_of("0123456789ABCDEF", 2), 6u) << hashed;
  EXPECT_EQ(hashed[6], '~') << hashed;
  EXPECT_TRUE(hashed[7] >= '1' && hashed[7] <= '8') << hashed;
  EXPECT_EQ(hashed.substr(8), "TXT");
  EXPECT_EQ(as_string(make_name("readme file.txt", taken_set(nine))->short_name), hashed) << "deterministic";
  nine.insert(hashed);
  const std::string next = as_string(make_name("readme file.txt", taken_set(nine))->short_name);
  EXPECT_NE(next, hashed) << "a taken hashed name is skipped";
  EXPECT_TRUE(is_valid_short_name(r->short_name));
  r = make_name("ab cd", taken_set({"ABCD~1     "}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(as_string(r->short_name), "ABCD~2     ");
  // An exact 8.3 form that is taken is a name that exists.
  auto busy = make_name("readme.txt", taken_set({"README  TXT"}));
  ASSERT_FALSE(busy.has_value());
  EXPECT_EQ(busy.error().code, fsio::Errc::busy);
}

TEST(MakeName, LfnSlotsCarryTheNameTerminatedAndPadded) {
  auto r = make_name("readme.txt", kNone);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->lfn.size(), 1u);
  const LfnEntry& s = r->lfn[0];
  EXPECT_EQ(s.order, 0x41);
  EXPECT_EQ(s.attributes, attr::long_name);
  EXPECT_EQ(s.checksum, 115);  // fatgen103 ChkSum("README  TXT"), see test_structs.cpp
  EXPECT_EQ(s.first_cluster_lo, 0);
  const auto c = lfn_slot_chars(s);
  const std::u16string want = std::u16string(u"readme.txt") + u'\0' + char16_t(0xFFFF) + char16_t(0xFFFF);
  EXPECT_EQ(std::u16string(c.begin(), c.end()), want);
  // Exactly 13 characters: no terminator, no padding.
  r = make_name("abcdefghijklm", kNone);
  ASSERT_EQ(r->lfn.size(), 1u);
  const auto full = lfn_slot_chars(r->lfn[0]);
  EXPECT_EQ(std::u16string(full.begin(), full.end()), u"abcdefghijklm");
  // 27 characters: three slots, the highest order first on disk.
  r = make_name("abcdefghijklmnopqrstuvwxyz0", kNone);
  ASSERT_EQ(r->lfn.size(), 3u);
  EXPECT_EQ(r->lfn[0].order, 0x43);
  EXPECT_EQ(r->lfn[1].order, 0x02);
  EXPECT_EQ(r->lfn[2].order, 0x01);
  EXPECT_EQ(lfn_slot_chars(r->lfn[0])[0], u'0');
  EXPECT_EQ(lfn_slot_chars(r->lfn[0])[1], u'\0');
  EXPECT_EQ(lfn_slot_chars(r->lfn[2])[0], u'a');
  // 255 characters fit in 20 slots; 256 do not.
  EXPECT_EQ(make_name(std::string(255, 'x'), kNone)->lfn.size(), 20u);
  EXPECT_FALSE(make_name(std::string(256, 'x'), kNone).has_value());
  // A character outside the BMP takes two UTF-16 units.
  r = make_name("\xF0\x9F\x98\x80.txt", kNone);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(lfn_slot_chars(r->lfn[0])[0], char16_t(0xD83D));
  EXPECT_EQ(lfn_slot_chars(r->lfn[0])[1], char16_t(0xDE00));
}

TEST(MakeName, NamesFatCannotHoldAreRefused) {
  for (const char* bad : {"", ".", "..", "a*b", "a/b", "a\\b", "a:b", "a?b", "a<b", "a>b", "a|b", "a\"b", "tab\there",
                          "name.", "name ", "\xFF"}) {
    auto r = make_name(bad, kNone);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, fsio::Errc::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace fat

namespace fat {
namespace {

// Thousands of names with one basis stay cheap and all distinct.
TEST(MakeName, TwentyThousandSimilarNamesGetDistinctShortNames) {
  std::set<std::string> taken;
  auto is_taken = [&](const ShortName& n) { return taken.count(std::string(n.begin(), n.end())) != 0; };
  for (int i = 0; i < 20000; ++i) {
    auto r = make_name("file number " + std::to_string(i) + ".bin", is_taken);
    ASSERT_TRUE(r.has_value()) << i;
    ASSERT_TRUE(is_valid_short_name(r->short_name)) << as_string(r->short_name);
    ASSERT_TRUE(taken.insert(as_string(r->short_name)).second) << i;
  }
}

// Upper case in a code page, as Linux's nls tables hold it
// (fs/nls/nls_cp437.c charset2upper: a lower-case letter whose capital the
// code page has maps to it; one whose capital it lacks stays).
TEST(OemCodepage, UpperCaseAsLinuxsNlsTables) {
  auto cp437 = OemCodepage::load(437);
  ASSERT_TRUE(cp437) << cp437.error().message();
  const std::pair<int, int> linux437[] = {
      {0x81, 0x9A}, {0x82, 0x90}, {0x83, 0x83}, {0x84, 0x8E}, {0x87, 0x80}, {0x91, 0x92}, {0x94, 0x99},
      {0x98, 0x98}, {0xA0, 0xA0}, {0xA4, 0xA5}, {0xE0, 0xE0}, {0xE1, 0xE1}, {0xE3, 0xE3}, {0xE5, 0xE4},
      {0xE6, 0xE6}, {0xEB, 0xEB}, {0xED, 0xE8}, {0x90, 0x90}, {'a', 'A'},   {'Z', 'Z'},   {'~', '~'}};
  for (auto [from, to] : linux437) EXPECT_EQ(cp437->upper(std::uint8_t(from)), to) << std::hex << from;
  auto cp850 = OemCodepage::load(850);
  ASSERT_TRUE(cp850);
  EXPECT_EQ(cp850->upper(0xA0), 0xB5);  // a-acute: CP850 has A-acute, CP437 not
  EXPECT_EQ(cp850->upper(0xE4), 0xE5);  // o-tilde
  EXPECT_EQ(cp850->byte_of(U'\u00E9'), 0x82);
  EXPECT_EQ(cp850->byte_of(U'\u20AC'), std::nullopt);  // the euro sign is CP858's, not CP850's
  EXPECT_EQ(cp850->unicode(0x9A), U'\u00DC');
  auto cp932 = OemCodepage::load(932);
  ASSERT_FALSE(cp932);
  EXPECT_EQ(cp932.error().message(), "code page 932 is not a single-byte code page");
}

// Linux's to_shortname_char: a character the code page has goes into the
// 8.3 name upper-cased, without a tail, but always with an LFN.
TEST(MakeName, NonAsciiCharactersTakeTheirCodePageByte) {
  auto cp = OemCodepage::load(850).value();
  auto make = [&](const char* name, const OemCodepage* page) {
    return make_name(name, kNone, ShortNameStyle::win95, page).value();
  };
  NameSlots cafe = make("caf\xC3\xA9.txt", &cp);  // café.txt
  EXPECT_EQ(cafe.short_name, sn("CAF\x90    TXT"));
  EXPECT_FALSE(cafe.tail);
  EXPECT_EQ(cafe.slot_count(), 2u);
  NameSlots lossy = make("caf\xC3\xA9.txt", nullptr);  // without a code page: '_' and a tail
  EXPECT_EQ(lossy.short_name, sn("CAF_~1  TXT"));
  EXPECT_TRUE(lossy.tail);
  NameSlots upper = make(
      "\xC3\x89"
      "COLE.TXT",
      &cp);  // ÉCOLE.TXT: upper case, but not ASCII: an LFN
  EXPECT_EQ(upper.short_name, sn("\x90"
                                 "COLE   TXT"));
  EXPECT_EQ(upper.slot_count(), 2u);
  NameSlots tilde = make("\xC3\xB5x", &cp);  // õx: Õ is 0xE5 in CP850, stored as 0x05
  EXPECT_EQ(tilde.short_name[0], 0x05);
  EXPECT_EQ(tilde.short_name[1], 'X');
  NameSlots euro = make("\xE2\x82\xAC.txt", &cp);  // €.txt: CP850 has no euro sign
  EXPECT_EQ(euro.short_name, sn("_~1     TXT"));
}

}  // namespace
}  // namespace fat
