// The working state of resolve_params (mkfs_params.hpp), shared by the
// files that hold its steps: mkfs_params.cpp (sizes, usage types,
// features, block size), mkfs_extended.cpp (-E and -J), mkfs_prs.cpp
// (inodes, reserve, flex_bg, identity, the order of it all). Internal to ext/.
#pragma once

#include <string>
#include <vector>

#include "ext/mkfs_params.hpp"

namespace ext {

inline constexpr std::uint64_t kMkfsMax32 = 0xFFFFFFFFull;

inline fsio::Error mkfs_usage(std::string what) {
  return fsio::make_error(fsio::Errc::invalid_argument, std::move(what));
}

inline int int_log2(std::uint64_t v) {
  int l = 0;
  while (v >>= 1) ++l;
  return l;
}

struct Prs {
  Prs(const MkfsRequest& r, const MkfsTarget& target, const Mke2fsConf& c) : req(r), t(target), conf(c) {}
  const MkfsRequest& req;
  const MkfsTarget& t;
  const Mke2fsConf& conf;
  MkfsParams p;
  std::vector<std::string> fs_types;
  std::uint64_t blocks = 0;       // fs_blocks_count: in 1 KiB units until block_size() rescales it
  std::int64_t journal_size = 0;  // -J size= in MiB, -1 for the default (-j)
  std::int64_t journal_fc_size = 0;
  unsigned num_backups = 2;  // sparse_super2 backups (profile num_backup_sb, -E num_backup_sb=)
  bool hash_seed_given = false;
  long ratio = 0;                          // bytes per inode (-i, profile inode_ratio)
  std::optional<std::string> orphan_size;  // -E orphan_file_size=, read once the block size is final

  // get_string_from_profile / get_int_from_profile / ...: strings from the
  // last type that has the key, else [defaults]; numbers and booleans from
  // [defaults], overridden by each type in order.
  fsio::Result<std::optional<std::string>> profile_string(const std::string& key) const;
  fsio::Result<long> profile_int(const std::string& key, long def) const;
  fsio::Result<double> profile_double(const std::string& key, double def) const;
  fsio::Result<bool> profile_bool(const std::string& key, bool def) const;
  template <class T, class Read>
  fsio::Result<T> layered(const std::string& key, T def, Read read) const;

  fsio::Status sizes();
  fsio::Status types();
  fsio::Status features();
  fsio::Status block_size();
  fsio::Status journal_options(const std::string& list);
  fsio::Status extended_options(const std::string& list, const std::string& from);
  fsio::Status inodes();
  fsio::Status identity(std::array<std::uint8_t, 16> (*random16)());
  fsio::Status supported() const;
  void topology();
  fsio::Status settings();
  fsio::Status resize(const std::string& text, const std::string& from);
  fsio::Status root_owner(const KeyValue& kv, const std::string& from);
  // parse_num_blocks2 with the block size as it stands: `what` names the
  // value in messages ("SIZE", "resize", "orphan_file_size").
  fsio::Result<std::uint64_t> size_in_blocks(const std::string& text, const std::string& what) const;
};

}  // namespace ext
