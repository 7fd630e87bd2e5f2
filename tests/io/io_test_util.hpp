// Shared helpers for the I/O path tests: scratch images, byte patterns,
// engines that misbehave on purpose, and the engine parameterization.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libfsio/device.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/io_queue.hpp"

namespace fsio::test {

// A scratch image file on the build machine's disk (not tmpfs, so O_DIRECT
// works), filled with a known pattern; removed on destruction.
class TempImage {
 public:
  explicit TempImage(std::uint64_t size, std::uint8_t seed = 0x5a);
  ~TempImage();
  TempImage(const TempImage&) = delete;
  TempImage& operator=(const TempImage&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // The file's bytes read with plain pread, independent of the code under test.
  std::vector<std::byte> contents(std::uint64_t offset, std::uint64_t length) const;
  std::vector<std::byte> contents() const { return contents(0, size_); }

 private:
  std::string path_;
  std::uint64_t size_;
};

// Deterministic, position-dependent bytes: a misplaced block never matches.
std::vector<std::byte> pattern(std::uint64_t length, std::uint64_t seed);
std::byte pattern_byte(std::uint64_t position, std::uint64_t seed);

OpenOptions rw_options(bool direct = true);
Device open_or_die(const std::string& path, const OpenOptions& options);

// The inner engine the parameterized tests run on; nullptr when the kernel
// refuses io_uring (the caller skips loudly).
std::unique_ptr<Engine> make_inner(EngineKind kind, int fd, unsigned depth, std::string* why);

const char* engine_label(EngineKind kind);

// Every test of the I/O path runs once per real engine.
class EngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override;
  // A queue over `dev` using the parameter's engine, wrapped by `wrap` if set.
  IoQueue make_queue(Device& dev, QueueOptions options = {});
  IoQueue make_queue_with(Device& dev, std::unique_ptr<Engine> engine, QueueOptions options = {});
  std::unique_ptr<Engine> inner(Device& dev, unsigned depth = 32);
};

std::string engine_param_name(const ::testing::TestParamInfo<EngineKind>& info);

// Records what reaches the engine (after sorting and merging) and forwards it.
class RecordingEngine final : public Engine {
 public:
  struct Seen {
    IoOp op;
    std::uint64_t offset;
    std::uint64_t bytes;
    unsigned iovcnt;
    bool dsync;
  };
  explicit RecordingEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return "recording"; }
  unsigned depth() const override { return inner_->depth(); }
  unsigned in_flight() const override { return inner_->in_flight(); }
  Status queue(const IoRequest& req) override;
  Result<unsigned> commit() override;
  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override;
  std::uint64_t syscalls() const override { return inner_->syscalls(); }

  std::vector<Seen>* seen = nullptr;  // owned by the test, which outlives the queue
  unsigned* commits = nullptr;

 private:
  std::unique_ptr<Engine> inner_;
};

// A synchronous engine that transfers at most half of each request (at least
// one 512-byte sector), or nothing at all in `zero` mode: short transfers on
// demand, which real devices produce only rarely.
class ShortEngine final : public Engine {
 public:
  ShortEngine(int fd, bool zero) : fd_(fd), zero_(zero) {}
  const char* name() const override { return "short"; }
  unsigned depth() const override { return 8; }
  unsigned in_flight() const override { return unsigned(queued_.size() + done_.size()); }
  Status queue(const IoRequest& req) override;
  Result<unsigned> commit() override;
  Result<unsigned> reap(std::span<IoCompletion> out, unsigned min_complete) override;
  std::uint64_t syscalls() const override { return syscalls_; }

 private:
  int fd_;
  bool zero_;
  std::vector<IoRequest> queued_;
  std::vector<IoCompletion> done_;
  std::uint64_t syscalls_ = 0;
};

}  // namespace fsio::test
