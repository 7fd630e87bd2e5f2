#include "tests/support/support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace fsio::test {
namespace {

std::runtime_error errno_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

std::string default_tmp() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

}  // namespace

RunResult run(const std::string& command) {
  RunResult r;
  // The system's python3 before a version manager's shim (pyenv's costs a
  // second a call on a busy machine); the scripts need only its stdlib.
  static const bool system_python = ::access("/usr/bin/python3", X_OK) == 0;
  const std::string cmd = std::string(system_python ? "python3() { /usr/bin/python3 \"$@\"; }; " : "") +
                          "PATH=\"$PATH:/sbin:/usr/sbin\" " + command + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have_tool(const std::string& tool) { return run("command -v " + tool).exit_code == 0; }

bool is_root() { return ::geteuid() == 0; }

TempDir::TempDir() : TempDir(default_tmp()) {}

TempDir::TempDir(const std::string& base) {
  std::string tmpl = base + "/fsio-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw errno_error("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void make_file(const std::string& path, std::uint64_t size, char fill) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw errno_error("create " + path);
  bool ok = true;
  if (fill == 0) {
    ok = ::ftruncate(fd, off_t(size)) == 0;
  } else {
    const std::string chunk(65536, fill);
    for (std::uint64_t done = 0; ok && done < size; done += chunk.size()) {
      const auto len = std::min<std::uint64_t>(chunk.size(), size - done);
      ok = ::pwrite(fd, chunk.data(), len, off_t(done)) == ssize_t(len);
    }
  }
  const int err = errno;
  ::close(fd);
  errno = err;
  if (!ok) throw errno_error("write " + std::to_string(size) + " bytes to " + path);
}

std::vector<std::byte> read_bytes(const std::string& path, std::uint64_t offset, std::size_t length) {
  std::vector<std::byte> out(length);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw errno_error("open " + path);
  const ssize_t got = ::pread(fd, out.data(), length, off_t(offset));
  ::close(fd);
  if (got != ssize_t(length))
    throw std::runtime_error("short read from " + path + ": " + std::to_string(got) + " of " + std::to_string(length) +
                             " bytes at " + std::to_string(offset));
  return out;
}

std::string read_string(const std::string& path, std::uint64_t offset, std::size_t length) {
  const auto bytes = read_bytes(path, offset, length);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::string read_all(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw errno_error("open " + path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const auto e = errno_error("read " + path);
      ::close(fd);
      throw e;
    }
    if (got == 0) break;
    out.append(buf, std::size_t(got));
  }
  ::close(fd);
  return out;
}

LoopDevice::LoopDevice(const std::string& file, unsigned sector_size, bool partscan)
    : LoopDevice(file, LoopOptions{.sector_size = sector_size, .partscan = partscan}) {}

LoopDevice::LoopDevice(const std::string& file, const LoopOptions& o) {
  std::string cmd = "losetup -f --show";
  if (o.sector_size != 0) cmd += " --sector-size " + std::to_string(o.sector_size);
  if (o.partscan) cmd += " -P";
  if (o.offset != 0) cmd += " -o " + std::to_string(o.offset);
  if (o.sizelimit != 0) cmd += " --sizelimit " + std::to_string(o.sizelimit);
  if (o.read_only) cmd += " -r";
  const auto r = run(cmd + " '" + file + "'");
  // stderr is in the output too (losetup warns when the file is not a whole
  // number of sectors), so take the line that names the device.
  std::istringstream lines(r.output);
  std::string line;
  while (r.exit_code == 0 && path_.empty() && std::getline(lines, line))
    if (line.rfind("/dev/loop", 0) == 0) path_ = line;
  if (path_.empty()) why_ = "losetup failed (exit " + std::to_string(r.exit_code) + "): " + r.output;
}

LoopDevice::~LoopDevice() {
  if (!path_.empty()) run("losetup -d " + path_);
}

MountPoint::MountPoint(const std::string& source, const std::string& dir, const std::string& options) {
  if (run("mount " + options + " '" + source + "' '" + dir + "'").exit_code == 0) dir_ = dir;
}

void MountPoint::unmount() {
  if (dir_.empty()) return;
  if (run("umount '" + dir_ + "'").exit_code != 0) run("umount -l '" + dir_ + "'");
  dir_.clear();
}

}  // namespace fsio::test
