// -E (parse_extended_opts) and -J (parse_journal_opts) as mke2fs reads
// them; what mkext4 does not make is refused by name.
#include <unistd.h>

#include <cstdlib>

#include "ext/layout.hpp"
#include "ext/mkfs_prs.hpp"

namespace ext {

using fsio::Errc;
using fsio::make_error;

namespace {

// strtoul(arg, &p, 0) as mke2fs uses it for its flags (lazy_itable_init=1):
// anything that does not start with a number reads as 0.
bool flag_value(const KeyValue& kv) { return !kv.value || std::strtoul(kv.value->c_str(), nullptr, 0) != 0; }

}  // namespace

fsio::Status Prs::journal_options(const std::string& list) {
  for (const KeyValue& kv : split_options(list)) {
    auto need = [&]() -> fsio::Status {
      if (!kv.value) return mkfs_usage("-J " + kv.key + " needs a value (" + kv.key + "=...)");
      return {};
    };
    if (kv.key == "size") {
      FSIO_TRY(need());
      journal_size = std::int64_t(FSIO_TRY(option_number(kv, "-J", 0x7FFFFFFF / 1024)));
    } else if (kv.key == "fast_commit_size") {
      FSIO_TRY(need());
      journal_fc_size = std::int64_t(FSIO_TRY(option_number(kv, "-J", 0x7FFFFFFF / 1024)));
    } else if (kv.key == "device" || kv.key == "location" || kv.key == "v1_superblock") {
      return make_error(Errc::unsupported, "-J " + kv.key +
                                               ": not supported by mkext4 (an internal journal of the "
                                               "default shape only)");
    } else {
      return mkfs_usage("-J '" + kv.key + "': unknown journal option (size=MiB, fast_commit_size=KiB)");
    }
  }
  return {};
}

fsio::Status Prs::extended_options(const std::string& list, const std::string& from) {
  for (const KeyValue& kv : split_options(list)) {
    const std::string& k = kv.key;
    auto need = [&]() -> fsio::Status {
      if (!kv.value) return mkfs_usage(from + " " + k + " needs a value (" + k + "=...)");
      return {};
    };
    if (k.empty()) {
      continue;
    } else if (k == "hash_seed") {
      FSIO_TRY(need());
      auto seed = parse_uuid(*kv.value);
      if (!seed) return mkfs_usage(from + " hash_seed='" + *kv.value + "': not a UUID");
      p.hash_seed = *seed;
      hash_seed_given = true;
    } else if (k == "offset") {
      FSIO_TRY(need());
      p.offset = FSIO_TRY(option_number(kv, from, ~0ull));
    } else if (k == "num_backup_sb") {
      FSIO_TRY(need());
      num_backups = unsigned(FSIO_TRY(option_number(kv, from, 2)));
    } else if (k == "stride") {
      FSIO_TRY(need());
      p.raid_stride = std::uint32_t(FSIO_TRY(option_number(kv, from, 0xFFFF)));
    } else if (k == "stripe_width" || k == "stripe-width") {
      FSIO_TRY(need());
      p.raid_stripe_width = std::uint32_t(FSIO_TRY(option_number(kv, from, 0xFFFFFFFF)));
    } else if (k == "resize") {
      FSIO_TRY(need());
      FSIO_TRY(resize(*kv.value, from));
    } else if (k == "test_fs") {
      p.test_fs = true;
    } else if (k == "lazy_itable_init") {
      p.lazy_itable_init = flag_value(kv);
    } else if (k == "assume_storage_prezeroed") {
      p.assume_prezeroed = flag_value(kv);
    } else if (k == "lazy_journal_init") {
      p.lazy_journal_init = flag_value(kv);
    } else if (k == "root_owner") {
      FSIO_TRY(root_owner(kv, from));
    } else if (k == "discard") {
      p.discard = true;
    } else if (k == "nodiscard") {
      p.discard = false;
    } else if (k == "orphan_file_size") {
      FSIO_TRY(need());
      orphan_size = *kv.value;
    } else if (k == "no_copy_xattrs" || (k == "packed_meta_blocks" && kv.value && !flag_value(kv))) {
      continue;  // nothing to copy (no -d); packed_meta_blocks=0 is the default
    } else if (k == "packed_meta_blocks" || k == "desc_size" || k == "desc-size" || k == "mmp_update_interval" ||
               k == "quotatype" || k == "encoding" || k == "encoding_flags" || k == "android_sparse") {
      return make_error(Errc::unsupported, from + " " + k + ": not supported by mkext4");
    } else {
      return mkfs_usage(from + " '" + k + "': unknown extended option");
    }
  }
  return {};
}

// -E resize=N: the reserve for growing to N blocks, computed from the
// parameters as they stand (parse_extended_opts' own arithmetic).
fsio::Status Prs::resize(const std::string& text, const std::string& from) {
  const std::uint64_t resize = FSIO_TRY(size_in_blocks(text, "resize"));
  if (resize == 0) return mkfs_usage(from + " resize='" + text + "': invalid");
  if (resize <= blocks)
    return mkfs_usage(from + " resize=" + text + ": the maximum must be larger than the filesystem");
  const std::uint64_t bs = 1024u << p.log_block_size;
  const std::uint64_t bpg = bs * 8;
  const std::uint64_t gdpb = bs / ((p.incompat & EXT4_FEATURE_INCOMPAT_64BIT) ? 64 : 32);
  const std::uint64_t groups = std::uint32_t((blocks + bpg - 1) / bpg);
  const std::uint64_t desc_blocks = (groups + gdpb - 1) / gdpb;
  const std::uint64_t rsv_groups = (resize + bpg - 1) / bpg;
  std::int64_t rsv = std::int64_t((rsv_groups + gdpb - 1) / gdpb) - std::int64_t(desc_blocks);
  if (rsv > std::int64_t(bs / 4)) rsv = std::int64_t(bs / 4);
  if (rsv > 0) {
    p.compat |= EXT2_FEATURE_COMPAT_RESIZE_INODE;
    p.reserved_gdt_blocks = std::uint32_t(rsv);
  }
  return {};
}

fsio::Status Prs::root_owner(const KeyValue& kv, const std::string& from) {
  if (!kv.value) {
    p.root_uid = ::getuid();
    p.root_gid = ::getgid();
    return {};
  }
  const std::string& v = *kv.value;
  const std::size_t colon = v.find(':');
  auto bad = [&] { return mkfs_usage(from + " root_owner='" + v + "': expected UID:GID"); };
  if (colon == std::string::npos) return bad();
  KeyValue uid{"root_owner", v.substr(0, colon)}, gid{"root_owner", v.substr(colon + 1)};
  if (uid.value->empty() || gid.value->empty()) return bad();
  p.root_uid = std::uint32_t(FSIO_TRY(option_number(uid, from, 0xFFFFFFFF)));
  p.root_gid = std::uint32_t(FSIO_TRY(option_number(gid, from, 0xFFFFFFFF)));
  return {};
}

}  // namespace ext
