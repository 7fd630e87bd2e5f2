// What every test directory needs from the system around it: a scratch
// directory, peer tools run through the shell, image files made and read back,
// and RAII owners for loop devices and mounts so that a failing test never
// leaves one behind.
//
// Failures to set up (no temporary directory, an unwritable file, a short
// read) throw std::runtime_error: gtest reports the message as the test's
// failure, and the unwinding runs the owners below. What a test may lack
// (root, a tool, a loop device) is reported by have_tool/is_root/ok() so the
// test can GTEST_SKIP loudly instead of passing silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fsio::test {

struct RunResult {
  int exit_code = -1;  // -1 when the shell could not run or the command died by a signal
  std::string output;  // stdout and stderr together
};

// Runs a shell command line with /sbin and /usr/sbin after $PATH (meson's
// test environment may lack them), capturing its output; prints nothing.
RunResult run(const std::string& command);

// True when `tool` is found on $PATH or in /sbin, /usr/sbin.
bool have_tool(const std::string& tool);

bool is_root();

// A directory under $TMPDIR (or /tmp), or under `base`, removed with its
// contents at the end. Throws when it cannot be made.
class TempDir {
 public:
  TempDir();
  explicit TempDir(const std::string& base);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Creates (or truncates) a file of exactly `size` bytes, every byte `fill`;
// sparse zeros when fill == 0. Throws on failure.
void make_file(const std::string& path, std::uint64_t size, char fill = 0);

// `length` bytes at `offset`, read with plain pread; throws on a short read.
std::vector<std::byte> read_bytes(const std::string& path, std::uint64_t offset, std::size_t length);
// The same bytes as a string, to compare with text or a filled std::string.
std::string read_string(const std::string& path, std::uint64_t offset, std::size_t length);
// The whole file, read with plain read() calls (not an istreambuf_iterator,
// which costs a call per byte in the sanitizer build); throws on failure.
std::string read_all(const std::string& path);

// How to bind a loop device (losetup's options).
struct LoopOptions {
  unsigned sector_size = 0;     // --sector-size; 0 keeps losetup's default
  bool partscan = false;        // -P: scan the partition table
  std::uint64_t offset = 0;     // -o: the window starts this many bytes in
  std::uint64_t sizelimit = 0;  // --sizelimit; 0: to the end
  bool read_only = false;       // -r
};

// A loop device bound to `file` (losetup -f --show) for the lifetime of the
// object, detached on destruction. sector_size 0 keeps losetup's default;
// partscan asks the kernel to scan the partition table (-P).
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& file, unsigned sector_size = 0, bool partscan = false);
  LoopDevice(const std::string& file, const LoopOptions& options);
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }  // "/dev/loopN", or "" when not bound
  const std::string& why() const { return why_; }    // why it is not bound

 private:
  std::string path_;
  std::string why_;
};

// A mount of `source` on `dir`, unmounted (lazily if busy) on destruction.
class MountPoint {
 public:
  MountPoint(const std::string& source, const std::string& dir, const std::string& options = "");
  ~MountPoint() { unmount(); }
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;
  bool ok() const { return !dir_.empty(); }
  void unmount();

 private:
  std::string dir_;
};

}  // namespace fsio::test
