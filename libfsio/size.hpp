// Size arguments as users type them: 512, 4K, 4KiB (1024-based), 4KB
// (1000-based), M, G, T, P; an optional trailing "B" alone means bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "libfsio/result.hpp"

namespace fsio {

// "4K" -> 4096, "4KB" -> 4000, "1.5M" is refused (integers only). Errors name
// the text and what was wrong ("size '12Q': unknown suffix 'Q'").
Result<std::uint64_t> parse_size(std::string_view text);

// 4096 -> "4 KiB", 1536 -> "1.5 KiB", 1000 -> "1000 B".
std::string format_size(std::uint64_t bytes);

// 1234567 -> "1,234,567": counts in messages people read.
std::string format_count(std::uint64_t n);

// 31 -> "0x1f" (offsets and sectors in messages); upper: "0x1F" (field values
// in ext4 messages, as e2fsprogs prints them).
std::string format_hex(std::uint64_t v, bool upper = false);

}  // namespace fsio
