// A tar archive as mkfat -d reads one (and mkext4 -d will): libarchive reads
// the members (plain tar, or gzip, zstd or xz around it, as tar_source.cpp
// enables them), fsio::tree::TarTreeBuilder makes them into the tree tar -x
// would leave, with symbolic links followed (FAT) and kept (ext4). What is
// ours is the builder: paths with "./", "..", empty parts and leading '/',
// a later member over an earlier one, a directory over a file, hard links to
// members that are not there or come later, links in circles.
//
// Besides not crashing, the tree that comes out is checked against what
// tree_source.hpp promises: the root first, every parent before its
// children and a directory, siblings in strictly increasing bytewise order
// (so no two names alike), names without '/' and neither "." nor "..",
// every content used and in range. With the attributes listed (ext4's
// keep policy), each node's xattrs sorted with no name twice, and its ACL
// values (made from the archive's ACL records, or its own
// system.posix_acl_* xattrs, untrusted) through ext4's ACL conversion,
// which must refuse or give ext4's encoding: 4 bytes, then 4 per
// owner/group/mask/other entry and 8 per named one.
#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cmd/tree/tar_tree.hpp"
#include "ext/acl.hpp"

namespace {

[[noreturn]] void broken(const fsio::Tree& t, std::uint32_t n, const char* what) {
  std::fprintf(stderr, "fuzz_tar_tree: node %u (%s): %s\n", n, t.where(n).c_str(), what);
  std::abort();
}

void check_attrs(const fsio::Tree& t, std::uint32_t n) {
  const std::vector<fsio::Xattr>& xs = t.nodes[n].xattrs;
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (!(xs[i - 1].name < xs[i].name)) broken(t, n, "xattrs out of order or twice");
  for (const fsio::Xattr& x : xs) {
    if (x.name != "system.posix_acl_access" && x.name != "system.posix_acl_default") continue;
    const auto entries = ext::parse_posix_acl(x.value);
    const auto disk = ext::acl_to_ext4(x.value, std::nullopt, std::nullopt);
    if (bool(entries) != bool(disk)) broken(t, n, "ACL parse and conversion disagree");
    if (!entries) continue;
    std::size_t want = 4;
    for (const ext::AclEntry& e : *entries) want += e.tag == ext::ACL_USER || e.tag == ext::ACL_GROUP ? 8 : 4;
    if (disk->size() != want) broken(t, n, "ext4 ACL of the wrong size");
    if (ext::encode_posix_acl(*entries).size() != 4 + 8 * entries->size()) broken(t, n, "xattr ACL size");
  }
}

void check(const fsio::Tree& t) {
  if (t.nodes.empty() || t.nodes[0].parent != fsio::kNoParent || t.nodes[0].kind != fsio::NodeKind::directory)
    std::abort();
  std::vector<bool> used(t.contents.size());
  for (std::uint32_t n = 1; n < t.nodes.size(); ++n) {
    const fsio::TreeNode& x = t.nodes[n];
    if (x.parent >= n) broken(t, n, "its parent comes after it");
    if (t.nodes[x.parent].kind != fsio::NodeKind::directory) broken(t, n, "its parent is not a directory");
    if (x.name.empty() || x.name == "." || x.name == ".." || x.name.find('/') != std::string::npos)
      broken(t, n, "a name tar -x would not make");
    // The previous sibling, if any, is the last node before n with the same parent.
    for (std::uint32_t p = n - 1; p > x.parent; --p)
      if (t.nodes[p].parent == x.parent) {
        if (!(t.nodes[p].name < x.name)) broken(t, n, "siblings out of bytewise order");
        break;
      }
    check_attrs(t, n);
    if (x.content != fsio::kNoContent) {
      if (x.content >= t.contents.size()) broken(t, n, "content out of range");
      used[x.content] = true;
    }
  }
  for (std::size_t c = 0; c < used.size(); ++c)
    if (!used[c]) std::abort();
}

void build(const std::uint8_t* data, std::size_t size, fsio::SymlinkPolicy policy) {
  archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_zstd(a);
  archive_read_support_filter_xz(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_memory(a, data, size) != ARCHIVE_OK) {
    archive_read_free(a);
    return;
  }
  fsio::tree::TarTreeBuilder b("fuzz.tar", policy, policy == fsio::SymlinkPolicy::keep);
  bool ok = true;
  for (int i = 0; ok && i < 4096; ++i) {
    archive_entry* e = nullptr;
    const int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) {
      ok = false;
      break;
    }
    ok = static_cast<bool>(b.add(e));
    if (archive_read_data_skip(a) < ARCHIVE_WARN) ok = false;
  }
  archive_read_free(a);
  if (!ok) return;
  fsio::tree::TarTree shape;
  auto tree = b.finish(shape);
  if (tree) check(*tree);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  build(data, size, fsio::SymlinkPolicy::follow);
  build(data, size, fsio::SymlinkPolicy::keep);
  return 0;
}
