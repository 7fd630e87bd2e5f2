// The small languages inside mke2fs's options, read as e2fsprogs reads
// them: feature lists (-O, the profile's base_features/features),
// default mount options, UUIDs, and the comma lists of -E and -J.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace ext {

// e2p_edit_feature2 with mke2fs's ok_features: words separated by commas
// or blanks, "^name" or "-name" clears, "+name" or "name" sets, none/clear
// empties all three words, FEATURE_C12/I3/R7 name a bit by number.
// Errc::invalid_argument naming the word it cannot take.
fsio::Status edit_features(const std::string& list, std::uint32_t& compat, std::uint32_t& incompat,
                           std::uint32_t& ro_compat);

// e2p_edit_mntopts: acl, user_xattr, journal_data, ... into s_default_mount_opts.
fsio::Status edit_mount_options(const std::string& list, std::uint32_t& opts);

// "0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55" <-> 16 bytes (uuid_parse's format).
std::optional<std::array<std::uint8_t, 16>> parse_uuid(const std::string& text);
std::string format_uuid(const std::array<std::uint8_t, 16>& uuid);

// "a=1,b,c=x" -> {a,1} {b,-} {c,x}: mke2fs splits at every comma and at the
// first '=' of each piece.
struct KeyValue {
  std::string key;
  std::optional<std::string> value;
};
std::vector<KeyValue> split_options(const std::string& list);

// strtoull base 0 of kv.value, at most max; Errc::invalid_argument naming
// `option` (-E, -J) and the key. The caller checks that a value is there.
fsio::Result<std::uint64_t> option_number(const KeyValue& kv, const std::string& option, std::uint64_t max);

}  // namespace ext
