// ext4 xattr layout (ext/xattr.hpp), with the bytes worked by hand from
// attributes.rst: entry and block hashes, the kernel's entry order, what
// goes in the inode and what in the block, and where each byte lands.
#include <gtest/gtest.h>

#include "ext/crc.hpp"
#include "ext/tree_fill.hpp"
#include "ext/xattr.hpp"

namespace ext {
namespace {

std::uint32_t u32(std::span<const std::byte> b, std::size_t at) { return fsio::load<le32>(b, at); }
std::uint16_t u16(std::span<const std::byte> b, std::size_t at) { return fsio::load<le16>(b, at); }

TEST(XattrName, PrefixesBecomeIndexes) {
  auto idx = [](const char* n) { return split_xattr_name(n).value().index; };
  EXPECT_EQ(idx("user.a"), 1);
  EXPECT_EQ(idx("system.posix_acl_access"), 2);
  EXPECT_EQ(idx("system.posix_acl_default"), 3);
  EXPECT_EQ(idx("trusted.x"), 4);
  EXPECT_EQ(idx("security.selinux"), 6);
  EXPECT_EQ(split_xattr_name("security.capability").value().name, "capability");
  EXPECT_EQ(split_xattr_name("system.posix_acl_access").value().name, "");
  EXPECT_EQ(split_xattr_name("foo.bar").error().code, fsio::Errc::unsupported);
  EXPECT_EQ(split_xattr_name("system.data").error().code, fsio::Errc::unsupported);
  EXPECT_EQ(split_xattr_name("user.").error().code, fsio::Errc::unsupported);
  EXPECT_TRUE(split_xattr_name("user." + std::string(255, 'n')));
  EXPECT_FALSE(split_xattr_name("user." + std::string(256, 'n')));
}

TEST(XattrHash, NameThenValueWordsByHand) {
  // "a": h = 0x61. "ab": (0x61 << 5) ^ 0x62 = 0xC42. Value "xyz" is the
  // le32 word 0x007A7978: (0xC42 << 16) ^ (0xC42 >> 16) ^ 0x007A7978.
  EXPECT_EQ(xattr_entry_hash({1, "a", ""}), 0x61u);
  EXPECT_EQ(xattr_entry_hash({1, "ab", ""}), 0xC42u);
  EXPECT_EQ(xattr_entry_hash({1, "ab", "xyz"}), 0x0C387978u);
  // A name byte of 0xE9 counts as 233, not -23 (the unsigned hash).
  EXPECT_EQ(xattr_entry_hash({1, "\xE9", ""}), 0xE9u);
}

TEST(XattrHash, BlockHashRotatesEachEntryIn) {
  const XattrEntry a{1, "a", ""}, ab{1, "ab", ""};
  const XattrEntry both[] = {a, ab};
  // h = 0x61; then (0x61 << 16) ^ (0x61 >> 16) ^ 0xC42 = 0x00610C42.
  EXPECT_EQ(xattr_block_hash(both), 0x00610C42u);
}

TEST(XattrOrder, IndexThenNameLengthThenBytes) {
  std::vector<XattrEntry> v{{6, "selinux", ""}, {1, "bb", ""}, {1, "z", ""}, {1, "aa", ""}, {2, "", ""}};
  std::sort(v.begin(), v.end(), xattr_before);
  EXPECT_EQ(v[0].name, "z");
  EXPECT_EQ(v[1].name, "aa");
  EXPECT_EQ(v[2].name, "bb");
  EXPECT_EQ(v[3].index, 2);
  EXPECT_EQ(v[4].index, 6);
}

TEST(XattrPlace, InodeFirstInOrderRestInBlock) {
  // 256-byte inode, i_extra_isize 32: 256 - 128 - 32 - 4 (magic) = 92 bytes.
  Layout l;
  l.inode_size = 256;
  EXPECT_EQ(ibody_xattr_room(l, 32), 92u);
  l.inode_size = 128;
  EXPECT_EQ(ibody_xattr_room(l, 0), 0u);
  // user.a with 3 bytes: 20 + 4 = 24; user.b with 80: 20 + 80 = 100 (too
  // big for 92 - 4 - 24); user.cc with 8: 20 + 8 = 28 (4 + 24 + 28 <= 92).
  std::vector<XattrEntry> v{{1, "b", std::string(80, 'B')}, {1, "cc", "12345678"}, {1, "a", "xyz"}};
  const auto p = place_xattrs(v, 92, 1024);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->ibody.size(), 2u);
  EXPECT_EQ(p->ibody[0].name, "a");
  EXPECT_EQ(p->ibody[1].name, "cc");
  ASSERT_EQ(p->block.size(), 1u);
  EXPECT_EQ(p->block[0].name, "b");
}

TEST(XattrPlace, MoreThanOneBlockIsRefusedWithSizes) {
  // 1024 - 32 (header) - 4 (end) = 988 for entries and values; 20 + 992 does not fit.
  const auto p = place_xattrs({{1, "a", std::string(989, 'v')}}, 0, 1024);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, fsio::Errc::unsupported);
  EXPECT_NE(p.error().message().find("1012 do not fit the 988"), std::string::npos) << p.error().message();
  EXPECT_TRUE(place_xattrs({{1, "a", std::string(968, 'v')}}, 0, 1024));  // 20 + 968 = 988 exactly
}

TEST(XattrLayout, BlockBytesByHand) {
  const std::vector<XattrEntry> v{{1, "a", "xyz"}};
  const std::vector<std::byte> b = encode_xattr_block(v, 1024);
  ASSERT_EQ(b.size(), 1024u);
  EXPECT_EQ(u32(b, 0x00), 0xEA020000u);  // h_magic
  EXPECT_EQ(u32(b, 0x04), 1u);           // h_refcount
  EXPECT_EQ(u32(b, 0x08), 1u);           // h_blocks
  // h_hash: one entry, (0 << 16) ^ e_hash; e_hash of "a", "xyz" = (0x61 << 16) ^ 0x007A7978.
  EXPECT_EQ(u32(b, 0x0C), 0x001B7978u);
  EXPECT_EQ(u32(b, 0x10), 0u);        // h_checksum, set later
  EXPECT_EQ(std::uint8_t(b[32]), 1);  // e_name_len
  EXPECT_EQ(std::uint8_t(b[33]), 1);  // e_name_index: user
  EXPECT_EQ(u16(b, 34), 1020u);       // e_value_offs: the last 4 bytes
  EXPECT_EQ(u32(b, 36), 0u);          // e_value_inum
  EXPECT_EQ(u32(b, 40), 3u);          // e_value_size
  EXPECT_EQ(u32(b, 44), 0x001B7978u);
  EXPECT_EQ(char(b[48]), 'a');
  EXPECT_EQ(u32(b, 52), 0u);  // end of entries (16 + 1 rounded to 20)
  EXPECT_EQ(char(b[1020]), 'x');
  EXPECT_EQ(char(b[1022]), 'z');
  EXPECT_EQ(std::uint8_t(b[1023]), 0);
}

TEST(XattrLayout, FirstEntrysValueIsLastInTheArea) {
  const std::vector<XattrEntry> v{{1, "a", "12345"}, {1, "b", "xy"}};
  const std::vector<std::byte> b = encode_xattr_block(v, 1024);
  EXPECT_EQ(u16(b, 32 + 2), 1024u - 8);      // "12345" padded to 8, at the end
  EXPECT_EQ(u16(b, 52 + 2), 1024u - 8 - 4);  // "xy" padded to 4, below it
  EXPECT_EQ(char(b[1016]), '1');
  EXPECT_EQ(char(b[1012]), 'x');
}

TEST(XattrLayout, InodeOffsetsCountFromFirstEntryAndHashIsZero) {
  std::vector<std::byte> room(96, std::byte{0xAA});
  write_ibody_xattrs(room, {{4, "t", "v"}});
  EXPECT_EQ(u32(room, 0), 0xEA020000u);
  EXPECT_EQ(std::uint8_t(room[4]), 1);
  EXPECT_EQ(std::uint8_t(room[5]), 4);   // trusted
  EXPECT_EQ(u16(room, 6), 96u - 4 - 4);  // value at room[92], offset from room[4]
  EXPECT_EQ(u32(room, 12), 1u);
  EXPECT_EQ(u32(room, 16), 0u);  // e_hash: the kernel leaves 0 in the inode
  EXPECT_EQ(char(room[20]), 't');
  EXPECT_EQ(u32(room, 24), 0u);  // end of entries
  EXPECT_EQ(char(room[92]), 'v');
  EXPECT_EQ(std::uint8_t(room[60]), 0);  // the rest zeroed
}

TEST(XattrLayout, BlockChecksumCoversNumberAndBlockWithFieldZero) {
  std::vector<std::byte> b = encode_xattr_block({{1, "a", "xyz"}}, 1024);
  const std::uint32_t c = xattr_block_checksum(b, 0x123456789ull, 0xDEADBEEF);
  // By the formula: crc32c(seed, le64 number || block), h_checksum as 0
  // whatever it holds.
  std::vector<std::byte> msg(8);
  for (int i = 0; i < 8; ++i) msg[i] = std::byte((0x123456789ull >> (8 * i)) & 0xFF);
  msg.insert(msg.end(), b.begin(), b.end());
  EXPECT_EQ(c, crc32c_raw(0xDEADBEEF, msg));
  fsio::store(std::span<std::byte>(b), le32(c), 0x10);
  EXPECT_EQ(xattr_block_checksum(b, 0x123456789ull, 0xDEADBEEF), c);
}

}  // namespace
}  // namespace ext

namespace ext {
namespace {

// The kernel's ext4_mask_flags, and the flags that describe our layout
// dropped: 0x00080000 extents, 0x1000 index, 0x10000000 inline data.
TEST(TreeFlags, ChattrFlagsMaskedByKind) {
  using fsio::NodeKind;
  // immutable 0x10 | append 0x20 | nodump 0x40 | noatime 0x80 | dirsync 0x10000 | topdir 0x20000
  const std::uint32_t asked = 0x10 | 0x20 | 0x40 | 0x80 | 0x10000 | 0x20000;
  EXPECT_EQ(flags_in_image(NodeKind::directory, asked), asked);
  EXPECT_EQ(flags_in_image(NodeKind::file, asked), 0x10u | 0x20 | 0x40 | 0x80);
  EXPECT_EQ(flags_in_image(NodeKind::symlink, asked), 0x40u | 0x80);
  EXPECT_EQ(flags_in_image(NodeKind::fifo, asked), 0x40u | 0x80);
  EXPECT_EQ(flags_in_image(NodeKind::file, 0x00080000 | 0x1000 | 0x10000000 | 0x800 | 0x40000000), 0u);
  EXPECT_EQ(flags_in_image(NodeKind::file, 0x8 | 0x4000), 0x8u | 0x4000);  // sync, journal_data
}

}  // namespace
}  // namespace ext

namespace ext {
namespace {

// check_tree's xattr refusals, before anything is allocated, each naming
// the node and the attribute.
fsio::Tree one_file(std::vector<fsio::Xattr> xattrs, fsio::NodeKind kind = fsio::NodeKind::file) {
  fsio::Tree t;
  t.label = "/src";
  fsio::TreeNode root;
  root.kind = fsio::NodeKind::directory;
  fsio::TreeNode f;
  f.name = "f";
  f.parent = 0;
  f.kind = kind;
  f.xattrs = std::move(xattrs);
  t.nodes = {root, f};
  return t;
}

std::string refusal(const fsio::Tree& t, const TreeFillOptions& o = {}) {
  Layout l;
  l.block_size = 1024;
  l.inode_size = 256;
  const fsio::Status st = check_tree(l, t, o);
  return st ? std::string("accepted") : st.error().message();
}

TEST(TreeXattrs, RefusalsNameTheNodeAndTheAttribute) {
  const std::string acl_v2(
      "\x02\0\0\0\x01\0\x06\0\xff\xff\xff\xff\x04\0\x04\0\xff\xff\xff\xff\x20\0\0\0\xff\xff\xff\xff", 28);
  EXPECT_EQ(refusal(one_file({{"system.posix_acl_access", acl_v2}})), "accepted");
  EXPECT_EQ(refusal(one_file({{"system.posix_acl_default", acl_v2}})),
            "/src/f: a default ACL on a file (only a directory has one)");
  EXPECT_EQ(refusal(one_file({{"system.posix_acl_default", acl_v2}}, fsio::NodeKind::directory)), "accepted");
  EXPECT_EQ(refusal(one_file({{"system.posix_acl_access", acl_v2.substr(0, 27)}})),
            "/src/f: system.posix_acl_access: a POSIX ACL of 27 bytes (4 + 8 per entry)");
  EXPECT_EQ(refusal(one_file({{"os2.name", "x"}})), "/src/f: xattr 'os2.name': a namespace ext4 has no index for");
  // 1024-byte blocks: 2 x (20 + 600) = 1240 > 988.
  const std::string big(600, 'v');
  EXPECT_NE(refusal(one_file({{"user.a", big}, {"user.b", big}})).find("/src/f: xattrs of 1240 bytes"),
            std::string::npos);
  EXPECT_EQ(refusal(one_file({{"user.a", big}})), "accepted");
}

}  // namespace
}  // namespace ext
