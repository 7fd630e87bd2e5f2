// The option languages inside mke2fs's options: feature lists (-O and the
// profile's features), mount option lists, UUIDs, and the -E and -J
// key=value lists, each read as e2fsprogs reads it.
#include "ext/mkfs_options.hpp"

#include <strings.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "ext/superblock.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

fsio::Error usage(std::string what) { return make_error(Errc::invalid_argument, std::move(what)); }

struct FeatureName {
  int word;  // 0 compat, 1 incompat, 2 ro_compat (e2p's order)
  std::uint32_t bit;
  const char* name;
};

// lib/e2p/feature.c's names, aliases included.
constexpr FeatureName kFeatures[] = {
    {0, EXT2_FEATURE_COMPAT_DIR_PREALLOC, "dir_prealloc"},
    {0, EXT3_FEATURE_COMPAT_HAS_JOURNAL, "has_journal"},
    {0, EXT2_FEATURE_COMPAT_IMAGIC_INODES, "imagic_inodes"},
    {0, EXT2_FEATURE_COMPAT_EXT_ATTR, "ext_attr"},
    {0, EXT2_FEATURE_COMPAT_DIR_INDEX, "dir_index"},
    {0, EXT2_FEATURE_COMPAT_RESIZE_INODE, "resize_inode"},
    {0, EXT2_FEATURE_COMPAT_LAZY_BG, "lazy_bg"},
    {0, EXT2_FEATURE_COMPAT_EXCLUDE_BITMAP, "snapshot_bitmap"},
    {0, EXT4_FEATURE_COMPAT_SPARSE_SUPER2, "sparse_super2"},
    {0, EXT4_FEATURE_COMPAT_FAST_COMMIT, "fast_commit"},
    {0, EXT4_FEATURE_COMPAT_STABLE_INODES, "stable_inodes"},
    {0, EXT4_FEATURE_COMPAT_ORPHAN_FILE, "orphan_file"},
    {2, EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER, "sparse_super"},
    {2, EXT2_FEATURE_RO_COMPAT_LARGE_FILE, "large_file"},
    {2, EXT4_FEATURE_RO_COMPAT_HUGE_FILE, "huge_file"},
    {2, EXT4_FEATURE_RO_COMPAT_GDT_CSUM, "uninit_bg"},
    {2, EXT4_FEATURE_RO_COMPAT_GDT_CSUM, "uninit_groups"},
    {2, EXT4_FEATURE_RO_COMPAT_DIR_NLINK, "dir_nlink"},
    {2, EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE, "extra_isize"},
    {2, EXT4_FEATURE_RO_COMPAT_QUOTA, "quota"},
    {2, EXT4_FEATURE_RO_COMPAT_BIGALLOC, "bigalloc"},
    {2, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM, "metadata_csum"},
    {2, EXT4_FEATURE_RO_COMPAT_REPLICA, "replica"},
    {2, EXT4_FEATURE_RO_COMPAT_READONLY, "read-only"},
    {2, EXT4_FEATURE_RO_COMPAT_PROJECT, "project"},
    {2, EXT4_FEATURE_RO_COMPAT_SHARED_BLOCKS, "shared_blocks"},
    {2, EXT4_FEATURE_RO_COMPAT_VERITY, "verity"},
    {2, EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT, "orphan_present"},
    {1, EXT2_FEATURE_INCOMPAT_COMPRESSION, "compression"},
    {1, EXT2_FEATURE_INCOMPAT_FILETYPE, "filetype"},
    {1, EXT3_FEATURE_INCOMPAT_RECOVER, "needs_recovery"},
    {1, EXT3_FEATURE_INCOMPAT_JOURNAL_DEV, "journal_dev"},
    {1, EXT3_FEATURE_INCOMPAT_EXTENTS, "extent"},
    {1, EXT3_FEATURE_INCOMPAT_EXTENTS, "extents"},
    {1, EXT2_FEATURE_INCOMPAT_META_BG, "meta_bg"},
    {1, EXT4_FEATURE_INCOMPAT_64BIT, "64bit"},
    {1, EXT4_FEATURE_INCOMPAT_MMP, "mmp"},
    {1, EXT4_FEATURE_INCOMPAT_FLEX_BG, "flex_bg"},
    {1, EXT4_FEATURE_INCOMPAT_EA_INODE, "ea_inode"},
    {1, EXT4_FEATURE_INCOMPAT_DIRDATA, "dirdata"},
    {1, EXT4_FEATURE_INCOMPAT_CSUM_SEED, "metadata_csum_seed"},
    {1, EXT4_FEATURE_INCOMPAT_LARGEDIR, "large_dir"},
    {1, EXT4_FEATURE_INCOMPAT_INLINE_DATA, "inline_data"},
    {1, EXT4_FEATURE_INCOMPAT_ENCRYPT, "encrypt"},
    {1, EXT4_FEATURE_INCOMPAT_CASEFOLD, "casefold"},
    {1, EXT4_FEATURE_INCOMPAT_CASEFOLD, "fname_encoding"},
};

// mke2fs's ok_features: what -O may set or clear at all.
constexpr std::uint32_t kOk[3] = {
    EXT3_FEATURE_COMPAT_HAS_JOURNAL | EXT2_FEATURE_COMPAT_RESIZE_INODE | EXT2_FEATURE_COMPAT_DIR_INDEX |
        EXT2_FEATURE_COMPAT_EXT_ATTR | EXT4_FEATURE_COMPAT_SPARSE_SUPER2 | EXT4_FEATURE_COMPAT_FAST_COMMIT |
        EXT4_FEATURE_COMPAT_STABLE_INODES | EXT4_FEATURE_COMPAT_ORPHAN_FILE,
    EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_EXTENTS | EXT3_FEATURE_INCOMPAT_JOURNAL_DEV |
        EXT2_FEATURE_INCOMPAT_META_BG | EXT4_FEATURE_INCOMPAT_FLEX_BG | EXT4_FEATURE_INCOMPAT_EA_INODE |
        EXT4_FEATURE_INCOMPAT_MMP | EXT4_FEATURE_INCOMPAT_64BIT | EXT4_FEATURE_INCOMPAT_INLINE_DATA |
        EXT4_FEATURE_INCOMPAT_ENCRYPT | EXT4_FEATURE_INCOMPAT_CASEFOLD | EXT4_FEATURE_INCOMPAT_CSUM_SEED |
        EXT4_FEATURE_INCOMPAT_LARGEDIR,
    EXT2_FEATURE_RO_COMPAT_LARGE_FILE | EXT4_FEATURE_RO_COMPAT_HUGE_FILE | EXT4_FEATURE_RO_COMPAT_DIR_NLINK |
        EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE | EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4_FEATURE_RO_COMPAT_GDT_CSUM |
        EXT4_FEATURE_RO_COMPAT_BIGALLOC | EXT4_FEATURE_RO_COMPAT_QUOTA | EXT4_FEATURE_RO_COMPAT_METADATA_CSUM |
        EXT4_FEATURE_RO_COMPAT_PROJECT | EXT4_FEATURE_RO_COMPAT_VERITY,
};

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// e2p_string2feature: a name, or FEATURE_C12 / FEATURE_I3 / FEATURE_R7.
bool feature_bit(const std::string& name, int& word, std::uint32_t& bit) {
  for (const auto& f : kFeatures)
    if (!strcasecmp(name.c_str(), f.name)) {
      word = f.word;
      bit = f.bit;
      return true;
    }
  if (name.size() < 10 || strncasecmp(name.c_str(), "FEATURE_", 8)) return false;
  const char kind = char(name[8] | 0x20);
  word = kind == 'c' ? 0 : kind == 'i' ? 1 : kind == 'r' ? 2 : -1;
  if (word < 0) return false;
  char* end = nullptr;
  const long n = std::strtol(name.c_str() + 9, &end, 10);
  if (*end || n < 0 || n > 31) return false;
  bit = 1u << n;
  return true;
}

// Splits "a,b c" into words as e2p does: separated by commas or blanks.
std::vector<std::string> words(const std::string& list) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < list.size()) {
    while (i < list.size() && blank(list[i])) ++i;
    std::size_t j = i;
    while (j < list.size() && !blank(list[j]) && list[j] != ',') ++j;
    out.push_back(list.substr(i, j - i));
    i = j < list.size() ? j + 1 : j;
  }
  return out;
}

}  // namespace

fsio::Status edit_features(const std::string& list, std::uint32_t& compat, std::uint32_t& incompat,
                           std::uint32_t& ro_compat) {
  std::uint32_t* w[3] = {&compat, &incompat, &ro_compat};
  for (std::string word : words(list)) {
    if (word.empty()) continue;
    if (!strcasecmp(word.c_str(), "none") || !strcasecmp(word.c_str(), "clear")) {
      compat = incompat = ro_compat = 0;
      continue;
    }
    const bool clear = word[0] == '^' || word[0] == '-';
    if (clear || word[0] == '+') word.erase(0, 1);
    int kind = 0;
    std::uint32_t bit = 0;
    if (!feature_bit(word, kind, bit)) return usage("invalid filesystem feature '" + word + "' in '" + list + "'");
    if (!(kOk[kind] & bit))
      return usage("the feature '" + word + "' cannot be " + (clear ? "cleared" : "set") + " when making a filesystem");
    if (clear) *w[kind] &= ~bit;
    else *w[kind] |= bit;
  }
  return {};
}

fsio::Status edit_mount_options(const std::string& list, std::uint32_t& opts) {
  static constexpr struct {
    std::uint32_t mask;
    const char* name;
  } kOpts[] = {{0x1, "debug"},
               {0x2, "bsdgroups"},
               {0x4, "user_xattr"},
               {0x8, "acl"},
               {0x10, "uid16"},
               {0x20, "journal_data"},
               {0x40, "journal_data_ordered"},
               {0x60, "journal_data_writeback"},
               {0x100, "nobarrier"},
               {0x200, "block_validity"},
               {0x400, "discard"},
               {0x800, "nodelalloc"}};
  for (std::string word : words(list)) {
    if (word.empty()) continue;
    const bool clear = word[0] == '^' || word[0] == '-';
    if (clear || word[0] == '+') word.erase(0, 1);
    std::uint32_t mask = 0;
    for (const auto& o : kOpts)
      if (!strcasecmp(word.c_str(), o.name)) mask = o.mask;
    if (!mask) return usage("invalid mount option '" + word + "' in '" + list + "'");
    if (mask & 0x60) opts &= ~0x60u;  // the journalling modes exclude each other
    if (clear) opts &= ~mask;
    else opts |= mask;
  }
  return {};
}

std::optional<std::array<std::uint8_t, 16>> parse_uuid(const std::string& text) {
  if (text.size() != 36) return std::nullopt;
  std::array<std::uint8_t, 16> out{};
  int n = 0;
  for (std::size_t i = 0; i < 36; ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return std::nullopt;
      continue;
    }
    int v = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
    if (v < 0) return std::nullopt;
    out[n / 2] = std::uint8_t(out[n / 2] << 4 | v);
    ++n;
  }
  return out;
}

std::string format_uuid(const std::array<std::uint8_t, 16>& u) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

std::vector<KeyValue> split_options(const std::string& list) {
  std::vector<KeyValue> out;
  std::size_t i = 0;
  while (i < list.size()) {
    std::size_t j = list.find(',', i);
    if (j == std::string::npos) j = list.size();
    const std::string token = list.substr(i, j - i);
    const std::size_t eq = token.find('=');
    if (eq == std::string::npos) out.push_back({token, std::nullopt});
    else out.push_back({token.substr(0, eq), token.substr(eq + 1)});
    i = j + 1;
  }
  return out;
}

fsio::Result<std::uint64_t> option_number(const KeyValue& kv, const std::string& option, std::uint64_t max) {
  const std::string& text = *kv.value;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text[0] == '-' || text[0] == '+' || blank(text[0]) || *end || errno || v > max)
    return usage(option + " " + kv.key + "='" + text + "': expected a number from 0 to " + std::to_string(max));
  return std::uint64_t(v);
}

}  // namespace ext
