// mke2fs.conf parsing (see mke2fs_conf.hpp): parse_line's rules, one line at a time.
#include "ext/mke2fs_conf.hpp"

#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

// Debian's /etc/mke2fs.conf of e2fsprogs 1.47.0-2, which is also mke2fs's
// built-in profile there (misc/default_profile.c from the same patched file).
constexpr std::string_view kBuiltin = R"conf([defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
	small = {
		blocksize = 1024
		inode_ratio = 4096
	}
	floppy = {
		blocksize = 1024
		inode_ratio = 8192
	}
	big = {
		inode_ratio = 32768
	}
	huge = {
		inode_ratio = 65536
	}
	news = {
		inode_ratio = 4096
	}
	largefile = {
		inode_ratio = 1048576
		blocksize = -1
	}
	largefile4 = {
		inode_ratio = 4194304
		blocksize = -1
	}
	hurd = {
	     blocksize = 4096
	     inode_size = 128
	     warn_y2038_dates = 0
	}
)conf";

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool end_or_comment(char c) { return c == 0 || c == '#' || c == ';'; }

// A C string view of the line: e2fsprogs reads it with fgets and stops at a NUL.
struct Cursor {
  std::string s;
  std::size_t i = 0;
  char at(std::size_t k) const { return k < s.size() ? s[k] : 0; }
  char ch() const { return at(i); }
  void skip_blanks() {
    while (i < s.size() && blank(s[i])) ++i;
  }
  std::size_t word_end(std::size_t k) const {
    while (!end_or_comment(at(k)) && !blank(at(k))) ++k;
    return k;
  }
};

// parse_quoted_string: up to the closing quote (or the end), with \n, \t,
// \b and \<any> escapes.
std::string unquote(const std::string& s, std::size_t from) {
  std::string out;
  for (std::size_t k = from; k < s.size() && s[k] != '"'; ++k) {
    if (s[k] == '\\') {
      if (++k >= s.size()) break;
      const char e = s[k];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
    } else {
      out += s[k];
    }
  }
  return out;
}

std::string strip_final(std::string tag) {
  if (auto star = tag.find('*'); star != std::string::npos) tag.resize(star);
  return tag;
}

}  // namespace

struct Mke2fsConfParser {
  enum State { init_comment, std_line, get_obrace };
  State state = init_comment;
  unsigned line = 0;
  std::vector<Mke2fsConf::Node>* sections = nullptr;
  std::vector<Mke2fsConf::Node*> stack;  // [section, subsection...]
  std::string name;

  fsio::Status bad(const std::string& why) const {
    return make_error(Errc::invalid_argument, name + " line " + std::to_string(line) + ": " + why);
  }

  fsio::Status section(Cursor& c) {
    if (stack.size() > 1) return bad("a [section] inside braces");
    const std::size_t close = c.s.find(']', c.i + 1);
    if (close == std::string::npos) return bad("'[' without ']'");
    std::string title;
    std::size_t a = c.i + 1;
    while (a < close && blank(c.s[a])) ++a;
    if (c.at(a) == '"') {
      title = unquote(c.s, a + 1);
    } else {
      std::size_t b = close;
      while (b > a && blank(c.s[b - 1])) --b;
      title = c.s.substr(a, b - a);
      if (title.empty()) return bad("a section without a name");
    }
    Mke2fsConf::Node* found = nullptr;
    for (auto& s : *sections)
      if (s.name == title) found = &s;
    if (!found) {
      sections->push_back({title, std::nullopt, {}, line});
      found = &sections->back();
    }
    stack.assign(1, found);
    c.i = close + 1;
    if (c.ch() == '*') ++c.i;
    c.skip_blanks();
    if (!end_or_comment(c.ch())) return bad("text after ']'");
    return {};
  }

  fsio::Status relation(Cursor& c) {
    const std::size_t eq = c.s.find('=', c.i);
    if (eq == std::string::npos || eq == c.i) return bad("expected 'tag = value'");
    std::string tag;
    if (c.ch() == '"') {
      tag = unquote(c.s.substr(0, eq), c.i + 1);
    } else {
      const std::size_t end = std::min(c.word_end(c.i), eq);
      tag = c.s.substr(c.i, end - c.i);
      std::size_t k = end < eq ? end + 1 : end;
      while (k < eq && blank(c.s[k])) ++k;
      if (k < eq) return bad("more than one word before '='");
    }
    Cursor v{c.s, eq + 1};
    v.skip_blanks();
    bool subsection = false;
    std::string value;
    if (v.ch() == '"') {
      value = unquote(v.s, v.i + 1);
    } else if (end_or_comment(v.ch())) {
      subsection = true;
      state = get_obrace;
    } else if (v.ch() == '{') {
      ++v.i;
      v.skip_blanks();
      if (!end_or_comment(v.ch())) return bad("text after '{'");
      subsection = true;
    } else {
      const std::size_t end = v.word_end(v.i);
      value = v.s.substr(v.i, end - v.i);
      Cursor rest{v.s, end};
      rest.skip_blanks();
      if (!end_or_comment(rest.ch())) return bad("more than one word after '='");
    }
    if (stack.empty()) return bad("a relation outside any [section]");
    auto& children = stack.back()->children;
    if (subsection) {
      children.push_back({strip_final(tag), std::nullopt, {}, line});
      stack.push_back(&children.back());
    } else {
      children.push_back({strip_final(tag), value, {}, line});
    }
    return {};
  }

  fsio::Status line_of(std::string text) {
    ++line;
    if (auto nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
    Cursor c{std::move(text)};
    if (state == get_obrace) {
      c.skip_blanks();
      if (c.ch() != '{') return bad("expected '{' after a subsection's name");
      state = std_line;
      return {};
    }
    if (state == init_comment) {
      if (c.ch() != '[') return {};
      state = std_line;
    }
    c.skip_blanks();
    if (end_or_comment(c.ch())) return {};
    if (c.ch() == '[') return section(c);
    if (c.ch() == '}') {
      if (stack.size() < 2) return bad("'}' without '{'");
      stack.pop_back();
      return {};
    }
    return relation(c);
  }
};

fsio::Result<Mke2fsConf> Mke2fsConf::parse(std::string_view text, const std::string& name) {
  Mke2fsConf conf;
  conf.name_ = name;
  Mke2fsConfParser p;
  p.sections = &conf.sections_;
  p.name = name;
  // p.stack holds only the open (sub)sections, and a vector grows only
  // while its owner is the innermost open one: no pointer there moves.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    FSIO_TRY(p.line_of(std::string(text.substr(start, end - start))));
    start = end + 1;
  }
  if (p.state == Mke2fsConfParser::get_obrace) return p.bad("a subsection's '{' is missing at the end").error();
  return conf;
}

Mke2fsConf Mke2fsConf::builtin() {
  auto conf = parse(kBuiltin, "mke2fs's built-in mke2fs.conf");
  FSIO_ASSERT(conf.has_value());
  return std::move(conf).value();
}

std::string_view Mke2fsConf::builtin_text() { return kBuiltin; }

const Mke2fsConf::Node* Mke2fsConf::find(std::string_view section, std::string_view sub, std::string_view key) const {
  for (const Node& s : sections_) {
    if (s.name != section) continue;
    for (const Node& n : s.children) {
      if (sub.empty()) {
        if (n.value && n.name == key) return &n;
        continue;
      }
      if (n.value || n.name != sub) continue;
      for (const Node& r : n.children)
        if (r.value && r.name == key) return &r;
    }
  }
  return nullptr;
}

std::optional<std::string> Mke2fsConf::get(std::string_view section, std::string_view sub, std::string_view key) const {
  const Node* n = find(section, sub, key);
  if (!n) return std::nullopt;
  return n->value;
}

bool Mke2fsConf::has_subsection(std::string_view section, std::string_view sub) const {
  for (const Node& s : sections_) {
    if (s.name != section) continue;
    for (const Node& n : s.children)
      if (!n.value && n.name == sub)
        for (const Node& r : n.children)
          if (r.value) return true;
  }
  return false;
}

std::string Mke2fsConf::where(std::string_view section, std::string_view sub, std::string_view key) const {
  const Node* n = find(section, sub, key);
  std::string path = "[" + std::string(section) + "] " + (sub.empty() ? "" : std::string(sub) + ".") + std::string(key);
  return name_ + (n ? " line " + std::to_string(n->line) : "") + ": " + path;
}

fsio::Result<long> conf_integer(const std::string& value, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const long v = value.empty() ? 0 : std::strtol(value.c_str(), &end, 0);
  if (value.empty() || errno || *end || v < INT32_MIN || v > INT32_MAX)
    return make_error(Errc::invalid_argument, where + " '" + value + "' is not a whole number (int)");
  return v;
}

fsio::Result<double> conf_double(const std::string& value, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const double v = value.empty() ? 0 : std::strtod(value.c_str(), &end);
  if (value.empty() || errno || *end || !std::isfinite(v))
    return make_error(Errc::invalid_argument, where + " '" + value + "' is not a number");
  return v;
}

fsio::Result<bool> conf_boolean(const std::string& value, const std::string& where) {
  for (const char* y : {"y", "yes", "true", "t", "1", "on"})
    if (!strcasecmp(value.c_str(), y)) return true;
  for (const char* n : {"n", "no", "false", "nil", "0", "off"})
    if (!strcasecmp(value.c_str(), n)) return false;
  return make_error(Errc::invalid_argument,
                    where + " '" + value + "' is not a boolean (yes/no, true/false, 1/0, on/off)");
}

}  // namespace ext
