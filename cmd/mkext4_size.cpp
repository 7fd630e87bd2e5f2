// SIZE auto for mkext4 -C -d (see mkext4_size.hpp).
#include "cmd/mkext4_size.hpp"

#include <algorithm>
#include <array>

#include "ext/tree_fill.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

constexpr std::uint64_t kMaxExtentLen = 32768;  // blocks in an initialised extent

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// A directory of `bytes` of entries: one block, or an htree of leaves at
// worst half full (a split moves half a leaf), its root and index nodes.
std::uint64_t dir_blocks(std::uint64_t bytes, std::uint32_t bs) {
  const std::uint64_t leaf = bs - 12;  // the checksum tail
  if (bytes <= leaf) return 1;
  const std::uint64_t leaves = 2 * div_up(bytes, leaf);
  return 1 + leaves + div_up(leaves, (bs - 16) / 8);
}

// The extent tree blocks of a file whose data takes `spans`: every span
// split at 32768 blocks and at each group it crosses (a group's metadata).
std::uint64_t extent_tree_blocks(const std::vector<ext::BlockSpan>& spans, std::uint32_t bs, std::uint32_t bpg) {
  std::uint64_t extents = 0;
  for (const ext::BlockSpan& s : spans) extents += div_up(s.count, kMaxExtentLen) + s.count / bpg + 2;
  if (extents <= 4) return 0;  // in the inode
  const std::uint64_t per_block = (bs - 12) / 12;
  std::uint64_t blocks = 0;
  for (std::uint64_t level = div_up(extents, per_block);; level = div_up(level, per_block)) {
    blocks += level;  // leaves, then each index level until the inode's four entries hold the top
    if (level <= 4) return blocks;
  }
}

std::array<std::uint8_t, 16> no_random() { return {}; }

}  // namespace

Result<Slack> parse_slack(const std::string& text) {
  Slack s;
  if (!text.empty() && text.back() == '%') {
    const std::string digits = text.substr(0, text.size() - 1);
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(digits) > 1000)
      return make_error(Errc::invalid_argument,
                        "--slack '" + text + "': expected a size (64M) or a percentage from 0% to 1000%");
    s.percent = unsigned(std::stoul(digits));
    return s;
  }
  auto bytes = parse_size(text);
  if (!bytes) return std::move(bytes).error().wrap("--slack");
  if (*bytes > (std::uint64_t(1) << 60))
    return make_error(Errc::invalid_argument, "--slack '" + text + "': more than an ext4 filesystem holds");
  s.bytes = *bytes;
  return s;
}

std::uint64_t tree_blocks_bound(const Tree& tree, std::uint32_t bs, std::uint32_t bpg) {
  std::uint64_t total = ext::count_tree(tree, bs).min_blocks;     // data, a block per directory, slow symlinks
  std::vector<std::uint64_t> entry_bytes(tree.nodes.size(), 24);  // "." and ".."
  std::vector<bool> seen(tree.contents.size(), false);
  if (!tree.nodes.empty() && !tree.nodes[0].xattrs.empty()) ++total;  // the root's xattr block
  for (std::size_t i = 1; i < tree.nodes.size(); ++i) {
    const TreeNode& n = tree.nodes[i];
    entry_bytes[n.parent] += 8 + (n.name.size() + 3) / 4 * 4;
    const bool first = n.kind != NodeKind::file || n.content == kNoContent || !seen[n.content];
    if (first && !n.xattrs.empty()) ++total;  // an xattr block per inode with xattrs, at most
    if (n.kind != NodeKind::file || n.content == kNoContent || seen[n.content]) continue;
    seen[n.content] = true;
    total += extent_tree_blocks(ext::data_blocks(tree.contents[n.content], bs), bs, bpg);
  }
  for (std::size_t i = 0; i < tree.nodes.size(); ++i)
    if (tree.nodes[i].kind == NodeKind::directory) total += dir_blocks(entry_bytes[i], bs) - 1;
  return total;
}

Result<ChosenSize> choose_size(const Tree& tree, ext::MkfsRequest req, const ext::MkfsTarget& target,
                               const ext::Mke2fsConf& conf, const Slack& slack) {
  const std::uint64_t inodes = ext::count_tree(tree, 1024).inodes;
  std::optional<Error> last_error;
  auto probe = [&](std::uint64_t mib) -> std::optional<ChosenSize> {
    req.size = std::to_string(mib) + "M";
    auto plan = ext::plan_mkfs(req, target, conf, no_random);
    if (!plan) {
      last_error = std::move(plan).error();
      return std::nullopt;
    }
    const ext::Layout& l = plan->layout.l;
    ChosenSize c{mib, tree_blocks_bound(tree, l.block_size, l.blocks_per_group), inodes};
    c.need_blocks += slack.percent ? div_up(c.need_blocks * slack.percent, 100) : div_up(slack.bytes, l.block_size);
    c.need_inodes += div_up(c.need_inodes * slack.percent, 100);
    if (c.need_inodes > plan->layout.free_inodes || c.need_blocks > plan->layout.free_blocks) return std::nullopt;
    return c;
  };
  // The usage types' sizes in MiB, as mke2fs.conf's defaults name them.
  const std::uint64_t edges[] = {1, 3, 512, 4u << 20, 16u << 20, std::uint64_t(1) << 30};
  for (std::size_t r = 0; r + 1 < std::size(edges); ++r) {
    std::uint64_t lo = edges[r], hi = edges[r + 1] - 1;
    auto top = probe(hi);
    if (!top) continue;
    while (lo < hi) {  // the smallest of [lo, hi] that fits; hi always does
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (auto c = probe(mid)) hi = mid, top = c;
      else lo = mid + 1;
    }
    return *top;
  }
  if (last_error && last_error->code != Errc::invalid_argument) return std::move(*last_error);
  return make_error(Errc::invalid_argument, tree.label + ": no ext4 filesystem holds the tree (" +
                                                format_count(inodes) + " inodes) and the slack");
}

}  // namespace fsio::cli
