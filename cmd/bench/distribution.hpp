// fio's random_distribution (fio HOWTO): how a random job picks its blocks
// when not uniformly. zipf:THETA and pareto:H skew the accesses towards a
// few hot blocks, scattered over the range; zoned:A/R:A/R... sends A percent
// of the accesses to the next R percent of the range. Any of these lets
// blocks repeat, as fio then turns its random map off.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace bench {

struct RandomDistribution {
  enum class Kind { uniform, zipf, pareto, zoned };
  struct Zone {
    unsigned access = 0;  // percent of the accesses
    unsigned range = 0;   // percent of the range, after the zones before it
  };
  Kind kind = Kind::uniform;
  double param = 0;         // zipf's theta, pareto's h
  std::vector<Zone> zones;  // zoned; both percents add up to 100
};

// Parses fio's text: "random", "zipf:1.2", "pareto:0.9", "zoned:60/10:30/20:10/70".
// An error gives the reason only (the caller names the option).
fsio::Result<RandomDistribution> parse_random_distribution(std::string_view text);

// Draws blocks in [0, n) from a distribution (not uniform).
class BlockPicker {
 public:
  BlockPicker(const RandomDistribution& d, std::uint64_t n, std::uint64_t seed);
  // `u`: a uniform number in [0, 1); `r`: 64 random bits (for zoned's pick inside a zone).
  std::uint64_t next(double u, std::uint64_t r) const;

 private:
  std::uint64_t scatter(std::uint64_t rank) const;  // the rank-th hottest block
  RandomDistribution d_;
  std::uint64_t n_;
  std::uint64_t offset_;
  double zetan_ = 0, zeta2_ = 0, pareto_pow_ = 0;
};

}  // namespace bench
