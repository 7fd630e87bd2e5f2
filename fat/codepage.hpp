// Labels in a DOS code page (mkfs.fat --codepage=N, default 850). The 8.3
// names and the volume label are stored in the OEM code page of the system
// that reads them (fatgen103 p.23), so mkfs.fat converts the label it is
// given from the locale's character set to code page N; so do we, through
// the C library's iconv.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace fat
