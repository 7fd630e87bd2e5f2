// fio's job-file grammar, as fio 3.33's __parse_jobs_ini reads it: lines
// are trimmed; a line whose first visible character is ';' or '#' is a
// comment, and so is the rest of a line after ';' or '#'; a [section]
// starts a job ("global..." sections are global); "include FILE" is looked
// up as given, then next to the including file, and may not hold sections.
#include "cmd/bench/fio_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>

namespace bench {
namespace {

using fsio::Errc;
using fsio::errno_error;
using fsio::make_error;

constexpr std::size_t max_job_file = 1u << 20;
constexpr int max_include_depth = 16;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool is_comment_or_blank(std::string_view line) {
  line = trim(line);
  return line.empty() || line.front() == ';' || line.front() == '#';
}

// The line without an inline comment (fio cuts at the first ';' or '#').
std::string_view strip_comment(std::string_view line) {
  const auto cut = line.find_first_of(";#");
  return trim(cut == std::string_view::npos ? line : line.substr(0, cut));
}

bool is_include_line(std::string_view l) {
  return l.rfind("include", 0) == 0 && (l.size() == 7 || l[7] == ' ' || l[7] == '\t');
}

fsio::Error syntax(const std::string& where, const std::string& why) {
  return make_error(Errc::invalid_argument, where + ": " + why);
}

fsio::Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error(errno, path + ": cannot open the job file");
  std::string text;
  text.resize(max_job_file + 1);
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(std::size_t(in.gcount()));
  if (text.size() > max_job_file) return syntax(path, "more than 1 MiB: not a job file");
  return text;
}

std::string include_path(const std::string& name, const std::string& from) {
  if (name.empty() || name.front() == '/' || ::access(name.c_str(), F_OK) == 0) return name;
  const auto slash = from.rfind('/');
  return slash == std::string::npos ? name : from.substr(0, slash + 1) + name;
}

class Parser {
 public:
  Parser(const FioEnv& env, std::vector<std::string>* read) : env_(env), read_(read) {}

  fsio::Status parse(std::string_view text, const std::string& path, int depth) {
    if (depth > max_include_depth) return syntax(path, "includes nested more than 16 deep (a loop?)");
    std::size_t pos = 0;
    unsigned lineno = 0;
    while (pos <= text.size()) {
      const auto nl = text.find('\n', pos);
      const std::string_view raw = text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++lineno;
      if (is_comment_or_blank(raw)) continue;
      FSIO_TRY(line(strip_comment(raw), path, path + ":" + std::to_string(lineno), depth));
    }
    return {};
  }

  std::vector<FioSection> take() { return std::move(sections_); }

 private:
  fsio::Status line(std::string_view l, const std::string& path, const std::string& where, int depth) {
    if (l.front() == '[') {
      if (depth > 0) return syntax(where, "an included file may not start sections (fio: no new sections in includes)");
      if (l.back() != ']' || l.size() < 3) return syntax(where, "expected [section name]");
      FioSection s;
      s.name = std::string(trim(l.substr(1, l.size() - 2)));
      s.where = where;
      sections_.push_back(std::move(s));
      return {};
    }
    if (is_include_line(l)) {
      const std::string name(trim(l.substr(7)));
      if (name.empty()) return syntax(where, "include needs a file name");
      if (sections_.empty()) return syntax(where, "include outside of a [section]");
      const std::string file = include_path(name, path);
      auto text = read_small_file(file);
      if (!text) return syntax(where, "include " + name + ": " + text.error().message());
      if (read_) read_->push_back(file);
      return parse(*text, file, depth + 1);
    }
    if (sections_.empty()) return syntax(where, "option '" + std::string(l) + "' outside of a [section]");
    FioLine opt = split_fio_option(l, where);
    opt.value = expand_fio_env(opt.value, env_);
    sections_.back().lines.push_back(std::move(opt));
    return {};
  }

  const FioEnv& env_;
  std::vector<std::string>* read_;
  std::vector<FioSection> sections_;
};

}  // namespace

FioEnv process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

FioLine split_fio_option(std::string_view text, const std::string& where) {
  FioLine l;
  l.where = where;
  const auto eq = text.find('=');
  l.key = std::string(trim(text.substr(0, eq)));
  if (eq != std::string_view::npos) {
    l.value = std::string(trim(text.substr(eq + 1)));
    l.has_value = true;
  }
  return l;
}

std::string expand_fio_env(std::string_view value, const FioEnv& env) {
  std::string out;
  std::size_t i = 0;
  while (i < value.size()) {
    const auto start = value.find("${", i);
    const auto end = start == std::string_view::npos ? start : value.find('}', start + 2);
    if (end == std::string_view::npos) {
      out += value.substr(i);
      break;
    }
    out += value.substr(i, start - i);
    const std::string name(value.substr(start + 2, end - start - 2));
    if (!name.empty())
      if (auto v = env(name)) out += *v;
    i = end + 1;
  }
  return out;
}

fsio::Result<std::vector<FioSection>> parse_fio_job_text(std::string_view text, const std::string& path,
                                                         const FioEnv& env, std::vector<std::string>* read) {
  Parser p(env, read);
  FSIO_TRY(p.parse(text, path, 0));
  auto sections = p.take();
  if (sections.empty()) return syntax(path, "no [section] in the job file");
  return sections;
}

fsio::Result<std::vector<FioSection>> parse_fio_job_file(const std::string& path, const FioEnv& env,
                                                         std::vector<std::string>* read) {
  auto text = FSIO_TRY(read_small_file(path));
  if (read) read->push_back(path);
  return parse_fio_job_text(text, path, env, read);
}

namespace {
// Valid UTF-8 (a sequence cut off by the end of `head` is fine: head is a
// prefix), no NUL, no control characters but tab, newline, CR, FF, VT, ESC.
bool is_text(std::string_view head) {
  if (head.empty()) return false;
  std::size_t i = 0;
  while (i < head.size()) {
    const auto c = static_cast<unsigned char>(head[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b) return false;
      if (c == 0x7f) return false;
      ++i;
      continue;
    }
    const unsigned n = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : 0;
    if (n == 0 || c >= 0xf5) return false;
    for (unsigned k = 1; k <= n; ++k) {
      if (i + k >= head.size()) return true;  // cut off by the prefix
      if ((static_cast<unsigned char>(head[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n + 1;
  }
  return true;
}

bool has_config_line(std::string_view head) {
  std::size_t pos = 0;
  while (pos < head.size()) {
    const auto nl = head.find('\n', pos);
    const std::string_view l = trim(head.substr(pos, nl == std::string_view::npos ? head.size() - pos : nl - pos));
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    if (l.empty() || l.front() == '#' || l.front() == ';') continue;
    const auto eq = l.find_first_of("=:");
    if (eq != std::string_view::npos) {
      const std::string_view key = trim(l.substr(0, eq));
      if (!key.empty() && key.find(' ') == std::string_view::npos) return true;
    }
    if (l.front() == '[' && l.back() == ']') return true;
  }
  return false;
}
}  // namespace

std::optional<std::string> describe_text(std::string_view head) {
  if (!is_text(head)) return std::nullopt;
  if (looks_like_fio_job(head)) return "a fio job file";
  const std::string_view t = trim(head);
  if (t.rfind("#!", 0) == 0) {
    const std::string_view first = t.substr(0, std::min<std::size_t>(t.find('\n'), 60));
    return "a script (" + std::string(trim(first)) + ")";
  }
  if (!t.empty() && t.front() == '{') return "a JSON document";
  if (!t.empty() && t.front() == '<') return "an XML or HTML document";
  if (has_config_line(head)) return "a config file";
  return "a text file";
}

bool looks_like_fio_job(std::string_view head) {
  // "#!" is a comment to fio, but a file that starts with it is a script.
  if (!is_text(head) || trim(head).rfind("#!", 0) == 0) return false;
  std::size_t pos = 0;
  while (pos < head.size()) {
    const auto nl = head.find('\n', pos);
    const std::string_view raw = head.substr(pos, nl == std::string_view::npos ? head.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    if (is_comment_or_blank(raw)) continue;
    const auto l = strip_comment(raw);
    // fio reads "include FILE" before any section and then refuses it
    // ("outside of [] job section"): such a file is a job file, and the
    // parser names the same error instead of benchmarking the file.
    if (is_include_line(l)) return true;
    return l.size() >= 3 && l.front() == '[' && l.back() == ']';
  }
  return false;
}

}  // namespace bench
