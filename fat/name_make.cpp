// make_name: the slots a new name needs (see names.hpp). The basis name is
// fatgen103's "Basis-Name Generation Algorithm" with Linux's choices from
// vfat_create_shortname: which characters are dropped or become '_', where
// the extension starts, when no numeric tail is needed, and the hashed form
// after ~9.
#include <algorithm>
#include <cstring>
#include <optional>

#include "fat/names.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::size_t kMaxLongName = 255;  // UTF-16 units (Linux FAT_LFN_LEN)

// Characters no FAT name may hold (Linux vfat_bad_char).
bool forbidden_in_name(char16_t c) {
  return c < 0x20 || std::u16string_view(u"*?<>|\":/\\").find(c) != std::u16string_view::npos;
}
// Legal in a long name, not in an 8.3 name: they become '_' (vfat_replace_char).
bool replaced(char16_t c) { return std::u16string_view(u"[];,+=").find(c) != std::u16string_view::npos; }
// Dropped from the basis (vfat_skip_char).
bool skipped(char16_t c) { return c == '.' || c == ' '; }

// One part (base or extension) of the basis name.
struct Part {
  std::string chars;   // OEM bytes, upper case
  bool exact = true;   // nothing dropped, replaced, lost, or cut
  bool lower = false;  // holds a lower-case letter
  bool upper = false;  // holds an upper-case letter
  bool oem = false;    // holds a code-page byte from 0x80: no case bits can describe it
};

Part basis_part(std::u16string_view in, std::size_t max, const OemCodepage* cp) {
  Part p;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char16_t c = in[i];
    if (skipped(c)) {
      p.exact = false;
      continue;
    }
    if (p.chars.size() == max) {  // something is left over: cut
      p.exact = false;
      break;
    }
    const auto oem = c >= 0x80 && cp ? cp->byte_of(c) : std::nullopt;
    if (oem) {  // Linux: the code page's byte, upper-cased by its table; both case flags cleared
      p.chars += char(cp->upper(*oem));
      p.oem = true;
    } else if (replaced(c) || c >= 0x80) {  // lossy, like a character the code page lacks in Linux
      p.chars += '_';
      p.exact = false;
    } else if (c >= 'a' && c <= 'z') {
      p.chars += char(c - 'a' + 'A');
      p.lower = true;
    } else {
      p.chars += char(c);
      p.upper |= c >= 'A' && c <= 'Z';
    }
  }
  return p;
}

fsio::Status check_long_name(std::string_view utf8, std::u16string_view name) {
  auto refuse = [&](const std::string& why) {
    return make_error(Errc::invalid_argument, "name '" + std::string(utf8) + "': " + why);
  };
  if (name.empty()) return refuse("empty");
  if (name == u"." || name == u"..") return refuse("'.' and '..' are the directory's own entries");
  if (name.size() > kMaxLongName) return refuse(std::to_string(name.size()) + " UTF-16 units; FAT holds at most 255");
  for (char16_t c : name)
    if (forbidden_in_name(c))
      return refuse("a control character or one of * ? < > | \" : / \\ cannot be in a FAT name");
  if (name.back() == '.' || name.back() == ' ')
    return refuse("ends with a dot or a space, which Windows and Linux strip from FAT names");
  return {};
}

ShortName pack(const std::string& base, const std::string& ext) {
  ShortName s;
  s.fill(' ');
  std::memcpy(s.data(), base.data(), base.size());
  std::memcpy(s.data() + 8, ext.data(), ext.size());
  if (s[0] == kDirEntryFree) s[0] = kDirEntryKanji;  // a real 0xE5 first byte is stored as 0x05
  return s;
}

// The base with "~N" cut in: as much of the base as leaves room, then the tail.
ShortName with_tail(const std::string& base, const std::string& ext, std::uint32_t n) {
  const std::string tail = "~" + std::to_string(n);
  return pack(base.substr(0, std::min(base.size(), 8 - tail.size())) + tail, ext);
}

// After ~1..~9, Linux (vfat_create_shortname) and Windows stop counting, so
// a directory of many similar names does not cost a quadratic search: the
// base keeps 2 characters, then 4 hex digits and "~D". Linux seeds them from
// jiffies; we hash the long name (FNV-1a) so that the same input gives the
// same image, and step down by 11 on a collision as Linux does.
std::optional<ShortName> hashed_tail(const std::string& base, const std::string& ext, std::u16string_view name,
                                     const std::function<bool(const ShortName&)>& taken) {
  std::uint32_t h = 2166136261u;
  for (char16_t c : name) h = (h ^ c) * 16777619u;
  const char digit = char('1' + ((h >> 16) & 7));
  std::uint32_t x = h & 0xFFFF;
  static const char* hex = "0123456789ABCDEF";
  for (std::uint32_t tries = 0; tries < 0x10000; ++tries, x = (x - 11) & 0xFFFF) {
    std::string b = base.substr(0, 2);
    for (int k = 3; k >= 0; --k) b += hex[(x >> (4 * k)) & 0xF];
    const ShortName s = pack(b + "~" + digit, ext);
    if (!taken(s)) return s;
  }
  return std::nullopt;
}

// LFN slots in on-disk order for a name of up to 255 UTF-16 units:
// 0x0000 after the last character unless it fills the slot, then 0xFFFF.
std::vector<LfnEntry> lfn_slots(std::u16string_view name, std::uint8_t checksum) {
  const std::size_t count = (name.size() + kLfnCharsPerSlot - 1) / kLfnCharsPerSlot;
  std::vector<LfnEntry> out(count);
  for (std::size_t k = 0; k < count; ++k) {
    LfnEntry& e = out[count - 1 - k];  // order k+1; the highest order comes first on disk
    e.order = std::uint8_t((k + 1) | (k + 1 == count ? kLfnLastSlot : 0));
    e.attributes = attr::long_name;
    e.checksum = checksum;
    std::array<char16_t, kLfnCharsPerSlot> c;
    for (std::size_t i = 0; i < kLfnCharsPerSlot; ++i) {
      const std::size_t at = k * kLfnCharsPerSlot + i;
      c[i] = at < name.size() ? name[at] : at == name.size() ? u'\0' : char16_t(0xFFFF);
    }
    for (int i = 0; i < 5; ++i) e.name1[i] = c[i];
    for (int i = 0; i < 6; ++i) e.name2[i] = c[5 + i];
    for (int i = 0; i < 2; ++i) e.name3[i] = c[11 + i];
  }
  return out;
}

}  // namespace

fsio::Result<NameSlots> make_name(std::string_view long_name, const std::function<bool(const ShortName&)>& taken,
                                  ShortNameStyle style, const OemCodepage* codepage) {
  const std::u16string name = FSIO_TRY(utf8_to_utf16(long_name));
  FSIO_TRY(check_long_name(long_name, name));
  // The extension follows the last dot, unless that dot ends the name or
  // only dots and spaces precede it (".bashrc" has no extension).
  std::size_t dot = name.rfind(u'.');
  if (dot != std::u16string::npos &&
      std::all_of(name.begin(), name.begin() + std::ptrdiff_t(dot), [](char16_t c) { return skipped(c); }))
    dot = std::u16string::npos;
  const bool has_ext = dot != std::u16string::npos;
  Part base = basis_part(std::u16string_view(name).substr(0, has_ext ? dot : name.size()), 8, codepage);
  const Part ext = has_ext ? basis_part(std::u16string_view(name).substr(dot + 1), 3, codepage) : Part{};
  if (base.chars.empty())
    return make_error(Errc::invalid_argument,
                      "name '" + std::string(long_name) + "' leaves no characters for an 8.3 name");
  NameSlots out;
  if (base.exact && ext.exact) {
    out.short_name = pack(base.chars, ext.chars);
    if (taken(out.short_name))
      return make_error(Errc::busy, "name '" + std::string(long_name) + "': its 8.3 form is taken");
    const bool base_one_case = !(base.lower && base.upper), ext_one_case = !(ext.lower && ext.upper);
    const bool oem = base.oem || ext.oem;
    if (!base.lower && !ext.lower && !oem) return out;  // a plain upper-case 8.3 name
    if (style == ShortNameStyle::winnt && base_one_case && ext_one_case && !oem) {
      out.case_bits = std::uint8_t((base.lower ? kLowerBase : 0) | (ext.lower ? kLowerExt : 0));
      return out;
    }
  } else {
    out.tail = true;
    std::uint32_t n = 1;
    while (n <= 9 && taken(with_tail(base.chars, ext.chars, n))) ++n;
    if (n <= 9) {
      out.short_name = with_tail(base.chars, ext.chars, n);
    } else if (auto hashed = hashed_tail(base.chars, ext.chars, name, taken)) {
      out.short_name = *hashed;
    } else {
      return make_error(Errc::busy, "name '" + std::string(long_name) + "': no free short name for it");
    }
  }
  out.lfn = lfn_slots(name, lfn_checksum(out.short_name));
  return out;
}

}  // namespace fat
