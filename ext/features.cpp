// Feature names (as dumpe2fs and the kernel name them) and the two gates:
// what we can read, and what we may write.
#include <cstdio>
#include <string>

#include "ext/layout.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

struct Feature {
  std::uint32_t bit;
  const char* name;
};

constexpr Feature kCompat[] = {
    {EXT2_FEATURE_COMPAT_DIR_PREALLOC, "dir_prealloc"},
    {EXT2_FEATURE_COMPAT_IMAGIC_INODES, "imagic_inodes"},
    {EXT3_FEATURE_COMPAT_HAS_JOURNAL, "has_journal"},
    {EXT2_FEATURE_COMPAT_EXT_ATTR, "ext_attr"},
    {EXT2_FEATURE_COMPAT_RESIZE_INODE, "resize_inode"},
    {EXT2_FEATURE_COMPAT_DIR_INDEX, "dir_index"},
    {EXT2_FEATURE_COMPAT_LAZY_BG, "lazy_bg"},
    {EXT2_FEATURE_COMPAT_EXCLUDE_BITMAP, "snapshot_bitmap"},
    {EXT4_FEATURE_COMPAT_SPARSE_SUPER2, "sparse_super2"},
    {EXT4_FEATURE_COMPAT_FAST_COMMIT, "fast_commit"},
    {EXT4_FEATURE_COMPAT_STABLE_INODES, "stable_inodes"},
    {EXT4_FEATURE_COMPAT_ORPHAN_FILE, "orphan_file"},
};
constexpr Feature kRoCompat[] = {
    {EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER, "sparse_super"},
    {EXT2_FEATURE_RO_COMPAT_LARGE_FILE, "large_file"},
    {EXT2_FEATURE_RO_COMPAT_BTREE_DIR, "btree_dir"},
    {EXT4_FEATURE_RO_COMPAT_HUGE_FILE, "huge_file"},
    {EXT4_FEATURE_RO_COMPAT_GDT_CSUM, "uninit_bg"},
    {EXT4_FEATURE_RO_COMPAT_DIR_NLINK, "dir_nlink"},
    {EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE, "extra_isize"},
    {EXT4_FEATURE_RO_COMPAT_HAS_SNAPSHOT, "snapshot"},
    {EXT4_FEATURE_RO_COMPAT_QUOTA, "quota"},
    {EXT4_FEATURE_RO_COMPAT_BIGALLOC, "bigalloc"},
    {EXT4_FEATURE_RO_COMPAT_METADATA_CSUM, "metadata_csum"},
    {EXT4_FEATURE_RO_COMPAT_REPLICA, "replica"},
    {EXT4_FEATURE_RO_COMPAT_READONLY, "read-only"},
    {EXT4_FEATURE_RO_COMPAT_PROJECT, "project"},
    {EXT4_FEATURE_RO_COMPAT_SHARED_BLOCKS, "shared_blocks"},
    {EXT4_FEATURE_RO_COMPAT_VERITY, "verity"},
    {EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT, "orphan_present"},
};
constexpr Feature kIncompat[] = {
    {EXT2_FEATURE_INCOMPAT_COMPRESSION, "compression"},
    {EXT2_FEATURE_INCOMPAT_FILETYPE, "filetype"},
    {EXT3_FEATURE_INCOMPAT_RECOVER, "needs_recovery"},
    {EXT3_FEATURE_INCOMPAT_JOURNAL_DEV, "journal_dev"},
    {EXT2_FEATURE_INCOMPAT_META_BG, "meta_bg"},
    {EXT3_FEATURE_INCOMPAT_EXTENTS, "extent"},
    {EXT4_FEATURE_INCOMPAT_64BIT, "64bit"},
    {EXT4_FEATURE_INCOMPAT_MMP, "mmp"},
    {EXT4_FEATURE_INCOMPAT_FLEX_BG, "flex_bg"},
    {EXT4_FEATURE_INCOMPAT_EA_INODE, "ea_inode"},
    {EXT4_FEATURE_INCOMPAT_DIRDATA, "dirdata"},
    {EXT4_FEATURE_INCOMPAT_CSUM_SEED, "metadata_csum_seed"},
    {EXT4_FEATURE_INCOMPAT_LARGEDIR, "large_dir"},
    {EXT4_FEATURE_INCOMPAT_INLINE_DATA, "inline_data"},
    {EXT4_FEATURE_INCOMPAT_ENCRYPT, "encrypt"},
    {EXT4_FEATURE_INCOMPAT_CASEFOLD, "casefold"},
};

template <std::size_t N>
void append_names(std::string& out, std::uint32_t bits, const Feature (&table)[N], char kind) {
  for (int b = 0; b < 32; ++b) {
    std::uint32_t bit = 1u << b;
    if (!(bits & bit)) continue;
    const char* name = nullptr;
    for (const auto& f : table)
      if (f.bit == bit) name = f.name;
    if (!out.empty()) out += ' ';
    if (name) {
      out += name;
    } else {
      char buf[24];
      std::snprintf(buf, sizeof buf, "FEATURE_%c%d", kind, b);
      out += buf;
    }
  }
}

// Features we handle fully when writing: what mke2fs -t ext4 makes by
// default, plus metadata_csum_seed, orphan_file (while empty), uninit_bg,
// sparse_super2, and the compat bits that change nothing we touch.
constexpr std::uint32_t kWriteCompat = EXT2_FEATURE_COMPAT_DIR_PREALLOC | EXT2_FEATURE_COMPAT_IMAGIC_INODES |
                                       EXT3_FEATURE_COMPAT_HAS_JOURNAL | EXT2_FEATURE_COMPAT_EXT_ATTR |
                                       EXT2_FEATURE_COMPAT_RESIZE_INODE | EXT2_FEATURE_COMPAT_DIR_INDEX |
                                       EXT4_FEATURE_COMPAT_SPARSE_SUPER2 | EXT4_FEATURE_COMPAT_FAST_COMMIT |
                                       EXT4_FEATURE_COMPAT_STABLE_INODES | EXT4_FEATURE_COMPAT_ORPHAN_FILE;
constexpr std::uint32_t kWriteRoCompat = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE |
                                         EXT4_FEATURE_RO_COMPAT_HUGE_FILE | EXT4_FEATURE_RO_COMPAT_GDT_CSUM |
                                         EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |
                                         EXT4_FEATURE_RO_COMPAT_METADATA_CSUM;
constexpr std::uint32_t kWriteIncompat = EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_EXTENTS |
                                         EXT4_FEATURE_INCOMPAT_64BIT | EXT4_FEATURE_INCOMPAT_FLEX_BG |
                                         EXT4_FEATURE_INCOMPAT_CSUM_SEED;
// Reading copes with everything but these incompat bits (and unknown ones).
constexpr std::uint32_t kReadIncompat = kWriteIncompat | EXT3_FEATURE_INCOMPAT_RECOVER | EXT2_FEATURE_INCOMPAT_META_BG |
                                        EXT4_FEATURE_INCOMPAT_MMP | EXT4_FEATURE_INCOMPAT_EA_INODE |
                                        EXT4_FEATURE_INCOMPAT_LARGEDIR | EXT4_FEATURE_INCOMPAT_INLINE_DATA |
                                        EXT4_FEATURE_INCOMPAT_ENCRYPT | EXT4_FEATURE_INCOMPAT_CASEFOLD;

}  // namespace

std::string feature_names(std::uint32_t compat, std::uint32_t incompat, std::uint32_t ro_compat) {
  std::string out;
  append_names(out, compat, kCompat, 'C');
  append_names(out, incompat, kIncompat, 'I');
  append_names(out, ro_compat, kRoCompat, 'R');
  return out;
}

fsio::Status check_readable(const Layout& l) {
  if (std::uint32_t extra = l.incompat & ~kReadIncompat)
    return make_error(Errc::unsupported,
                      "ext: cannot read a filesystem with incompatible feature(s) " + feature_names(0, extra, 0));
  return {};
}

fsio::Status check_writable(const Layout& l, const Ext4SuperBlock& sb) {
  const std::string no = "ext: refusing to write: ";
  if (l.has_incompat(EXT3_FEATURE_INCOMPAT_RECOVER))
    return make_error(Errc::busy, no + "the journal needs recovery (needs_recovery); mount it once or run e2fsck");
  if (sb.s_state & EXT2_ERROR_FS)
    return make_error(Errc::busy, no + "the filesystem has errors (s_state ERROR_FS); run e2fsck first");
  if (!(sb.s_state & EXT2_VALID_FS))
    return make_error(Errc::busy,
                      no + "the filesystem was not cleanly unmounted (s_state VALID_FS clear); run e2fsck first");
  if (sb.s_last_orphan != 0 || l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT))
    return make_error(Errc::busy,
                      no + "orphan inodes are present (s_last_orphan " + std::to_string(sb.s_last_orphan) +
                          (l.has_ro_compat(EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT) ? ", orphan_present" : "") +
                          "); mount it once or run e2fsck");
  if (std::uint32_t extra = l.incompat & ~kWriteIncompat)
    return make_error(Errc::unsupported,
                      no + "incompatible feature(s) not handled for writing: " + feature_names(0, extra, 0));
  if (std::uint32_t extra = l.ro_compat & ~kWriteRoCompat)
    return make_error(Errc::unsupported,
                      no + "read-only-compatible feature(s) not handled for writing: " + feature_names(0, 0, extra));
  if (std::uint32_t extra = l.compat & ~kWriteCompat)
    return make_error(Errc::unsupported, no + "feature(s) not handled for writing: " + feature_names(extra, 0, 0));
  if (!l.has_incompat(EXT3_FEATURE_INCOMPAT_EXTENTS))
    return make_error(Errc::unsupported,
                      no + "no extent feature (ext2/ext3 block-mapped files are read-only in extwb)");
  if (l.has_compat(EXT3_FEATURE_COMPAT_HAS_JOURNAL) && sb.s_journal_inum == 0)
    return make_error(Errc::unsupported, no + "the journal is on an external device (cannot check that it is clean)");
  return {};
}

}  // namespace ext
