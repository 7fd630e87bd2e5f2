// Label and volume-id parsing (see label.hpp).
#include "fat/label.hpp"

#include <cstdio>

namespace fat {

namespace {

// fatgen103 p.23 lists these as illegal in DIR_Name; mkfs.fat 4.2 refuses
// them in labels (validate_volume_label, bit 0x04).
bool forbidden_in_label(unsigned char c) {
  switch (c) {
    case '"':
    case '*':
    case '+':
    case ',':
    case '.':
    case '/':
    case ':':
    case ';':
    case '<':
    case '=':
    case '>':
    case '?':
    case '[':
    case '\\':
    case ']':
    case '|': return true;
    default: return false;
  }
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

fsio::Result<VolumeLabel> parse_label(std::string_view text, bool uppercase, bool codepage_bytes) {
  VolumeLabel label;
  if (text.find_first_not_of(' ') == std::string_view::npos) return label;  // "NO NAME"
  if (text.size() > 11)
    return fsio::make_error(
        fsio::Errc::invalid_argument,
        "label " + quoted(text) + " is " + std::to_string(text.size()) + " bytes; a FAT label holds at most 11");
  if (text.front() == ' ')
    return fsio::make_error(fsio::Errc::invalid_argument,
                            "label " + quoted(text) + " starts with a space; DOS would not find it");
  bool lower = false;
  label.bytes.fill(' ');
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      return fsio::make_error(fsio::Errc::invalid_argument,
                              "label has control character " + std::string(hex) + " at byte " + std::to_string(i));
    }
    if (c >= 0x80 && !codepage_bytes)
      return fsio::make_error(fsio::Errc::invalid_argument,
                              "label " + quoted(text) + " is not ASCII; give it through --codepage (encode_label)");
    if (forbidden_in_label(c))
      return fsio::make_error(fsio::Errc::invalid_argument, "label " + quoted(text) + " contains '" +
                                                                std::string(1, char(c)) +
                                                                "'; FAT labels may not contain \"*+,./:;<=>?[\\]|");
    if (c >= 'a' && c <= 'z') {
      lower = true;
      if (uppercase) c = static_cast<unsigned char>(c - 'a' + 'A');
    }
    label.bytes[i] = c;
  }
  if (lower && !uppercase)
    label.warnings.push_back("lowercase label " + quoted(text) +
                             " may not work on some systems (Windows shows labels uppercased)");
  label.present = true;
  return label;
}

fsio::Result<std::uint32_t> parse_volume_id(std::string_view text) {
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  if (digits.empty())
    return fsio::make_error(fsio::Errc::invalid_argument,
                            "volume id " + quoted(text) + " is empty; expected hexadecimal like 1234ABCD");
  std::uint64_t value = 0;
  for (char ch : digits) {
    unsigned d;
    if (ch >= '0' && ch <= '9') d = unsigned(ch - '0');
    else if (ch >= 'a' && ch <= 'f') d = unsigned(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F') d = unsigned(ch - 'A' + 10);
    else
      return fsio::make_error(fsio::Errc::invalid_argument,
                              "volume id " + quoted(text) + " is not a hexadecimal number");
    value = value * 16 + d;
    if (value > 0xFFFFFFFFu)
      return fsio::make_error(fsio::Errc::invalid_argument, "volume id " + quoted(text) + " does not fit in 32 bits");
  }
  return std::uint32_t(value);
}

std::string format_volume_id(std::uint32_t id) {
  char out[16];
  std::snprintf(out, sizeof out, "%04X-%04X", unsigned(id >> 16), unsigned(id & 0xFFFF));
  return out;
}

}  // namespace fat
