// A member's extended attributes, POSIX ACLs and file flags, as libarchive
// parsed them from the archive (see tar_tree.hpp member_attrs), made into
// what a directory source gives for the same file.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>

#include "cmd/tree/tar_tree.hpp"

namespace fsio::tree {

namespace {

// acl(5) tags in the xattr format (linux/posix_acl.h).
constexpr std::uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10, kOther = 0x20;
constexpr std::uint32_t kUndefinedId = 0xFFFFFFFF;

struct PosixEntry {
  std::uint16_t tag, perm;
  std::uint32_t id;
};

std::uint16_t posix_tag(int archive_tag) {
  switch (archive_tag) {
    case ARCHIVE_ENTRY_ACL_USER_OBJ: return kUserObj;
    case ARCHIVE_ENTRY_ACL_USER: return kUser;
    case ARCHIVE_ENTRY_ACL_GROUP_OBJ: return kGroupObj;
    case ARCHIVE_ENTRY_ACL_GROUP: return kGroup;
    case ARCHIVE_ENTRY_ACL_MASK: return kMask;
    case ARCHIVE_ENTRY_ACL_OTHER: return kOther;
    default: return 0;
  }
}

void put16(std::string& out, std::uint16_t v) {
  out += char(v & 0xFF);
  out += char(v >> 8);
}

// The xattr format (version 2) of entries sorted as the kernel keeps them.
std::string posix_acl_value(std::vector<PosixEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const PosixEntry& a, const PosixEntry& b) { return a.tag != b.tag ? a.tag < b.tag : a.id < b.id; });
  std::string out;
  put16(out, 2);
  put16(out, 0);
  for (const PosixEntry& e : entries) {
    put16(out, e.tag);
    put16(out, e.perm);
    put16(out, std::uint16_t(e.id));
    put16(out, std::uint16_t(e.id >> 16));
  }
  return out;
}

// One ACL type's entries. libarchive gives an access ACL's owner, group and
// other entries from the mode it holds beside the ACL, first; none at all
// when the ACL has no more than those (the mode says it all, and the
// kernel stores no ACL then either).
Result<std::vector<PosixEntry>> acl_entries(archive_entry* e, int type, const std::string& where) {
  std::vector<PosixEntry> out;
  if (archive_entry_acl_reset(e, type) <= 0) return out;
  int got_type = 0, permset = 0, tag = 0, id = 0;
  const char* name = nullptr;
  while (archive_entry_acl_next(e, type, &got_type, &permset, &tag, &id, &name) == ARCHIVE_OK) {
    const std::uint16_t t = posix_tag(tag);
    if (t == 0) return make_error(Errc::unsupported, where + ": an ACL entry of libarchive tag " + std::to_string(tag));
    PosixEntry p{t, std::uint16_t(permset & 0xFFFF), kUndefinedId};
    if (t == kUser || t == kGroup) {
      if (id < 0)
        return make_error(Errc::unsupported, where + ": an ACL entry naming " + (t == kUser ? "user '" : "group '") +
                                                 (name ? name : "") +
                                                 "' without a numeric id (GNU tar stores one in the xattr it "
                                                 "adds with --xattrs --xattrs-include='*')");
      p.id = std::uint32_t(id);
    }
    out.push_back(p);
  }
  return out;
}

Status add_acls(archive_entry* e, const std::string& where, std::vector<Xattr>& xattrs) {
  if (archive_entry_acl_types(e) & ARCHIVE_ENTRY_ACL_TYPE_NFS4)
    return make_error(Errc::unsupported, where + ": an NFSv4 ACL, which ext4 cannot hold");
  const std::pair<int, const char*> kinds[] = {{ARCHIVE_ENTRY_ACL_TYPE_ACCESS, "system.posix_acl_access"},
                                               {ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, "system.posix_acl_default"}};
  for (const auto& kind : kinds) {
    const std::string xattr = kind.second;  // a name, not a structured binding: clang 14 captures none
    // GNU tar's --xattrs-include='*' stores the xattr itself too, with the
    // numeric ids its ACL record (names only) leaves out: that one is kept.
    if (std::any_of(xattrs.begin(), xattrs.end(), [&](const Xattr& x) { return x.name == xattr; })) continue;
    std::vector<PosixEntry> entries = FSIO_TRY(acl_entries(e, kind.first, where));
    if (!entries.empty()) xattrs.push_back({xattr, posix_acl_value(std::move(entries))});
  }
  return {};
}

}  // namespace

Status member_attrs(archive_entry* e, const std::string& where, TreeNode& n) {
  n.xattrs.clear();
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  archive_entry_xattr_reset(e);
  while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
    if (!name || !*name) return make_error(Errc::corrupt, where + ": an xattr without a name");
    n.xattrs.push_back({name, value ? std::string(static_cast<const char*>(value), size) : std::string()});
  }
  FSIO_TRY(add_acls(e, where, n.xattrs));
  // bsdtar writes each xattr twice, as LIBARCHIVE.xattr and SCHILY.xattr,
  // and libarchive gives both: one is kept where they agree.
  std::sort(n.xattrs.begin(), n.xattrs.end());
  n.xattrs.erase(std::unique(n.xattrs.begin(), n.xattrs.end()), n.xattrs.end());
  for (std::size_t i = 1; i < n.xattrs.size(); ++i)
    if (n.xattrs[i].name == n.xattrs[i - 1].name)
      return make_error(Errc::corrupt, where + ": xattr '" + n.xattrs[i].name + "' twice, with different values");
  unsigned long set = 0, clear = 0;
  archive_entry_fflags(e, &set, &clear);
  n.flags = std::uint32_t(set);
  return {};
}

}  // namespace fsio::tree
