// Test fixtures for the device tests: temporary directories and files, and
// RAII owners for loop devices and mounts so a failing test never leaves one
// behind. Everything that needs root or a missing tool reports why, so the
// test can GTEST_SKIP loudly instead of passing silently.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "libfsio/device.hpp"

namespace fsio::test {

// Where the system tools live; meson's test environment may lack sbin.
inline std::string with_sbin(const std::string& cmd) {
  return "PATH=/usr/sbin:/sbin:/usr/bin:/bin:$PATH " + cmd;
}

// Runs cmd through the shell, quiet unless it fails; returns its exit status.
inline int run(const std::string& cmd) {
  int rc = std::system(with_sbin(cmd + " >/tmp/fsio-test-cmd.log 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The first line cmd prints, or "" when it fails.
inline std::string run_output(const std::string& cmd) {
  FILE* p = ::popen(with_sbin(cmd + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return "";
  char line[4096] = {};
  std::string out;
  if (std::fgets(line, sizeof line, p) != nullptr) out = line;
  if (::pclose(p) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Throws on failure: gtest reports the message as the test's failure, and the
// unwinding runs the RAII owners below (mounts, loop devices, temp dirs).
inline Device open_ok(const std::string& path, const OpenOptions& o) {
  auto r = Device::open(path, o);
  if (!r) throw std::runtime_error("Device::open failed: " + r.error().message());
  return std::move(r).value();
}

// Device::clamp, throwing (not aborting) when it refuses.
inline std::uint64_t clamp_ok(const Device& d, std::uint64_t offset, std::uint64_t length) {
  auto r = d.clamp(offset, length);
  if (!r) throw std::runtime_error("clamp failed: " + r.error().message());
  return *r;
}

inline bool have_tool(const std::string& name) { return run("command -v " + name) == 0; }
inline bool is_root() { return ::geteuid() == 0; }

class TempDir {
 public:
  explicit TempDir(const std::string& base = "/tmp") {
    std::string tmpl = base + "/fsio-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A file of `size` bytes, every byte `fill` (sparse zeros when fill == 0).
inline void make_file(const std::string& path, std::uint64_t size, char fill = 0) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (fill == 0) {
    out.close();
    std::filesystem::resize_file(path, size);
    return;
  }
  std::string chunk(65536, fill);
  for (std::uint64_t done = 0; done < size; done += chunk.size())
    out.write(chunk.data(), std::streamsize(std::min<std::uint64_t>(chunk.size(), size - done)));
}

inline std::string read_bytes(const std::string& path, std::uint64_t offset, std::size_t len) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(std::streamoff(offset));
  std::string out(len, '\0');
  in.read(out.data(), std::streamsize(len));
  out.resize(std::size_t(in.gcount()));
  return out;
}

// A loop device bound to a file for the lifetime of the object.
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& file, unsigned sector_size = 0, bool partscan = false) {
    std::string cmd = "losetup -f --show";
    if (sector_size != 0) cmd += " --sector-size " + std::to_string(sector_size);
    if (partscan) cmd += " -P";
    path_ = run_output(cmd + " '" + file + "'");
  }
  ~LoopDevice() {
    if (!path_.empty()) run("losetup -d " + path_);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A mount of `source` on `dir`, unmounted (lazily if busy) on destruction.
class MountPoint {
 public:
  MountPoint(const std::string& source, const std::string& dir, const std::string& options = "") {
    std::string cmd = "mount " + options + " '" + source + "' '" + dir + "'";
    if (run(cmd) == 0) dir_ = dir;
  }
  ~MountPoint() { unmount(); }
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;
  bool ok() const { return !dir_.empty(); }
  void unmount() {
    if (dir_.empty()) return;
    if (run("umount '" + dir_ + "'") != 0) run("umount -l '" + dir_ + "'");
    dir_.clear();
  }

 private:
  std::string dir_;
};

}  // namespace fsio::test
