// mkext4 -C -d SRC TARGET [auto]: the size of a new image chosen for the
// tree. Each candidate size is planned by mke2fs's rules (plan_mkfs: the
// usage type, block size, inode ratio, journal the size gives), and fits
// when the plan's free inodes hold the tree's inodes and its free blocks an
// upper bound of the blocks the tree takes (tree_blocks_bound), plus the
// slack. Sizes are whole MiB. Within one usage type (floppy < 3 MiB,
// small < 512 MiB, default < 4 TiB, big < 16 TiB, huge) free space grows
// with the size, so the smallest size that fits is a threshold there,
// searched by bisection; across types it is not (512 MiB changes 1 KiB
// blocks to 4 KiB), so the types are tried from the smallest up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ext/mkfs.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::cli {

// --slack: bytes, or a percentage of what the tree takes (blocks and inodes).
struct Slack {
  std::uint64_t bytes = 0;
  unsigned percent = 0;
};
// "64M", "10%"; Errc::invalid_argument naming --slack.
Result<Slack> parse_slack(const std::string& text);

// An upper bound of the blocks the tree's copy takes in a filesystem of
// `block_size` and `blocks_per_group`: its data blocks, each directory's
// blocks with its htree leaves half full and its index blocks, each file's
// extent tree blocks counting a break at every group it crosses, slow
// symlinks' blocks, and an xattr block per inode with xattrs (as if none
// fitted its inode or were shared).
std::uint64_t tree_blocks_bound(const Tree& tree, std::uint32_t block_size, std::uint32_t blocks_per_group);

struct ChosenSize {
  std::uint64_t mib = 0;  // the filesystem's size
  std::uint64_t need_blocks = 0, need_inodes = 0;
};
// The smallest size in MiB whose plan holds the tree and slack; `req.size`
// is overwritten for each probe. Errc::invalid_argument when even the
// largest size cannot hold it.
Result<ChosenSize> choose_size(const Tree& tree, ext::MkfsRequest req, const ext::MkfsTarget& target,
                               const ext::Mke2fsConf& conf, const Slack& slack);

}  // namespace fsio::cli
