// POSIX ACL conversion (see acl.hpp).
#include "ext/acl.hpp"

#include <algorithm>

#include "libfsio/endian.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint16_t kPermMask = 07;  // ACL_READ | ACL_WRITE | ACL_EXECUTE

bool named(std::uint16_t tag) { return tag == ACL_USER || tag == ACL_GROUP; }

bool known(std::uint16_t tag) {
  return tag == ACL_USER_OBJ || named(tag) || tag == ACL_GROUP_OBJ || tag == ACL_MASK || tag == ACL_OTHER;
}

std::string hex(std::uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out = "0x";
  bool any = false;
  for (int shift = 28; shift >= 0; shift -= 4) {
    const unsigned d = (v >> shift) & 0xF;
    if (d || any || shift == 0) out += digits[d], any = true;
  }
  return out;
}

void put16(std::string& out, std::uint16_t v) {
  out += char(v & 0xFF);
  out += char(v >> 8);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, std::uint16_t(v));
  put16(out, std::uint16_t(v >> 16));
}

void sort_acl(std::vector<AclEntry>& entries) {
  std::sort(entries.begin(), entries.end(),
            [](const AclEntry& a, const AclEntry& b) { return a.tag != b.tag ? a.tag < b.tag : a.id < b.id; });
}

}  // namespace

fsio::Status check_acl(const std::vector<AclEntry>& entries) {
  unsigned count[0x21] = {};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const AclEntry& e = entries[i];
    if (!known(e.tag)) return make_error(Errc::corrupt, "a POSIX ACL entry of unknown tag " + hex(e.tag));
    if (e.perm & ~kPermMask)
      return make_error(Errc::corrupt, "a POSIX ACL entry of permissions " + hex(e.perm) + " (rwx is 0x7)");
    if (i > 0 && named(e.tag) && entries[i - 1].tag == e.tag && entries[i - 1].id == e.id)
      return make_error(Errc::corrupt, "a POSIX ACL naming " + std::string(e.tag == ACL_USER ? "user " : "group ") +
                                           std::to_string(e.id) + " twice");
    ++count[e.tag];
  }
  if (count[ACL_USER_OBJ] != 1 || count[ACL_GROUP_OBJ] != 1 || count[ACL_OTHER] != 1 || count[ACL_MASK] > 1)
    return make_error(Errc::corrupt, "a POSIX ACL without exactly one owner, owning group and other entry");
  if ((count[ACL_USER] || count[ACL_GROUP]) && !count[ACL_MASK])
    return make_error(Errc::corrupt, "a POSIX ACL with named users or groups but no mask entry");
  return {};
}

fsio::Result<std::vector<AclEntry>> parse_posix_acl(std::string_view value) {
  // Nothing is sized from the value's fields: entries follow the bytes there are.
  if (value.size() < 4 || (value.size() - 4) % 8 != 0)
    return make_error(Errc::corrupt, "a POSIX ACL of " + std::to_string(value.size()) + " bytes (4 + 8 per entry)");
  const auto bytes = std::as_bytes(std::span(value.data(), value.size()));
  const std::uint32_t version = fsio::load<fsio::le32>(bytes, 0);
  if (version != POSIX_ACL_XATTR_VERSION)
    return make_error(Errc::corrupt, "a POSIX ACL of version " + std::to_string(version) + " (expected 2)");
  std::vector<AclEntry> entries;
  for (std::size_t at = 4; at < value.size(); at += 8) {
    AclEntry e{fsio::load<fsio::le16>(bytes, at), fsio::load<fsio::le16>(bytes, at + 2),
               fsio::load<fsio::le32>(bytes, at + 4)};
    if (!named(e.tag)) e.id = ACL_UNDEFINED_ID;
    entries.push_back(e);
  }
  sort_acl(entries);
  FSIO_TRY(check_acl(entries));
  return entries;
}

std::string encode_posix_acl(const std::vector<AclEntry>& entries) {
  std::string out;
  put32(out, POSIX_ACL_XATTR_VERSION);
  for (const AclEntry& e : entries) {
    put16(out, e.tag);
    put16(out, e.perm);
    put32(out, named(e.tag) ? e.id : ACL_UNDEFINED_ID);
  }
  return out;
}

fsio::Result<std::string> acl_to_ext4(std::string_view value, const std::optional<IdMap>& uid_map,
                                      const std::optional<IdMap>& gid_map) {
  std::vector<AclEntry> entries = FSIO_TRY(parse_posix_acl(value));
  for (AclEntry& e : entries) {
    const std::optional<IdMap>& map = e.tag == ACL_USER ? uid_map : gid_map;
    if (!named(e.tag) || !map) continue;
    const auto to = map->map(e.id);
    const char* what = e.tag == ACL_USER ? "uid" : "gid";
    if (!to)
      return make_error(Errc::invalid_argument, std::string("a POSIX ACL entry of ") + what + " " +
                                                    std::to_string(e.id) + ", in no range of --" + what +
                                                    "-map (add one for it)");
    e.id = *to;
  }
  sort_acl(entries);  // a map keeps ids apart (id_map.hpp), but may reorder them
  FSIO_TRY(check_acl(entries));
  std::string out;
  put32(out, EXT4_ACL_VERSION);
  for (const AclEntry& e : entries) {
    put16(out, e.tag);
    put16(out, e.perm);
    if (named(e.tag)) put32(out, e.id);
  }
  return out;
}

}  // namespace ext
