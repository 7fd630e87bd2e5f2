// Labels in a DOS code page (mkfs.fat --codepage=N, default 850). The 8.3
// names and the volume label are stored in the OEM code page of the system
// that reads them (fatgen103 p.23), so mkfs.fat converts the label it is
// given from the locale's character set to code page N; so do we, through
// the C library's iconv.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "libfsio/result.hpp"

namespace fat {

inline constexpr unsigned kDefaultCodepage = 850;  // mkfs.fat's DEFAULT_DOS_CODEPAGE

struct EncodedLabel {
  std::string bytes;       // the label in code page N, not padded
  bool lowercase = false;  // a character is lowercase (mkfs.fat warns: iswlower)
};

// Converts `text` from `charset` (the locale's, nl_langinfo(CODESET)) to
// code page `codepage` ("CP850"). Errc::invalid_argument for a code page
// iconv does not know, a character that code page lacks or `text` invalid in
// `charset` (so non-ASCII under the C locale is refused, as by mkfs.fat),
// and more than 11 characters or bytes. Lowercase is judged with iswlower
// in the current locale.
fsio::Result<EncodedLabel> encode_label(std::string_view text, const std::string& charset, unsigned codepage);

// Whether iconv can convert from `charset` to code page N (mkfs.fat checks
// --codepage before anything else): Errc::invalid_argument naming both.
fsio::Status check_codepage(const std::string& charset, unsigned codepage);

// A single-byte DOS code page as Linux's nls tables hold it, for making 8.3
// names (vfat's to_shortname_char: a character the code page has becomes
// its byte, upper-cased by the table; one it lacks becomes '_'). Built
// through iconv; upper case is Unicode's simple mapping (towupper in the
// C.UTF-8 locale, so the host's locale cannot change an image) kept where
// the code page holds the upper-case letter, as Linux's charset2upper
// tables are (CP850: 0x82 e-acute -> 0x90 E-acute; CP437 has no A-acute,
// so 0xA0 a-acute stays).
class OemCodepage {
 public:
  // Errc::invalid_argument for a code page iconv does not know, or one that
  // is not single-byte (932, 936, 949, 950: their 8.3 names get '_').
  static fsio::Result<OemCodepage> load(unsigned codepage);
  unsigned number() const { return number_; }
  // The code page's byte for a Unicode character (below 0x80: ASCII itself).
  std::optional<std::uint8_t> byte_of(char32_t c) const;
  std::uint8_t upper(std::uint8_t b) const { return upper_[b]; }
  char32_t unicode(std::uint8_t b) const { return b < 0x80 ? char32_t(b) : high_[b - 0x80]; }

 private:
  unsigned number_ = 0;
  std::array<char32_t, 128> high_{};
  std::unordered_map<char32_t, std::uint8_t> bytes_;
  std::array<std::uint8_t, 256> upper_{};
};

// Unicode's simple upper case of a character (C.UTF-8, whatever the host's
// locale): what case-insensitive comparisons of FAT names fold with.
char32_t unicode_upper(char32_t c);

}  // namespace fat
