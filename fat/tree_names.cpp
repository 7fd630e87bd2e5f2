// plan_names, tree_needs, check_tree_fits (see tree_fill.hpp): what a tree
// takes on FAT, and what FAT refuses of it, before any geometry is chosen.
#include <unordered_map>
#include <unordered_set>

#include "fat/tree_fill.hpp"
#include "libfsio/size.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;
using fsio::NodeKind;

constexpr std::uint32_t kMaxDirSlots = 65536;  // fatgen103 p.26, Linux FAT_MAX_DIR_SIZE

struct ShortNameHash {
  std::size_t operator()(const ShortName& s) const {
    return std::hash<std::string_view>()(std::string_view(reinterpret_cast<const char*>(s.data()), s.size()));
  }
};

// A directory being named: its short names and case-folded long names.
struct DirNames {
  std::unordered_set<ShortName, ShortNameHash> taken;
  std::unordered_map<std::u16string, std::uint32_t> folded;  // -> node
};

// A name FAT cannot hold is the tree's problem, not the command line's: exit 1, not 2.
fsio::Error unsupported(fsio::Error e, const std::string& where) {
  e.code = fsio::Errc::unsupported;
  return std::move(e).wrap(where);
}

std::u16string fold(std::u16string_view name) {
  std::u16string out(name);
  for (char16_t& c : out)
    if (c < 0xD800 || c > 0xDFFF) c = char16_t(unicode_upper(c));
  return out;
}

// Devices, FIFOs and sockets are skipped or refused; links never reach here.
fsio::Status refuse_or_skip_special(const fsio::Tree& tree, std::uint32_t i, const TreeOptions& o, TreeNames& out) {
  const fsio::TreeNode& n = tree.nodes[i];
  const std::string what = tree.where(i) + ": a " + fsio::node_kind_name(n.kind);
  if (n.kind == NodeKind::symlink)
    return make_error(Errc::unsupported, what + "; FAT cannot hold one (the source should have followed it)");
  if (!o.skip_special)
    return make_error(Errc::unsupported,
                      what + "; FAT holds only files and directories (--skip-special leaves it out)");
  out.skipped.push_back(what);
  return {};
}

fsio::Status check_file_size(const fsio::Tree& tree, std::uint32_t i) {
  if (tree.nodes[i].size > kMaxFileSize)
    return make_error(Errc::unsupported, tree.where(i) + ": " + std::to_string(tree.nodes[i].size) +
                                             " bytes; a FAT file holds at most 4 GiB - 1 (4294967295 bytes)");
  return {};
}

// Pass 1 over a directory's names: those whose 8.3 name is exact (no tail)
// claim it first, so that a tail made for an earlier name can never take
// it (Linux would then refuse the exact name with EEXIST).
fsio::Status claim_exact(const fsio::Tree& tree, const std::vector<std::uint32_t>& kids, const TreeOptions& o,
                         DirNames& dir, TreeNames& out) {
  for (std::uint32_t i : kids) {
    const std::string& name = tree.nodes[i].name;
    auto utf16 = utf8_to_utf16(name);
    if (!utf16) return unsupported(std::move(utf16).error(), tree.where(i));
    const std::u16string wide = std::move(*utf16);
    const auto [it, fresh] = dir.folded.emplace(fold(wide), i);
    if (!fresh)
      return make_error(Errc::unsupported, tree.where(it->second) + " and " + tree.where(i) +
                                               ": the same name when case is ignored; FAT cannot hold both");
    auto slots = make_name(
        name, [](const ShortName&) { return false; }, o.style, o.codepage);
    if (!slots) return unsupported(std::move(slots).error(), tree.where(i));
    if (slots->tail) continue;
    out.nodes[i].name = std::move(*slots);
    dir.taken.insert(out.nodes[i].name.short_name);
  }
  return {};
}

// Pass 2: the others, in order, with tails that avoid every claimed name.
fsio::Status name_the_rest(const fsio::Tree& tree, const std::vector<std::uint32_t>& kids, const TreeOptions& o,
                           DirNames& dir, TreeNames& out) {
  for (std::uint32_t i : kids) {
    if (out.nodes[i].name.short_name[0] != 0) continue;  // claimed in pass 1
    auto slots = make_name(
        tree.nodes[i].name, [&](const ShortName& s) { return dir.taken.count(s) > 0; }, o.style, o.codepage);
    if (!slots) return unsupported(std::move(slots).error(), tree.where(i));
    out.nodes[i].name = std::move(*slots);
    dir.taken.insert(out.nodes[i].name.short_name);
  }
  return {};
}

// The kept children of every directory, in tree order; specials skipped or refused.
fsio::Result<std::vector<std::vector<std::uint32_t>>> kept_children(const fsio::Tree& tree, const TreeOptions& o,
                                                                    TreeNames& out) {
  std::vector<std::vector<std::uint32_t>> kids(tree.nodes.size());
  for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
    const fsio::TreeNode& n = tree.nodes[i];
    if (n.parent >= i || (n.parent != 0 && !out.nodes[n.parent].kept))
      return make_error(Errc::invalid_argument, tree.where(i) + ": listed before its directory");
    if (n.kind != NodeKind::file && n.kind != NodeKind::directory) {
      FSIO_TRY(refuse_or_skip_special(tree, i, o, out));
      continue;
    }
    if (n.kind == NodeKind::file) {
      FSIO_TRY(check_file_size(tree, i));
      ++out.files;
      out.bytes += n.size;
    } else {
      ++out.directories;
    }
    out.nodes[i].kept = true;
    kids[n.parent].push_back(i);
  }
  return kids;
}

}  // namespace

fsio::Result<TreeNames> plan_names(const fsio::Tree& tree, const TreeOptions& o, bool label) {
  if (tree.nodes.empty() || tree.nodes[0].kind != NodeKind::directory)
    return make_error(Errc::unsupported, tree.label + ": the tree's root is not a directory");
  TreeNames out;
  out.label = label;
  out.nodes.resize(tree.nodes.size());
  const auto kids = FSIO_TRY(kept_children(tree, o, out));
  for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {
    if (d != 0 && !(out.nodes[d].kept && tree.nodes[d].kind == NodeKind::directory)) continue;
    DirNames names;
    FSIO_TRY(claim_exact(tree, kids[d], o, names, out));
    FSIO_TRY(name_the_rest(tree, kids[d], o, names, out));
    std::uint64_t slots = d == 0 ? (label ? 1 : 0) : 2;
    for (std::uint32_t i : kids[d]) slots += out.nodes[i].name.slot_count();
    if (slots > kMaxDirSlots)
      return make_error(Errc::unsupported, tree.where(d) + ": its entries need " + std::to_string(slots) +
                                               " slots of 32 bytes; a FAT directory holds at most 65536");
    out.nodes[d].slots = std::uint32_t(slots);
  }
  return out;
}

TreeNeeds tree_needs(const fsio::Tree& tree, const TreeNames& names, const TreeOptions& o, FatType type,
                     std::uint64_t cb) {
  TreeNeeds needs;
  auto clusters = [cb](std::uint64_t bytes) { return (bytes + cb - 1) / cb; };
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    const PlannedNode& p = names.nodes[i];
    if (i == 0) {
      needs.root_slots = p.slots;
      if (type == FatType::fat32) needs.clusters += std::max<std::uint64_t>(1, clusters(p.slots * 32ull));
    } else if (p.kept && tree.nodes[i].kind == NodeKind::directory) {
      needs.clusters += std::max<std::uint64_t>(1, clusters(p.slots * 32ull));
    } else if (p.kept) {
      needs.clusters += clusters(tree.nodes[i].size);
    }
  }
  needs.slack = clusters(o.slack_bytes) + (needs.clusters * o.slack_percent + 99) / 100;
  return needs;
}

fsio::Status check_tree_fits(const Layout& l, const TreeNeeds& needs, std::uint64_t bad) {
  if (l.type != FatType::fat32 && needs.root_slots > l.root_entries)
    return make_error(Errc::busy, "the root directory needs " + fsio::format_count(needs.root_slots) + " slots; " +
                                      fat_type_name(l.type) + "'s holds " + fsio::format_count(l.root_entries) +
                                      " (-r sets more; FAT32's root grows)");
  const std::uint64_t have = l.cluster_count > bad ? l.cluster_count - bad : 0;
  if (needs.clusters + needs.slack <= have) return {};
  std::string msg =
      "the tree needs " + fsio::format_count(needs.clusters) + " clusters of " + fsio::format_size(l.cluster_bytes());
  if (needs.slack) msg += " and " + fsio::format_count(needs.slack) + " free (--slack)";
  msg += "; the volume has " + fsio::format_count(have);
  if (bad) msg += " (" + fsio::format_count(bad) + " more are bad)";
  return make_error(Errc::busy, msg);
}

}  // namespace fat
