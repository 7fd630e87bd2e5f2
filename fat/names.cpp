// Reading names: 8.3 decoding, validity, UTF-16 and UTF-8 (see names.hpp).
#include "fat/names.hpp"

namespace fat {

namespace {

// Code page 437, bytes 0x80-0xFF, as Python's cp437 codec maps them.
constexpr char16_t kCp437High[128] = {
    0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7, 0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE,
    0x00EC, 0x00C4, 0x00C5, 0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9, 0x00FF, 0x00D6,
    0x00DC, 0x00A2, 0x00A3, 0x00A5, 0x20A7, 0x0192, 0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA,
    0x00BA, 0x00BF, 0x2310, 0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB, 0x2591, 0x2592, 0x2593, 0x2502,
    0x2524, 0x2561, 0x2562, 0x2556, 0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510, 0x2514,
    0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550,
    0x256C, 0x2567, 0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B, 0x256A, 0x2518, 0x250C,
    0x2588, 0x2584, 0x258C, 0x2590, 0x2580, 0x03B1, 0x00DF, 0x0393, 0x03C0, 0x03A3, 0x03C3, 0x00B5, 0x03C4,
    0x03A6, 0x0398, 0x03A9, 0x03B4, 0x221E, 0x03C6, 0x03B5, 0x2229, 0x2261, 0x00B1, 0x2265, 0x2264, 0x2320,
    0x2321, 0x00F7, 0x2248, 0x00B0, 0x2219, 0x00B7, 0x221A, 0x207F, 0x00B2, 0x25A0, 0x00A0,
};

void put_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

// One part of an 8.3 name, trailing spaces cut, lowered when asked.
std::string decode_part(const std::uint8_t* p, std::size_t n, bool lower, bool first_part) {
  while (n > 0 && p[n - 1] == ' ') --n;
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t b = p[i];
    if (first_part && i == 0 && b == kDirEntryKanji) b = kDirEntryFree;  // 0x05 stands for 0xE5
    if (lower && b >= 'A' && b <= 'Z') b = std::uint8_t(b - 'A' + 'a');
    put_utf8(out, cp437_to_unicode(b));
  }
  return out;
}

}  // namespace

char32_t cp437_to_unicode(std::uint8_t b) { return b < 0x80 ? char32_t(b) : char32_t(kCp437High[b - 0x80]); }

std::string decode_short_name(const ShortName& name, std::uint8_t nt) {
  std::string base = decode_part(name.data(), 8, nt & kLowerBase, true);
  const std::string ext = decode_part(name.data() + 8, 3, nt & kLowerExt, false);
  if (!ext.empty()) base += "." + ext;
  return base;
}

bool is_valid_short_name(const ShortName& name) {
  static constexpr ShortName dot = {'.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  static constexpr ShortName dotdot = {'.', '.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  if (name == dot || name == dotdot) return true;
  if (name[0] == ' ') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const std::uint8_t b = name[i];
    if (b < 0x20 && !(i == 0 && b == kDirEntryKanji)) return false;
    if (b >= 'a' && b <= 'z') return false;
    for (char bad : std::string_view("\"*+,./:;<=>?[\\]|"))
      if (b == std::uint8_t(bad)) return false;
  }
  return true;
}

std::string utf16_to_utf8(std::u16string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    put_utf8(out, c);
  }
  return out;
}

fsio::Result<std::u16string> utf8_to_utf16(std::string_view s) {
  std::u16string out;
  auto bad = [&](std::size_t at) {
    return fsio::make_error(fsio::Errc::invalid_argument, "name is not valid UTF-8 (byte " + std::to_string(at) + ")");
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto b = std::uint8_t(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return bad(i);
    char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < len; ++k) {
      const auto cont = std::uint8_t(s[i + k]);
      if ((cont >> 6) != 2) return bad(i + k);
      c = c << 6 | (cont & 0x3F);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return bad(i);  // overlong or not a scalar
    if (c >= 0x10000) {
      out += char16_t(0xD800 + ((c - 0x10000) >> 10));
      out += char16_t(0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      out += char16_t(c);
    }
    i += len;
  }
  return out;
}

std::array<char16_t, kLfnCharsPerSlot> lfn_slot_chars(const LfnEntry& e) {
  std::array<char16_t, kLfnCharsPerSlot> out{};
  for (int i = 0; i < 5; ++i) out[i] = char16_t(e.name1[i]);
  for (int i = 0; i < 6; ++i) out[5 + i] = char16_t(e.name2[i]);
  for (int i = 0; i < 2; ++i) out[11 + i] = char16_t(e.name3[i]);
  return out;
}

std::string fold_case(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

}  // namespace fat
