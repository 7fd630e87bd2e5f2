// Numbers as fio's job files and command line spell them (fio HOWTO,
// "Parameter types"): sizes with kb_base, percentages of the target, times
// with units, booleans. ddbench reads every size and time through these, in
// its own terse form too, so "4KB" means the same thing everywhere.
//
// Where fio 3.33 itself reads a spelling differently from its documentation,
// we follow what users mean and the man page says so:
//   - "4KiB" is 4096 whatever kb_base (fio 3.33 reads "kib" as 1000 under the
//     default kb_base=1024, although it reads "4ki" as 4096);
//   - "1.5M" is 1.5 MiB (fio 3.33 stops at the dot and reads 1).
#pragma once

#include <cstdint>
#include <string_view>

#include "libfsio/result.hpp"

namespace bench {

// A size: digits (or 0x and hex digits), an optional fraction ("1.5M"), then
// an optional unit, case-insensitive:
//   k, kb, m, mb, ... p, pb: 1024-based with kb_base 1024 (fio's default),
//                            1000-based with kb_base 1000;
//   ki, kib, mi, mib, ...:   always 1024-based;
//   b:                       bytes.
// The result must be a whole number of bytes and fit in 64 bits. Errors
// are Errc::invalid_argument and quote the text ("size '12Q': unknown unit
// 'Q'"); the caller adds the option's name.
fsio::Result<std::uint64_t> parse_fio_size(std::string_view text, unsigned kb_base = 1024);

// A size or a percentage of the target ("10%", "12.5%"): fio's size= and
// offset= take both.
struct FioSize {
  std::uint64_t bytes = 0;
  double percent = -1;  // >= 0: a percentage of the target, bytes unused
  bool is_percent() const { return percent >= 0; }
  // The bytes this means on a target of `target` bytes, rounded down to a
  // multiple of `granule` (fio rounds percentages down to the block size).
  std::uint64_t resolve(std::uint64_t target, std::uint64_t granule) const;
};
fsio::Result<FioSize> parse_fio_size_or_percent(std::string_view text, unsigned kb_base = 1024);

// A time: a number (a fraction allowed) and an optional unit, case-
// insensitive: d, h, m (minutes), s or sec, ms or msec, us or usec. Without
// a unit, `default_unit` seconds (fio: seconds, for runtime and ramp_time).
// Returns seconds. Negative numbers, exponents, inf and nan are refused.
fsio::Result<double> parse_fio_time(std::string_view text, double default_unit = 1.0);

// fio's bool: 1 or 0 (also true/false, yes/no, on/off).
fsio::Result<bool> parse_fio_bool(std::string_view text);

// An unsigned integer in [min, max] (decimal or 0x hex), no unit.
fsio::Result<std::uint64_t> parse_fio_uint(std::string_view text, std::uint64_t min, std::uint64_t max);

}  // namespace bench
