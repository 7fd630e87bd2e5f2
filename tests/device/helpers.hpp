// Device-test helpers on top of tests/support: opening a Device and clamping
// a range, throwing (not aborting) on refusal so the test fails with the
// message and the RAII owners from support.hpp still clean up.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "libfsio/device.hpp"
#include "tests/support/support.hpp"

namespace fsio::test {

// Device::open, throwing when it refuses.
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

}  // namespace fsio::test
