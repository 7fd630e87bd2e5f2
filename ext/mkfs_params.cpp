// resolve_params: mke2fs's PRS() in its order (see mkfs_params.hpp). The
// option sub-languages are in mkfs_options.cpp, -E and -J in mkfs_extended.cpp.
#include "ext/mkfs_params.hpp"

#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "ext/layout.hpp"
#include "ext/mkfs_prs.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

// parse_num_blocks2(arg, log_block_size): a count of blocks (of 1024 <<
// log), or a size with one K/M/G/T suffix (KiB..TiB too), or 's' sectors.
fsio::Result<std::uint64_t> parse_blocks(const std::string& text, int log_block_size, const std::string& what) {
  auto bad = [&] { return mkfs_usage(what + " '" + text + "': expected a block count, or a size like 64M or 1G"); };
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return bad();
  errno = 0;
  char* end = nullptr;
  std::uint64_t n = std::strtoull(text.c_str(), &end, 0);
  if (errno || end == text.c_str()) return bad();
  std::string suffix(end);
  if (suffix.size() == 3 && (suffix[1] | 0x20) == 'i' && (suffix[2] | 0x20) == 'b') suffix.resize(1);
  if (suffix.size() > 1) return bad();
  int shift = 0;  // to KiB
  switch (suffix.empty() ? 0 : suffix[0] | 0x20) {
    case 't': shift = 30; break;
    case 'g': shift = 20; break;
    case 'm': shift = 10; break;
    case 'k': shift = 0; break;
    case 's': break;
    case 0: return n;
    default: return bad();
  }
  if ((suffix[0] | 0x20) == 's') return n >> (1 + log_block_size);
  if (shift && n > (~0ull >> shift)) return mkfs_usage(what + " '" + text + "': too large");
  return (n << shift) >> log_block_size;
}

}  // namespace

fsio::Result<std::uint64_t> Prs::size_in_blocks(const std::string& text, const std::string& what) const {
  return parse_blocks(text, int(p.log_block_size), what);
}

fsio::Result<std::optional<std::string>> Prs::profile_string(const std::string& key) const {
  for (auto t = fs_types.rbegin(); t != fs_types.rend(); ++t)
    if (auto v = conf.get("fs_types", *t, key)) return v;
  return conf.get("defaults", "", key);
}

template <class T, class Read>
fsio::Result<T> Prs::layered(const std::string& key, T def, Read read) const {
  T v = def;
  if (auto s = conf.get("defaults", "", key)) v = T(FSIO_TRY(read(*s, conf.where("defaults", "", key))));
  for (const auto& t : fs_types)
    if (auto s = conf.get("fs_types", t, key)) v = T(FSIO_TRY(read(*s, conf.where("fs_types", t, key))));
  return v;
}

fsio::Result<long> Prs::profile_int(const std::string& key, long def) const {
  return layered<long>(key, def, conf_integer);
}
fsio::Result<double> Prs::profile_double(const std::string& key, double def) const {
  return layered<double>(key, def, conf_double);
}
fsio::Result<bool> Prs::profile_bool(const std::string& key, bool def) const {
  return layered<bool>(key, def, conf_boolean);
}

// -b, then SIZE in the units -b gives, then the device size (PRS's first half).
fsio::Status Prs::sizes() {
  if (req.block_size) {
    const std::uint32_t b = *req.block_size;
    if (b < 1024 || b > 65536 || (b & (b - 1)))
      return mkfs_usage("-b " + std::to_string(b) + ": invalid block size (a power of two from 1024 to 65536)");
    p.log_block_size = std::uint32_t(int_log2(b >> 10));
  }
  if (req.size) {
    blocks = FSIO_TRY(size_in_blocks(*req.size, "SIZE"));
    if (blocks == 0) return mkfs_usage("SIZE '" + *req.size + "': invalid blocks on device '" + t.name + "'");
    p.explicit_size = true;
  }
  const std::uint64_t unit = 1024u << p.log_block_size;
  const std::uint64_t dev_size = t.bytes / unit;
  if (!p.explicit_size) {
    if (!t.exists) return mkfs_usage(t.name + " does not exist and no SIZE was given");
    if (dev_size == 0) return mkfs_usage(t.name + ": its size is 0; give the SIZE of the filesystem");
    blocks = dev_size;
    if (t.page_size > unit) blocks &= ~std::uint64_t(t.page_size / unit - 1);
  } else if (t.is_block_device && blocks > dev_size) {
    return mkfs_usage("SIZE " + *req.size + " is larger than " + t.name + " (" + std::to_string(t.bytes) + " bytes)");
  }
  return {};
}

// parse_fs_type: "ext4", then the usage types (-T, [devices], or by size).
fsio::Status Prs::types() {
  std::string ext_type = "ext4";
  if (req.fs_type) ext_type = *req.fs_type;
  else if (auto d = conf.get("devices", t.name, "fs_type")) ext_type = *d;
  if (ext_type == "ext2" || ext_type == "ext3" || ext_type == "ext4dev")
    return make_error(Errc::unsupported,
                      "-t " + ext_type + ": mkext4 makes ext4 only (mke2fs -t " + ext_type + " makes the others)");
  if (ext_type != "ext4") return mkfs_usage("-t " + ext_type + ": mkext4 makes ext4 only");
  if (!conf.has_subsection("fs_types", ext_type) && !req.force)
    return mkfs_usage(conf.name() + " does not define the ext4 filesystem type (its [fs_types] has no ext4 = { ... })");
  std::optional<std::string> usage_types = req.usage_types;
  if (!usage_types) usage_types = conf.get("devices", t.name, "usage_types");
  const std::uint64_t meg = (1024 * 1024) >> (10 + p.log_block_size);
  const char* by_size = blocks < 3 * meg                     ? "floppy"
                        : blocks < 512 * meg                 ? "small"
                        : blocks < 4ull * 1024 * 1024 * meg  ? "default"
                        : blocks < 16ull * 1024 * 1024 * meg ? "big"
                                                             : "huge";
  const std::string list = usage_types ? *usage_types : by_size;
  fs_types = {ext_type};
  std::size_t i = 0;
  while (i <= list.size()) {
    std::size_t j = list.find(',', i);
    if (j == std::string::npos) j = list.size();
    const std::string type = list.substr(i, j - i);
    if (!type.empty()) {
      if (conf.has_subsection("fs_types", type)) fs_types.push_back(type);
      else if (type != "default") p.warnings.push_back("the fs_type " + type + " is not defined in " + conf.name());
    }
    i = j + 1;
  }
  p.fs_types = fs_types;
  return {};
}

// base_features, each type's features, default_features (without -O),
// then -O; defaults that lost their prerequisite are dropped silently.
fsio::Status Prs::features() {
  const auto base = FSIO_TRY(profile_string("base_features"));
  FSIO_TRY_CTX(edit_features(base.value_or("sparse_super,large_file,filetype,resize_inode,dir_index"), p.compat,
                             p.incompat, p.ro_compat),
               conf.name() + " base_features");
  const auto mntopts = FSIO_TRY(profile_string("default_mntopts"));
  FSIO_TRY(edit_mount_options(mntopts.value_or("acl,user_xattr"), p.default_mount_opts));
  for (const auto& type : fs_types)
    if (auto f = conf.get("fs_types", type, "features"); f && !f->empty())
      FSIO_TRY_CTX(edit_features(*f, p.compat, p.incompat, p.ro_compat), conf.where("fs_types", type, "features"));
  const auto defaults = FSIO_TRY(profile_string("default_features"));
  if (req.features.empty() && defaults)
    FSIO_TRY_CTX(edit_features(*defaults, p.compat, p.incompat, p.ro_compat), conf.name() + " default_features");
  const bool default_orphan = p.compat & EXT4_FEATURE_COMPAT_ORPHAN_FILE;
  const bool default_seed = p.incompat & EXT4_FEATURE_INCOMPAT_CSUM_SEED;
  std::string all;
  for (const auto& f : req.features) all += (all.empty() ? "" : ",") + f;
  if (!all.empty()) FSIO_TRY_CTX(edit_features(all, p.compat, p.incompat, p.ro_compat), "-O");
  if (default_orphan && !(p.compat & EXT3_FEATURE_COMPAT_HAS_JOURNAL)) p.compat &= ~EXT4_FEATURE_COMPAT_ORPHAN_FILE;
  if (default_seed && !(p.ro_compat & EXT4_FEATURE_RO_COMPAT_METADATA_CSUM))
    p.incompat &= ~EXT4_FEATURE_INCOMPAT_CSUM_SEED;
  return {};
}

// The block size from -b, else the profile (-1: the page size), at least
// the logical sector; SIZE counted in 1 KiB blocks is rescaled.
fsio::Status Prs::block_size() {
  const std::uint32_t lsector = t.logical_sector;
  if (!req.block_size) {
    long use = FSIO_TRY(profile_int("blocksize", 4096));
    if (use == -1) use = long(t.page_size);
    if (use < 1024 || use > 65536 || (use & (use - 1)))
      return mkfs_usage(conf.name() + ": blocksize " + std::to_string(use) +
                        " is not a power of two from 1024 to 65536");
    if (lsector && use < long(lsector)) use = lsector;
    p.block_size = std::uint32_t(use);
    blocks /= p.block_size / 1024;
  } else {
    p.block_size = *req.block_size;
    if (p.block_size < lsector)
      return mkfs_usage("-b " + std::to_string(p.block_size) + ": smaller than the device's " +
                        std::to_string(lsector) + "-byte sectors");
  }
  p.log_block_size = std::uint32_t(int_log2(p.block_size >> 10));
  if (blocks > kMkfsMax32 && (p.incompat & EXT4_FEATURE_INCOMPAT_64BIT)) p.compat &= ~EXT2_FEATURE_COMPAT_RESIZE_INODE;
  if (blocks > kMkfsMax32 && !(p.incompat & EXT4_FEATURE_INCOMPAT_64BIT) &&
      FSIO_TRY(profile_bool("auto_64-bit_support", false))) {
    p.incompat |= EXT4_FEATURE_INCOMPAT_64BIT;
    p.compat &= ~EXT2_FEATURE_COMPAT_RESIZE_INODE;
  }
  if (blocks > kMkfsMax32 && !(p.incompat & EXT4_FEATURE_INCOMPAT_64BIT))
    return mkfs_usage(std::to_string(blocks) + " blocks of " + std::to_string(p.block_size) +
                      " bytes cannot be counted in 32 bits; 64bit is off");
  if (blocks > (1ull << (p.log_block_size + 10 + 3 + 32)) - 1)
    return mkfs_usage(std::to_string(blocks) + " blocks are too many for " + std::to_string(p.block_size) +
                      "-byte blocks");
  if (p.block_size > t.page_size && !req.force)
    return mkfs_usage(std::to_string(p.block_size) + "-byte blocks are larger than the page size (" +
                      std::to_string(t.page_size) + "); the kernel could not mount it (-F makes it anyway)");
  p.blocks_count = blocks;
  return {};
}

}  // namespace ext
