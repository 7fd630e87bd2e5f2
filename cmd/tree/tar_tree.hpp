// TarTreeBuilder: an archive's members, in archive order, made into the tree
// `tar -x` would leave, then listed in the TreeSource order (tar_source.cpp
// reads the archive; this is what it makes of the headers).
//
// As tar -x: a member's path loses a leading '/' and "./" and empty parts;
// ".." is refused (it would climb out of the tree); a later member replaces
// an earlier one of the same path (a directory over a directory only
// updates its attributes; a directory and a non-directory of one path is
// refused); a parent without a member of its own is made with mode 0755 and
// time 0 (1970). A hard link shares the bytes of the member it names.
// With SymlinkPolicy::follow a symbolic link is resolved inside the archive
// (an absolute target from the archive's root, at most 40 links deep, as
// Linux's ELOOP): a file becomes that file's bytes, a directory a copy of
// its subtree; one that leads nowhere or in a circle is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libfsio/result.hpp"
#include "libfsio/tree_source.hpp"

struct archive_entry;

namespace fsio::tree {

// What pass 2 checks each member against, and where its data goes.
struct MemberShape {
  std::string raw_path;  // as member_path() gives it
  std::uint64_t size = 0;
  std::uint32_t content = kNoContent;  // the content its data is, if any node uses it
  bool sparse = false;                 // a sparse member: its data ranges from the sparse map
  std::vector<DataRange> data{};
};

struct TarTree {
  std::vector<MemberShape> members;  // every member, in archive order
  std::size_t contents = 0;          // members whose data some node uses
};

// The member's path as stored (UTF-8 when the archive says so, else its bytes).
std::string member_path(archive_entry* e);

// One member, as the builder needs it (from an archive_entry, or made by a test).
struct MemberInfo {
  std::string path;       // as stored
  TreeNode attrs;         // kind, size, mode, owner, times, rdev, link_target (symlinks)
  std::string hardlink;   // non-empty: a hard link to this path
  bool has_data = false;  // the member carries bytes of its own (size > 0)
  bool sparse = false;    // a sparse member (GNU or pax sparse): its data ranges, merged, within size
  std::vector<DataRange> data{};
};
MemberInfo member_info(archive_entry* e);

// The member's xattrs (pax SCHILY.xattr.* and LIBARCHIVE.xattr.*, full
// names as getxattr gives them) and POSIX ACLs (SCHILY.acl.access and
// .default, which libarchive parses) as system.posix_acl_access/_default
// in the xattr format (version 2), into `n.xattrs` sorted by name; its file
// flags (libarchive's fflags, FS_*_FL bits on Linux; bsdtar and pax
// SCHILY.fflags store them, GNU tar does not) into `n.flags`. An xattr
// system.posix_acl_* stored as such (GNU tar --xattrs-include='*') is kept
// over the ACL record (GNU tar 1.34 writes only names there, no ids). Errc::unsupported naming
// `where` for an NFSv4 ACL or a named entry without a numeric id;
// Errc::corrupt for a name stored twice with different values (bsdtar
// stores each twice, alike: kept once). The ACL's rules (one owner entry,
// a mask with named entries, ...) are the filler's to check.
Status member_attrs(archive_entry* e, const std::string& where, TreeNode& n);

class TarTreeBuilder {
 public:
  // `attrs`: each member's xattrs, ACLs and flags too (member_attrs).
  TarTreeBuilder(std::string archive_name, SymlinkPolicy symlinks, bool attrs = false);
  Status add(archive_entry* e);
  Status add(const MemberInfo& member);
  std::size_t members() const { return shape_.members.size(); }
  // The tree in TreeSource order; `shape` gets the members and their contents.
  Result<Tree> finish(TarTree& shape);

 private:
  struct Node {
    std::string name;
    std::uint32_t parent = 0;
    TreeNode attrs;
    std::map<std::string, std::uint32_t> children;  // std::string orders bytes as unsigned char
    std::int64_t data_member = -1;                  // a file: the member holding its bytes
  };
  Result<std::uint32_t> parent_of(const std::vector<std::string>& parts, const std::string& path);
  Result<std::uint32_t> find(const std::string& path) const;
  Result<std::uint32_t> resolve(std::uint32_t link, int& hops) const;
  Result<std::uint32_t> walk(std::uint32_t dir, const std::string& target, int& hops, std::uint32_t link) const;
  std::string where(std::uint32_t node) const;
  Status emit(std::uint32_t dir, std::uint32_t out, std::vector<std::uint32_t>& up, Tree& tree, TarTree& shape) const;

  std::string archive_;
  SymlinkPolicy symlinks_;
  bool attrs_ = false;
  std::vector<Node> nodes_;  // nodes_[0]: the root
  TarTree shape_;
};

}  // namespace fsio::tree
