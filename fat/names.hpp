// File names on FAT: the 8.3 short name and the VFAT long name, read and
// made. fatgen103 section 6 (8.3) and 7 (long names, basis-name generation
// and numeric tails); Linux fs/fat (vfat_create_shortname) for the details
// the spec leaves open.
//
// Reading: short names decode through code page 437 (Linux's default
// codepage=437) to UTF-8, with 0x05 in the first byte standing for 0xE5 and
// DIR_NTRes bits 3 and 4 lowering the base and extension (Windows NT and
// Linux read them). Long names are UTF-16 (UCS-2 plus surrogate pairs),
// decoded to UTF-8; an unpaired surrogate becomes U+FFFD.
//
// Making: a long name that is a valid upper-case 8.3 name is stored as the
// short name alone. Anything else gets LFN slots and a basis name made the
// way Linux makes it (letters upper-cased; '.' and ' ' dropped; + , ; = [ ]
// and every non-ASCII character the code page lacks become '_'; one it has
// becomes its byte, upper-cased by the code page, and the name then always
// gets an LFN as in Linux's to_shortname_char; 8 characters of base, 3 of
// extension from the last dot), with a numeric tail ~1 .. ~9 cut into the
// base when the basis had to lose anything, chosen not to collide with the
// short names already in the directory; past ~9, Linux's form: two base
// characters, four hex digits of a hash of the long name, "~" and a digit
// (deterministic here; Linux draws them from the clock). ShortNameStyle::winnt keeps a name
// whose base and extension are each all lower or all upper case as a short
// name with DIR_NTRes case bits (Linux shortname=winnt); the default,
// win95, writes those as LFN + short name (Linux's default shortname=mixed).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fat/codepage.hpp"
#include "fat/dirent.hpp"
#include "libfsio/result.hpp"

namespace fat {

using ShortName = std::array<std::uint8_t, 11>;  // DIR_Name as stored, space padded

// DIR_NTRes case bits (Linux CASE_LOWER_BASE / CASE_LOWER_EXT).
inline constexpr std::uint8_t kLowerBase = 0x08;
inline constexpr std::uint8_t kLowerExt = 0x10;

// "README.TXT", "readme.txt" with both case bits, "FOO" without extension.
std::string decode_short_name(const ShortName& name, std::uint8_t nt_reserved = 0);
// One code page 437 byte as a Unicode code point.
char32_t cp437_to_unicode(std::uint8_t byte);

// fatgen103 p.23's rules for DIR_Name: no byte below 0x20 (0x05 allowed
// first), none of " * + , . / : ; < = > ? [ \ ] |, no lower-case ASCII, not
// a space first. The dot entries "." and ".." are valid.
bool is_valid_short_name(const ShortName& name);

// UTF-16 <-> UTF-8. to_utf16 fails (Errc::invalid_argument) on malformed
// UTF-8; to_utf8 turns an unpaired surrogate into U+FFFD.
std::string utf16_to_utf8(std::u16string_view text);
fsio::Result<std::u16string> utf8_to_utf16(std::string_view text);

// The 13 characters of one LFN slot, in order (name1, name2, name3).
std::array<char16_t, kLfnCharsPerSlot> lfn_slot_chars(const LfnEntry& slot);

// ASCII case folding, the comparison FAT lookups use here: Linux and
// Windows compare case-insensitively; we fold A-Z only and compare other
// characters exactly.
std::string fold_case(std::string_view name);

enum class ShortNameStyle { win95, winnt };

// What one name needs in a directory: the 8.3 name, its case bits, and the
// LFN slots in on-disk order (highest order number, with 0x40, first). No
// LFN slots when the short name says it all.
struct NameSlots {
  ShortName short_name{};
  std::uint8_t case_bits = 0;
  std::vector<LfnEntry> lfn;
  bool tail = false;  // the 8.3 name got a numeric tail (~N): the basis lost something
  std::uint32_t slot_count() const { return std::uint32_t(lfn.size() + 1); }
};

// Makes the slots for `long_name` (UTF-8). `taken` says whether a short
// name already exists in the directory. Errc::invalid_argument for names
// FAT cannot hold: empty, "." or "..", over 255 UTF-16 units, a control
// character or one of " * / : < > ? \ |, or a trailing dot or space (which
// Windows and Linux strip). Errc::busy when the exact 8.3 form of the name
// is taken, or (in practice never) every tail is.
// `codepage` (Linux's codepage= option) maps non-ASCII characters into the
// 8.3 name; without one every non-ASCII character becomes '_'. A leading
// 0xE5 byte is stored as 0x05 (0xE5 marks a deleted entry).
fsio::Result<NameSlots> make_name(std::string_view long_name, const std::function<bool(const ShortName&)>& taken,
                                  ShortNameStyle style = ShortNameStyle::win95, const OemCodepage* codepage = nullptr);

}  // namespace fat
