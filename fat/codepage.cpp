// encode_label (see codepage.hpp).
#include "fat/codepage.hpp"

#include <iconv.h>

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

}  // namespace fat
