// Volume labels and volume ids, validated the way mkfs.fat 4.2 does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace fat {

inline constexpr std::array<std::uint8_t, 11> kNoName = {'N', 'O', ' ', 'N', 'A', 'M', 'E', ' ', ' ', ' ', ' '};

struct VolumeLabel {
  std::array<std::uint8_t, 11> bytes = kNoName;  // BS_VolLab / root entry name, space padded
  bool present = false;                          // false: "NO NAME", no root-directory entry
  std::vector<std::string> warnings;
};

// Checks and pads a label (mkfs.fat -n). Refuses, with Errc::invalid_argument:
// more than 11 bytes, a leading space, bytes below 0x20 or 0x7F, and
// " * + , . / : ; < = > ? [ \ ] | (fatgen103 p.23: not allowed in DIR_Name).
// Bytes from 0x80 are refused unless `codepage_bytes` says the text is
// already in a DOS code page (encode_label, codepage.hpp, as mkfs.fat
// --codepage converts it). Lowercase ASCII is kept with a warning like
// mkfs.fat, or converted when `uppercase` is set (Windows shows labels
// uppercased). An empty or all-space label means no label ("NO NAME").
fsio::Result<VolumeLabel> parse_label(std::string_view text, bool uppercase = false, bool codepage_bytes = false);

// A volume id as mkfs.fat -i takes it: hexadecimal, optional 0x prefix, at
// most 32 bits ("1234ABCD", "0x1234abcd").
fsio::Result<std::uint32_t> parse_volume_id(std::string_view text);

// "1234-ABCD", the way DOS and blkid show a volume id.
std::string format_volume_id(std::uint32_t id);

}  // namespace fat
