// POSIX ACLs from the xattr format (version 2) to ext4's (version 1), with
// the bytes of both written out by hand from acl(5)'s tags and the layouts
// in ext/acl.hpp (linux/posix_acl_xattr.h, fs/ext4/acl.h).
#include <gtest/gtest.h>

#include "ext/acl.hpp"

namespace ext {
namespace {

std::string bytes(std::initializer_list<unsigned> b) {
  std::string out;
  for (unsigned v : b) out += char(v);
  return out;
}

// user::rw- user:1000:r-- group::r-- mask::r-- other::---, as getfacl shows it.
const std::string kNamedUser = bytes({2,    0, 0, 0,                            // a_version 2
                                      0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,    // USER_OBJ rw-
                                      0x02, 0, 4, 0, 0xe8, 0x03, 0,    0,       // USER 1000 r--
                                      0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,    // GROUP_OBJ r--
                                      0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,    // MASK r--
                                      0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff});  // OTHER ---

TEST(Acl, Ext4KeepsIdsOnlyForNamedEntries) {
  const auto v = acl_to_ext4(kNamedUser, std::nullopt, std::nullopt);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(*v, bytes({1,    0, 0, 0,                    // a_version 1
                       0x01, 0, 6, 0,                    // USER_OBJ, short
                       0x02, 0, 4, 0, 0xe8, 0x03, 0, 0,  // USER 1000, full
                       0x04, 0, 4, 0, 0x10, 0,    4, 0, 0x20, 0, 0, 0}));
}

TEST(Acl, MinimalAclIsFourShortEntriesLess) {
  const std::string v2 = bytes({2, 0, 0,    0,    0x01, 0,    7,    0, 0xff, 0xff, 0xff, 0xff, 0x04, 0,
                                5, 0, 0xff, 0xff, 0xff, 0xff, 0x20, 0, 1,    0,    0xff, 0xff, 0xff, 0xff});
  const auto v = acl_to_ext4(v2, std::nullopt, std::nullopt);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, bytes({1, 0, 0, 0, 0x01, 0, 7, 0, 0x04, 0, 5, 0, 0x20, 0, 1, 0}));
}

TEST(Acl, UidMapMapsNamedUsersAndResorts) {
  // user:1000 and user:5 become 0 and 5: 1000 -> 0 goes first.
  std::string v2 = bytes({2, 0, 0,    0,    0x01, 0,    6,    0,    0xff, 0xff, 0xff, 0xff, 0x02, 0,    4,
                          0, 5, 0,    0,    0,    0x02, 0,    2,    0,    0xe8, 0x03, 0,    0,    0x04, 0,
                          4, 0, 0xff, 0xff, 0xff, 0xff, 0x08, 0,    1,    0,    0xe8, 0x03, 0,    0,    0x10,
                          0, 6, 0,    0xff, 0xff, 0xff, 0xff, 0x20, 0,    0,    0,    0xff, 0xff, 0xff, 0xff});
  IdMap uids;
  ASSERT_TRUE(uids.add("1000:0:1", "--uid-map"));
  ASSERT_TRUE(uids.add("5:5:1", "--uid-map"));
  const auto v = acl_to_ext4(v2, uids, std::nullopt);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(*v, bytes({1,    0, 0, 0, 0x01, 0, 6, 0, 0x02, 0,    2, 0, 0, 0, 0, 0,  // user:0 (was 1000) w
                       0x02, 0, 4, 0, 5,    0, 0, 0,                                // user:5 r
                       0x04, 0, 4, 0, 0x08, 0, 1, 0, 0xe8, 0x03, 0, 0,              // group:1000 kept (no gid map)
                       0x10, 0, 6, 0, 0x20, 0, 0, 0}));
}

TEST(Acl, IdInNoRangeIsRefusedNamingIt) {
  IdMap uids;
  ASSERT_TRUE(uids.add("0:0:1", "--uid-map"));
  const auto v = acl_to_ext4(kNamedUser, uids, std::nullopt);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, fsio::Errc::invalid_argument);
  EXPECT_NE(v.error().message().find("uid 1000"), std::string::npos) << v.error().message();
}

TEST(Acl, MalformedValuesAreCorrupt) {
  auto corrupt = [](const std::string& v, const char* says) {
    const auto r = parse_posix_acl(v);
    ASSERT_FALSE(r) << says;
    EXPECT_EQ(r.error().code, fsio::Errc::corrupt);
    EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
  };
  corrupt(kNamedUser.substr(0, kNamedUser.size() - 1), "of 43 bytes");
  corrupt("", "of 0 bytes");
  std::string v1 = kNamedUser;
  v1[0] = 1;
  corrupt(v1, "version 1");
  std::string perm = kNamedUser;
  perm[6] = 8;  // USER_OBJ's perm
  corrupt(perm, "permissions 0x8");
  std::string tag = kNamedUser;
  tag[12] = 0x40;  // USER -> an unknown tag
  corrupt(tag, "tag 0x40");
  // No mask, a named user: posix_acl_valid refuses it.
  corrupt(kNamedUser.substr(0, 28) + kNamedUser.substr(36), "no mask");
  // Two owners.
  corrupt(kNamedUser + kNamedUser.substr(4, 8), "exactly one");
  // user:1000 twice.
  corrupt(kNamedUser + kNamedUser.substr(12, 8), "user 1000 twice");
}

TEST(Acl, ParseSortsAndEncodeGivesXattrFormatBack) {
  // OTHER first, USER_OBJ last: parsed into the kernel's order.
  std::string shuffled =
      bytes({2, 0, 0, 0}) + kNamedUser.substr(36, 8) + kNamedUser.substr(12, 24) + kNamedUser.substr(4, 8);
  const auto e = parse_posix_acl(shuffled);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(encode_posix_acl(*e), kNamedUser);
}

}  // namespace
}  // namespace ext
