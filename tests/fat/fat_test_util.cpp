#include "fat_test_util.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace fat::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/fsio-fat-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

RunResult run(const std::string& command) {
  RunResult r;
  const std::string cmd = "PATH=\"$PATH:/sbin:/usr/sbin\" " + command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have_tool(const std::string& tool) { return run("command -v " + tool).exit_code == 0; }

void make_sparse(const std::string& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ::ftruncate(fd, off_t(bytes)) != 0) throw std::runtime_error("cannot create " + path);
  ::close(fd);
}

std::vector<std::byte> read_bytes(const std::string& path, std::uint64_t offset, std::size_t length) {
  std::vector<std::byte> out(length);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  const ssize_t got = ::pread(fd, out.data(), length, off_t(offset));
  ::close(fd);
  if (got != ssize_t(length)) throw std::runtime_error("short read from " + path);
  return out;
}

}  // namespace fat::test
