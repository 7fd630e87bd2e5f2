// Helpers for the fat tests: a temporary directory, running peer tools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fat::test {

// A directory under $TMPDIR (or /tmp) removed with its contents at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, capturing its output.
RunResult run(const std::string& command);

// True when `tool` is found on PATH or in /sbin, /usr/sbin.
bool have_tool(const std::string& tool);

// Creates (or truncates) a sparse file of exactly `bytes` bytes.
void make_sparse(const std::string& path, std::uint64_t bytes);

std::vector<std::byte> read_bytes(const std::string& path, std::uint64_t offset, std::size_t length);

}  // namespace fat::test
