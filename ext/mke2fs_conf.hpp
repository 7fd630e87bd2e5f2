// mke2fs.conf: e2fsprogs' profile format, read as mke2fs 1.47.0 reads it.
//
//   # comment (also ';')            [section]        relation = value
//   tag = {                          tag = "quoted \"value\""
//       relation = value            }
//
// Lines before the first '[' are comments. A value is one word (or a quoted
// string); a tag alone on its line opens a subsection whose '{' may follow
// on the next line. Sections of the same name merge; subsections do not,
// and a lookup takes the first value in the file's order (e2fsprogs'
// profile_get_value). A '*' after a name ("final") is accepted and means
// nothing with one file. mke2fs reads $MKE2FS_CONFIG, else
// /etc/mke2fs.conf, else its built-in copy (builtin() here, the text
// Debian's e2fsprogs 1.47.0 installs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace ext {

class Mke2fsConf {
 public:
  // Errc::invalid_argument naming `name`, the line and what is wrong, as
  // e2fsprogs' parser refuses it ("mke2fs.conf line 7: '}' without '{'").
  static fsio::Result<Mke2fsConf> parse(std::string_view text, const std::string& name);
  static Mke2fsConf builtin();
  static std::string_view builtin_text();

  // The first value of `key` in [section] (sub empty) or in the
  // subsection `sub` of [section]; nullopt when there is none.
  std::optional<std::string> get(std::string_view section, std::string_view sub, std::string_view key) const;
  // profile_has_subsection: [section] holds `sub = { ... }` with at least
  // one relation in it.
  bool has_subsection(std::string_view section, std::string_view sub) const;
  // Where a value came from, for messages: "/etc/mke2fs.conf line 12".
  std::string where(std::string_view section, std::string_view sub, std::string_view key) const;
  const std::string& name() const { return name_; }

 private:
  friend struct Mke2fsConfParser;
  struct Node {
    std::string name;
    std::optional<std::string> value;  // a relation; nullopt for a (sub)section
    std::vector<Node> children;
    unsigned line = 0;
  };
  const Node* find(std::string_view section, std::string_view sub, std::string_view key) const;
  std::string name_;
  std::vector<Node> sections_;
};

// Typed values as e2fsprogs' profile library reads them: integers with
// strtol base 0 ("0x1000", "010"), booleans y/yes/true/t/1/on and
// n/no/false/nil/0/off (any case). Each returns Errc::invalid_argument
// naming where the bad value is.
fsio::Result<long> conf_integer(const std::string& value, const std::string& where);
fsio::Result<double> conf_double(const std::string& value, const std::string& where);
fsio::Result<bool> conf_boolean(const std::string& value, const std::string& where);

}  // namespace ext
