// POSIX ACLs: from the xattr format getxattr(2) gives (version 2) to the
// one ext4 stores (fs/ext4/acl.h, e2fsprogs' lib/ext2fs/ext4_acl.h).
//
// The xattr format (linux/posix_acl_xattr.h), every entry 8 bytes:
//   [le32 a_version = 2] { le16 e_tag, le16 e_perm, le32 e_id } ...
//   e_id is 0xFFFFFFFF (ACL_UNDEFINED_ID) but for ACL_USER and ACL_GROUP.
// ext4's, entries 4 bytes but those naming a user or group (8):
//   [le32 a_version = 1]
//   { le16 e_tag, le16 e_perm }            USER_OBJ, GROUP_OBJ, MASK, OTHER
//   { le16 e_tag, le16 e_perm, le32 e_id } USER, GROUP
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ext/id_map.hpp"
#include "libfsio/result.hpp"

namespace ext {

// e_tag values (acl(5), linux/posix_acl.h)
inline constexpr std::uint16_t ACL_USER_OBJ = 0x01;
inline constexpr std::uint16_t ACL_USER = 0x02;
inline constexpr std::uint16_t ACL_GROUP_OBJ = 0x04;
inline constexpr std::uint16_t ACL_GROUP = 0x08;
inline constexpr std::uint16_t ACL_MASK = 0x10;
inline constexpr std::uint16_t ACL_OTHER = 0x20;
inline constexpr std::uint32_t ACL_UNDEFINED_ID = 0xFFFFFFFF;
inline constexpr std::uint32_t POSIX_ACL_XATTR_VERSION = 2;
inline constexpr std::uint32_t EXT4_ACL_VERSION = 1;

struct AclEntry {
  std::uint16_t tag = 0, perm = 0;
  std::uint32_t id = ACL_UNDEFINED_ID;
  bool operator==(const AclEntry&) const = default;
};

// The entries of an xattr-format ACL, sorted as the kernel keeps them
// (by tag, then id) and checked as posix_acl_valid checks a new ACL: one
// USER_OBJ, GROUP_OBJ and OTHER, at most one MASK and one if any USER or
// GROUP, no id twice within a tag, perms within rwx (7). Errc::corrupt
// naming what is wrong (a size that is not 4 + 8n, the version, a tag).
fsio::Result<std::vector<AclEntry>> parse_posix_acl(std::string_view value);
// Checks sorted entries (parse_posix_acl's rules but the encoding).
fsio::Status check_acl(const std::vector<AclEntry>& entries);
// The xattr format of entries (as getxattr gives it).
std::string encode_posix_acl(const std::vector<AclEntry>& entries);

// An xattr-format ACL as ext4 stores it, the ids of USER entries through
// `uid_map` and of GROUP entries through `gid_map` where set (re-sorted
// after; Errc::invalid_argument naming the id when a map has no range for
// it, Errc::corrupt for a malformed value).
fsio::Result<std::string> acl_to_ext4(std::string_view value, const std::optional<IdMap>& uid_map,
                                      const std::optional<IdMap>& gid_map);

}  // namespace ext
