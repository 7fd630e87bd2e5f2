// resolve_params (mkfs_params.hpp): PRS()'s steps in mke2fs's order, then
// the settings main() makes before ext2fs_initialize.
#include <strings.h>

#include <cmath>
#include <ctime>

#include "ext/layout.hpp"
#include "ext/mkfs_prs.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

// What ext/ writes (features.cpp's writing set) and mkext4 therefore makes.
constexpr std::uint32_t kMakeCompat = EXT3_FEATURE_COMPAT_HAS_JOURNAL | EXT2_FEATURE_COMPAT_EXT_ATTR |
                                      EXT2_FEATURE_COMPAT_RESIZE_INODE | EXT2_FEATURE_COMPAT_DIR_INDEX |
                                      EXT4_FEATURE_COMPAT_SPARSE_SUPER2 | EXT4_FEATURE_COMPAT_FAST_COMMIT |
                                      EXT4_FEATURE_COMPAT_STABLE_INODES | EXT4_FEATURE_COMPAT_ORPHAN_FILE;
constexpr std::uint32_t kMakeIncompat = EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_EXTENTS |
                                        EXT4_FEATURE_INCOMPAT_64BIT | EXT4_FEATURE_INCOMPAT_FLEX_BG |
                                        EXT4_FEATURE_INCOMPAT_CSUM_SEED;
constexpr std::uint32_t kMakeRoCompat = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE |
                                        EXT4_FEATURE_RO_COMPAT_HUGE_FILE | EXT4_FEATURE_RO_COMPAT_GDT_CSUM |
                                        EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |
                                        EXT4_FEATURE_RO_COMPAT_METADATA_CSUM;

}  // namespace

std::uint32_t default_journal_blocks(std::uint64_t n) {
  if (n < 2048) return 0;
  if (n < 32768) return 1024;
  if (n < 256 * 1024) return 4096;
  if (n < 512 * 1024) return 8192;
  if (n < 4096 * 1024) return 16384;
  if (n < 8192 * 1024) return 32768;
  if (n < 16384 * 1024) return 65536;
  if (n < 32768 * 1024) return 131072;
  return 262144;
}

// get_device_geometry: libblkid's minimum and optimal I/O sizes of a block
// device become the RAID stride and stripe width when they exceed a block.
void Prs::topology() {
  if (!t.is_block_device) return;
  const std::uint32_t psector = t.physical_sector ? t.physical_sector : t.logical_sector;
  std::uint32_t min_io = t.min_io, opt_io = t.opt_io;
  if (min_io == 0 && psector > p.block_size) min_io = psector;
  if (opt_io == 0 && min_io > 0) opt_io = min_io;
  if (opt_io == 0 && psector > p.block_size) opt_io = psector;
  if (min_io > p.block_size) p.raid_stride = min_io / p.block_size;
  if (opt_io > p.block_size) p.raid_stripe_width = opt_io / p.block_size;
}

fsio::Status Prs::supported() const {
  const std::uint32_t c = p.compat & ~kMakeCompat, i = p.incompat & ~kMakeIncompat, r = p.ro_compat & ~kMakeRoCompat;
  if (c | i | r)
    return make_error(Errc::unsupported,
                      "feature(s) mkext4 does not make (ext/ cannot write them): " + feature_names(c, i, r));
  if (!(p.incompat & EXT3_FEATURE_INCOMPAT_EXTENTS))
    return make_error(Errc::unsupported, "^extent: without extents this is ext2/ext3, which mkext4 does not make");
  return {};
}

// Inode size, flex_bg size, the inode count request and the reserve.
fsio::Status Prs::inodes() {
  const std::uint64_t bs = p.block_size;
  long inode_size = req.inode_size ? long(*req.inode_size) : FSIO_TRY(profile_int("inode_size", 0));
  long flex = req.flex_bg_size ? long(*req.flex_bg_size) : 0;
  if (!req.flex_bg_size && (p.incompat & EXT4_FEATURE_INCOMPAT_FLEX_BG)) {
    flex = FSIO_TRY(profile_int("flex_bg_size", 16));
    if (flex < 0) return mkfs_usage(conf.where("defaults", "", "flex_bg_size") + " is negative");
  }
  if (flex) {
    if (!(p.incompat & EXT4_FEATURE_INCOMPAT_FLEX_BG))
      return mkfs_usage("-G " + std::to_string(flex) + ": flex_bg is off, so no flex_bg size may be given");
    p.log_groups_per_flex = std::uint32_t(int_log2(std::uint64_t(flex)));
  }
  if (inode_size && (inode_size < 128 || inode_size > long(bs) || (inode_size & (inode_size - 1))))
    return mkfs_usage("-I " + std::to_string(inode_size) + ": invalid inode size (a power of two from 128 to " +
                      std::to_string(bs) + ")");
  p.inode_size = std::uint32_t(inode_size);
  if (inode_size == 128 && FSIO_TRY(profile_bool("warn_y2038_dates", true)))
    p.warnings.push_back("128-byte inodes cannot handle dates beyond 2038 and are deprecated");

  std::uint64_t num = req.inodes.value_or(0);
  if (num == 0) {
    const std::uint64_t n = blocks * bs / ratio;
    if (n > kMkfsMax32) {
      if (!(p.incompat & EXT4_FEATURE_INCOMPAT_64BIT))
        return mkfs_usage("too many inodes (" + std::to_string(n) + "); raise the inode ratio (-i)");
      num = kMkfsMax32;
    }
  } else if (num > kMkfsMax32) {
    return mkfs_usage("-N " + std::to_string(num) + ": too many inodes (fewer than 2^32)");
  }
  p.inodes_count = std::uint32_t(num ? num : blocks * bs / ratio);
  if (std::uint64_t(p.inodes_count) * std::uint64_t(inode_size ? inode_size : 128) >= blocks * bs)
    return mkfs_usage(std::to_string(p.inodes_count) + " inodes of " + std::to_string(inode_size ? inode_size : 128) +
                      " bytes do not fit " + std::to_string(blocks) + " blocks; raise -i or lower -N");
  p.r_blocks_count = std::uint64_t(p.reserved_ratio * double(blocks) / 100.0);
  if (p.compat & EXT4_FEATURE_COMPAT_SPARSE_SUPER2) {
    if (num_backups >= 1) p.backup_bgs[0] = 1;
    if (num_backups >= 2) p.backup_bgs[1] = ~0u;
  }
  return {};
}

// The UUID, the hash, the check schedule, the label, errors and the time:
// what main() sets between ext2fs_initialize and the first table.
fsio::Status Prs::identity(std::array<std::uint8_t, 16> (*random16)()) {
  auto v4 = [&] {
    auto u = random16();
    u[6] = std::uint8_t((u[6] & 0x0F) | 0x40);
    u[8] = std::uint8_t((u[8] & 0x3F) | 0x80);
    return u;
  };
  auto behaviour = [&](const std::string& e, const std::string& from) -> fsio::Status {
    if (e == "continue") p.errors = 1;
    else if (e == "remount-ro") p.errors = 2;
    else if (e == "panic") p.errors = 3;
    else return mkfs_usage(from + " '" + e + "': bad error behavior (continue, remount-ro or panic)");
    return {};
  };
  if (const auto e = FSIO_TRY(profile_string("errors"))) FSIO_TRY(behaviour(*e, "errors in " + conf.name()));
  if (req.errors) FSIO_TRY(behaviour(*req.errors, "-e"));
  if (!req.uuid || !strcasecmp(req.uuid->c_str(), "random")) {
    p.uuid = v4();
  } else if (!strcasecmp(req.uuid->c_str(), "null") || !strcasecmp(req.uuid->c_str(), "clear")) {
    p.uuid = {};
  } else if (!strcasecmp(req.uuid->c_str(), "time")) {
    return make_error(Errc::unsupported, "-U time: time-based UUIDs are not made by mkext4 (give one, or random)");
  } else {
    auto u = parse_uuid(*req.uuid);
    if (!u) return mkfs_usage("-U '" + *req.uuid + "': could not parse the UUID");
    p.uuid = *u;
  }
  const auto hash = FSIO_TRY(profile_string("hash_alg")).value_or("half_md4");
  if (!strcasecmp(hash.c_str(), "legacy")) p.hash_version = 0;
  else if (!strcasecmp(hash.c_str(), "tea")) p.hash_version = 2;
  else p.hash_version = 1;  // half_md4, and whatever e2p_string2hash does not know
  if (!hash_seed_given || p.hash_seed == std::array<std::uint8_t, 16>{}) p.hash_seed = v4();
  p.periodic_fsck = FSIO_TRY(profile_bool("enable_periodic_fsck", false));
  if (req.label) p.label = req.label->substr(0, 16);
  if (req.label && req.label->size() > 16) p.warnings.push_back("label too long; truncated to '" + p.label + "'");
  if (req.last_mounted) p.last_mounted = req.last_mounted->substr(0, 64);
  const std::int64_t now = req.time ? *req.time : std::int64_t(::time(nullptr));
  if (now < 0 || now > 0x7FFFFFFF)
    return mkfs_usage("time " + std::to_string(now) + ": mke2fs 1.47.0's 32-bit fields would store it as another date");
  p.time = std::uint32_t(now);
  return {};
}

// The profile's flags, the types' options and -E, and --offset (PRS's
// middle, between the topology and the inode count).
fsio::Status Prs::settings() {
  num_backups = unsigned(FSIO_TRY(profile_int("num_backup_sb", 2)));
  if (num_backups > 2) return mkfs_usage(conf.where("defaults", "", "num_backup_sb") + " must be 0, 1 or 2");
  p.lazy_itable_init = FSIO_TRY(profile_bool("lazy_itable_init", true));  // kernel >= 2.6.37
  p.discard = FSIO_TRY(profile_bool("discard", true));
  p.lazy_journal_init = FSIO_TRY(profile_bool("lazy_journal_init", false));
  if (const auto loc = FSIO_TRY(profile_string("journal_location")); loc && !loc->empty())
    return make_error(Errc::unsupported, "journal_location in " + conf.name() + ": not supported by mkext4");
  if (FSIO_TRY(profile_bool("packed_meta_blocks", false)))
    return make_error(Errc::unsupported, "packed_meta_blocks in " + conf.name() + ": not supported by mkext4");
  for (const auto& type : fs_types)
    if (auto o = conf.get("fs_types", type, "options"); o && !o->empty())
      FSIO_TRY(extended_options(*o, conf.where("fs_types", type, "options")));
  if (req.extended) FSIO_TRY(extended_options(*req.extended, "-E"));
  if (req.offset && p.offset && req.offset != p.offset)
    return mkfs_usage("--offset and -E offset= differ (" + std::to_string(req.offset) + " and " +
                      std::to_string(p.offset) + ")");
  if (req.offset) p.offset = req.offset;
  if (!p.explicit_size && p.offset > 0) {
    const std::uint64_t skip = p.offset / p.block_size;
    if (skip >= blocks) return mkfs_usage("--offset " + std::to_string(p.offset) + " is beyond the end of the target");
    blocks -= skip;
    p.blocks_count = blocks;
    p.warnings.push_back("offset without an explicit SIZE: making a filesystem of " + std::to_string(blocks) +
                         " blocks");
  }
  return {};
}

fsio::Result<MkfsParams> resolve_params(const MkfsRequest& req, const MkfsTarget& target, const Mke2fsConf& conf,
                                        std::array<std::uint8_t, 16> (*random16)()) {
  Prs s(req, target, conf);
  auto& p = s.p;
  for (const auto& j : req.journal) FSIO_TRY(s.journal_options(j));
  if (req.journal_flag) {
    if (!s.journal_size) s.journal_size = -1;
    if (!s.journal_fc_size) s.journal_fc_size = -1;
  }
  FSIO_TRY(s.sizes());
  FSIO_TRY(s.types());
  FSIO_TRY(s.features());
  FSIO_TRY(s.block_size());
  if (s.journal_size) p.compat |= EXT3_FEATURE_COMPAT_HAS_JOURNAL;
  p.reserved_ratio = req.reserved_percent ? *req.reserved_percent : FSIO_TRY(s.profile_double("reserved_ratio", 5.0));
  if (!(p.reserved_ratio >= 0 && p.reserved_ratio <= 50))
    return mkfs_usage("reserved blocks percent " + std::to_string(p.reserved_ratio) + ": expected 0 to 50");
  if ((p.incompat & EXT4_FEATURE_INCOMPAT_64BIT) && !(p.incompat & EXT3_FEATURE_INCOMPAT_EXTENTS))
    return mkfs_usage("64bit needs the extent feature");
  if (p.ro_compat & EXT4_FEATURE_RO_COMPAT_BIGALLOC) return s.supported().error();
  s.ratio = req.inode_ratio ? long(*req.inode_ratio) : FSIO_TRY(s.profile_int("inode_ratio", 8192));
  if (!req.inode_ratio && s.ratio < long(p.block_size)) s.ratio = long(p.block_size);
  if (s.ratio < 1024 || s.ratio > 65536l * 1024)
    return mkfs_usage("inode ratio " + std::to_string(s.ratio) + ": expected 1024 to " + std::to_string(65536l * 1024));
  s.topology();
  FSIO_TRY(s.settings());
  if (p.ro_compat & EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) p.ro_compat &= ~EXT4_FEATURE_RO_COMPAT_GDT_CSUM;
  if ((p.compat & EXT2_FEATURE_COMPAT_RESIZE_INODE) && !(p.ro_compat & EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER))
    return mkfs_usage("resize_inode needs sparse_super (reserved online resize blocks on a non-sparse filesystem)");
  FSIO_TRY(s.inodes());
  if ((p.incompat & EXT4_FEATURE_INCOMPAT_CSUM_SEED) && !(p.ro_compat & EXT4_FEATURE_RO_COMPAT_METADATA_CSUM))
    return mkfs_usage("the metadata_csum_seed feature requires the metadata_csum feature");
  FSIO_TRY(s.supported());
  if ((p.compat & EXT4_FEATURE_COMPAT_ORPHAN_FILE) && !(p.compat & EXT3_FEATURE_COMPAT_HAS_JOURNAL))
    return mkfs_usage("orphan_file needs a journal (has_journal)");
  if (s.orphan_size) {
    p.orphan_file_blocks = std::uint32_t(
        std::min<std::uint64_t>(FSIO_TRY(s.size_in_blocks(*s.orphan_size, "orphan_file_size")), kMkfsMax32));
    if (!p.orphan_file_blocks) return mkfs_usage("-E orphan_file_size=" + *s.orphan_size + ": invalid size");
  }
  p.journal_mib = s.journal_size;
  p.journal_fc_kib = s.journal_fc_size > 0 ? std::uint32_t(s.journal_fc_size) : 0;
  FSIO_TRY(s.identity(random16));
  return p;
}

}  // namespace ext
