// encode_label (see codepage.hpp).
#include "fat/codepage.hpp"

#include <iconv.h>
#include <locale.h>
#include <wctype.h>

#include <cerrno>
#include <cstring>
#include <cwctype>
#include <vector>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

class Iconv {
 public:
  Iconv(const std::string& to, const std::string& from) : cd_(iconv_open(to.c_str(), from.c_str())) {}
  ~Iconv() {
    if (ok()) iconv_close(cd_);
  }
  Iconv(const Iconv&) = delete;
  Iconv& operator=(const Iconv&) = delete;
  bool ok() const { return cd_ != iconv_t(-1); }

  // All of `in`, or errno (EILSEQ, EINVAL for a truncated sequence).
  int convert(std::string_view in, std::string& out) {
    std::vector<char> src(in.begin(), in.end());
    std::vector<char> dst(in.size() * 8 + 16);
    char* ip = src.data();
    char* op = dst.data();
    std::size_t il = src.size(), ol = dst.size();
    if (iconv(cd_, &ip, &il, &op, &ol) == std::size_t(-1)) return errno;
    if (iconv(cd_, nullptr, nullptr, &op, &ol) == std::size_t(-1)) return errno;
    out.assign(dst.data(), std::size_t(op - dst.data()));
    return 0;
  }

 private:
  iconv_t cd_;
};

std::string cp_name(unsigned codepage) { return "CP" + std::to_string(codepage); }

}  // namespace

fsio::Status check_codepage(const std::string& charset, unsigned codepage) {
  Iconv cd(cp_name(codepage), charset);
  if (!cd.ok())
    return make_error(Errc::invalid_argument, "code page " + std::to_string(codepage) + ": iconv cannot convert from " +
                                                  charset + " to " + cp_name(codepage));
  return {};
}

fsio::Result<EncodedLabel> encode_label(std::string_view text, const std::string& charset, unsigned codepage) {
  FSIO_TRY(check_codepage(charset, codepage));
  const std::string quoted = "label '" + std::string(text) + "'";
  EncodedLabel label;
  Iconv to_dos(cp_name(codepage), charset);
  if (int e = to_dos.convert(text, label.bytes))
    return make_error(Errc::invalid_argument, quoted + " cannot be written in code page " + std::to_string(codepage) +
                                                  " from " + charset + ": " + std::strerror(e));
  std::string wide;
  Iconv to_wide("WCHAR_T", charset);
  if (to_wide.ok() && to_wide.convert(text, wide) == 0) {
    const std::size_t chars = wide.size() / sizeof(wchar_t);
    if (chars > 11)
      return make_error(Errc::invalid_argument,
                        quoted + " has " + std::to_string(chars) + " characters; a FAT label holds at most 11");
    for (std::size_t i = 0; i < chars; ++i) {
      wchar_t c;
      std::memcpy(&c, wide.data() + i * sizeof c, sizeof c);
      if (std::iswlower(wint_t(c))) label.lowercase = true;
    }
  }
  if (label.bytes.size() > 11)
    return make_error(Errc::invalid_argument, quoted + " takes " + std::to_string(label.bytes.size()) +
                                                  " bytes in code page " + std::to_string(codepage) +
                                                  "; a FAT label holds at most 11");
  return label;
}

char32_t unicode_upper(char32_t c) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
  if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
  if (!utf8) return c;
  return char32_t(towupper_l(wint_t(c), utf8));
}

fsio::Result<OemCodepage> OemCodepage::load(unsigned codepage) {
  OemCodepage cp;
  cp.number_ = codepage;
  Iconv to_unicode("UTF-32LE", cp_name(codepage));
  if (!to_unicode.ok())
    return make_error(Errc::invalid_argument,
                      "code page " + std::to_string(codepage) + ": iconv does not know " + cp_name(codepage));
  for (unsigned b = 0; b < 256; ++b) cp.upper_[b] = std::uint8_t(b >= 'a' && b <= 'z' ? b - 'a' + 'A' : b);
  for (unsigned b = 0x80; b < 0x100; ++b) {
    std::string out;
    const char in = char(b);
    const int e = to_unicode.convert(std::string_view(&in, 1), out);
    if (e == EINVAL)  // a lead byte: a multi-byte code page
      return make_error(Errc::invalid_argument,
                        "code page " + std::to_string(codepage) + " is not a single-byte code page");
    if (e || out.size() != 4) continue;  // a byte the code page leaves undefined
    char32_t u = 0;
    std::memcpy(&u, out.data(), 4);
    cp.high_[b - 0x80] = u;
    cp.bytes_.emplace(u, std::uint8_t(b));
  }
  for (unsigned b = 0x80; b < 0x100; ++b) {
    const char32_t u = cp.high_[b - 0x80];
    if (!u) continue;
    const char32_t up = unicode_upper(u);
    if (auto it = cp.bytes_.find(up); up != u && it != cp.bytes_.end()) cp.upper_[b] = it->second;
  }
  return cp;
}

std::optional<std::uint8_t> OemCodepage::byte_of(char32_t c) const {
  if (c < 0x80) return std::uint8_t(c);
  const auto it = bytes_.find(c);
  if (it == bytes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace fat
