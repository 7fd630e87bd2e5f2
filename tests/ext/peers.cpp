#include "tests/ext/peers.hpp"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "ext/extent_build.hpp"

namespace ext::peers {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::uint64_t number(const std::string& s) { return std::stoull(s, nullptr, 0); }

// "4248-32767, 32770, 40000-40010" (dumpe2fs's list of free blocks or inodes).
std::vector<Range> parse_ranges(const std::string& list) {
  std::vector<Range> out;
  static const std::regex item(R"((\d+)(?:-(\d+))?)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), item); it != std::sregex_iterator(); ++it) {
    const std::uint64_t first = number((*it)[1]);
    out.push_back(Range{first, (*it)[2].matched ? number((*it)[2]) : first});
  }
  return out;
}

}  // namespace

std::string missing_peers() {
  for (const char* t : {"mke2fs", "debugfs", "dumpe2fs", "e2fsck"})
    if (!test::have_tool(t)) return std::string(t) + " is not installed: the writer is judged by e2fsprogs";
  return "";
}

void mkfs(const std::string& img, const std::string& args, const std::string& size, const std::string& src) {
  const std::string from = src.empty() ? "" : " -d '" + src + "'";
  const auto r = test::run("mke2fs -q -F " + args + from + " '" + img + "' " + size);
  if (r.exit_code != 0) throw std::runtime_error("mke2fs " + args + " failed: " + r.output);
}

std::string debugfs(const std::string& img, const std::string& cmd, bool write) {
  const auto r = test::run(std::string("debugfs") + (write ? " -w" : "") + " -R '" + cmd + "' '" + img + "'");
  if (r.exit_code != 0) throw std::runtime_error("debugfs -R '" + cmd + "' failed: " + r.output);
  std::string out;
  for (const auto& line : lines_of(r.output)) {
    if (line.rfind("debugfs ", 0) == 0) continue;  // the version banner
    out += line + "\n";
  }
  // debugfs reports a failed command as "CMD: why" or "PATH: why" and exits 0
  // ("htree: Not a hash-indexed directory", "/d: File not found by ext2_lookup").
  std::istringstream words(cmd);
  std::string verb, path;
  words >> verb >> path;
  for (const auto& who : {verb, path})
    if (!who.empty() && out.rfind(who + ": ", 0) == 0) throw std::runtime_error("debugfs -R '" + cmd + "': " + out);
  return out;
}

test::RunResult fsck(const std::string& img) { return test::run("e2fsck -fn '" + img + "'"); }

std::unique_ptr<Filesystem> open_rw(const std::string& img) {
  OpenOptions o;
  o.write = true;
  auto fs = Filesystem::open(img, o);
  if (!fs) throw std::runtime_error("open " + img + " for writing: " + fs.error().message());
  return std::move(*fs);
}

std::vector<Group> dumpe2fs_groups(const std::string& img) {
  const auto r = test::run("dumpe2fs '" + img + "'");
  if (r.exit_code != 0) throw std::runtime_error("dumpe2fs failed: " + r.output);
  static const std::regex head(R"(^Group (\d+): \(Blocks (\d+)-(\d+)\)[^\[]*(\[.*\])?)");
  static const std::regex counts(
      R"(^\s+(\d+) free blocks, (\d+) free inodes, (\d+) directories(?:, (\d+) unused inodes)?)");
  std::vector<Group> out;
  for (const auto& line : lines_of(r.output)) {
    std::smatch m;
    if (std::regex_search(line, m, head)) {
      if (number(m[1]) != out.size()) throw std::runtime_error("dumpe2fs: groups out of order at: " + line);
      out.push_back(Group{number(m[2]), number(m[3]), m[4].matched ? std::string(m[4]) : "", 0, 0, 0, 0, {}, {}});
    } else if (out.empty()) {
      continue;
    } else if (std::regex_search(line, m, counts)) {
      out.back().free_blocks = number(m[1]);
      out.back().free_inodes = number(m[2]);
      out.back().dirs = number(m[3]);
      if (m[4].matched) out.back().unused_inodes = number(m[4]);
    } else if (line.find("  Free blocks: ") == 0) {
      out.back().free_block_ranges = parse_ranges(line.substr(15));
    } else if (line.find("  Free inodes: ") == 0) {
      out.back().free_inode_ranges = parse_ranges(line.substr(15));
    }
  }
  if (out.empty()) throw std::runtime_error("dumpe2fs printed no groups: " + r.output);
  return out;
}

std::map<std::string, std::string> dumpe2fs_header(const std::string& img) {
  const auto r = test::run("dumpe2fs -h '" + img + "'");
  if (r.exit_code != 0) throw std::runtime_error("dumpe2fs -h failed: " + r.output);
  std::map<std::string, std::string> out;
  for (const auto& line : lines_of(r.output)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = line.find_first_not_of(' ', colon + 1);
    out[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return out;
}

std::uint64_t header_number(const std::map<std::string, std::string>& h, const std::string& field) {
  const auto it = h.find(field);
  if (it == h.end()) throw std::runtime_error("dumpe2fs -h has no '" + field + "'");
  return number(it->second);
}

std::vector<ExRow> debugfs_ex(const std::string& img, const std::string& path) {
  // " 1/ 1   2/  5    84 -   167 33000 - 33083     84 Uninit": level/max, entry/entries,
  // logical range, physical range (one number for an index row or a one-block extent), length.
  static const std::regex row(R"(^\s*(\d+)/\s*(\d+)\s+(\d+)/\s*(\d+)\s+)"              // levels, entries
                              R"((\d+)(?:\s*-\s*(\d+))?\s+(\d+)(?:\s*-\s*(\d+))?\s+)"  // logical, physical
                              R"((\d+)\s*(Uninit)?\s*$)");                             // length, flags
  std::vector<ExRow> out;
  for (const auto& line : lines_of(debugfs(img, "ex " + path))) {
    std::smatch m;
    if (line.rfind("Level", 0) == 0 || line.empty()) continue;
    if (!std::regex_match(line, m, row)) throw std::runtime_error("debugfs ex: unexpected line: " + line);
    ExRow x;
    x.level = unsigned(number(m[1]));
    x.max_level = unsigned(number(m[2]));
    x.entry = unsigned(number(m[3]));
    x.entries = unsigned(number(m[4]));
    x.logical_first = number(m[5]);
    x.logical_last = m[6].matched ? number(m[6]) : x.logical_first;
    x.physical_first = number(m[7]);
    x.physical_last = m[8].matched ? number(m[8]) : x.physical_first;
    x.length = number(m[9]);
    x.uninit = m[10].matched;
    out.push_back(x);
  }
  return out;
}

Stat debugfs_stat(const std::string& img, const std::string& path) {
  const std::string out = debugfs(img, "stat " + path);
  Stat s;
  std::smatch m;
  static const std::regex flags(R"(Flags: (0x[0-9a-fA-F]+))"), size(R"(Size: (\d+))"), blocks(R"(Blockcount: (\d+))"),
      links(R"(Links: (\d+))");
  if (!std::regex_search(out, m, flags)) throw std::runtime_error("debugfs stat: no Flags in: " + out);
  s.flags = std::uint32_t(number(m[1]));
  if (!std::regex_search(out, m, size)) throw std::runtime_error("debugfs stat: no Size in: " + out);
  s.size = number(m[1]);
  if (!std::regex_search(out, m, blocks)) throw std::runtime_error("debugfs stat: no Blockcount in: " + out);
  s.blockcount = number(m[1]);
  if (!std::regex_search(out, m, links)) throw std::runtime_error("debugfs stat: no Links in: " + out);
  s.links = std::uint32_t(number(m[1]));
  return s;
}

namespace {

// A cursor over debugfs's htree dump.
struct HtreeParser {
  std::vector<std::string> lines;
  std::size_t at = 0;
  Htree out;

  const std::string& line() const {
    if (at >= lines.size()) throw std::runtime_error("debugfs htree: the dump ends early");
    return lines[at];
  }
  std::uint64_t field(const std::string& prefix) {
    const std::string& l = line();
    if (l.rfind(prefix, 0) != 0) throw std::runtime_error("debugfs htree: expected '" + prefix + "', got: " + l);
    ++at;
    return number(l.substr(prefix.size()));
  }
  // "Entry #3: Hash 0x2f912d46, block 2" (the first listing may add " (**)").
  std::pair<std::uint32_t, std::uint32_t> entry() {
    static const std::regex e(R"(^Entry #\d+: Hash 0x([0-9a-f]{8})(?: \(\*\*\))?, block (\d+)$)");
    std::smatch m;
    if (!std::regex_match(line(), m, e)) throw std::runtime_error("debugfs htree: expected an entry, got: " + line());
    ++at;
    return {std::uint32_t(number("0x" + std::string(m[1]))), std::uint32_t(number(m[2]))};
  }
  void leaf(std::uint32_t block, std::uint32_t lo, std::uint64_t hi, bool hi_continued) {
    HtreeLeaf f{block, lo, std::uint32_t(hi), hi_continued, {}};
    if (hi > 0xFFFFFFFFu) f.hi = 0;  // open above: 0 stands for 2^32
    const std::string want = "Reading directory block " + std::to_string(block) + ",";
    if (line().rfind(want, 0) != 0) throw std::runtime_error("debugfs htree: expected '" + want + "', got: " + line());
    ++at;
    static const std::regex name(R"((\d+) 0x([0-9a-f]{8})-[0-9a-f]{8} \(\d+\) (\S+))");
    while (at < lines.size() && !lines[at].empty() && lines[at].rfind("Entry #", 0) != 0 &&
           lines[at].rfind("---", 0) != 0) {
      const std::string& l = lines[at++];
      for (auto it = std::sregex_iterator(l.begin(), l.end(), name); it != std::sregex_iterator(); ++it)
        f.names.emplace_back(std::uint32_t(number("0x" + std::string((*it)[2]))), (*it)[3]);
    }
    out.leaves.push_back(std::move(f));
  }
  // A node's dump: counts, its entries, then each child in turn.
  void node(unsigned levels_below, std::uint32_t lo, std::uint64_t hi, bool hi_continued) {
    HtreeNode n;
    n.count = unsigned(field("Number of entries (count): "));
    n.limit = unsigned(field("Number of entries (limit): "));
    if (line().rfind("Checksum: ", 0) == 0) ++at;
    for (unsigned i = 0; i < n.count; ++i) n.entries.push_back(entry());
    out.nodes.push_back(n);
    if (line().empty()) ++at;
    for (unsigned i = 0; i < n.count; ++i) {
      const auto [hash, block] = entry();
      if (block != n.entries[i].second) throw std::runtime_error("debugfs htree: entries listed twice differently");
      const std::uint32_t child_lo = i == 0 ? lo : (n.entries[i].first & ~1u);
      const std::uint64_t child_hi = i + 1 < n.count ? (n.entries[i + 1].first & ~1u) : hi;
      const bool child_cont = i + 1 < n.count ? (n.entries[i + 1].first & 1) : hi_continued;
      if (levels_below > 0) {
        node(levels_below - 1, child_lo, child_hi, child_cont);
      } else {
        leaf(block, child_lo, child_hi, child_cont);
      }
    }
    if (at < lines.size() && lines[at].rfind("---", 0) == 0) ++at;
  }
};

}  // namespace

Htree debugfs_htree(const std::string& img, const std::string& dir) {
  HtreeParser p;
  p.lines = lines_of(debugfs(img, "htree " + dir));
  while (p.at < p.lines.size() && p.lines[p.at].rfind("Number of entries", 0) != 0) {
    std::smatch m;
    static const std::regex version(R"(Hash Version: (\d+))"), levels(R"(Indirect levels: (\d+))");
    if (std::regex_search(p.lines[p.at], m, version)) p.out.hash_version = unsigned(number(m[1]));
    if (std::regex_search(p.lines[p.at], m, levels)) p.out.indirect_levels = unsigned(number(m[1]));
    ++p.at;
  }
  p.node(p.out.indirect_levels, 0, std::uint64_t(1) << 32, false);
  return p.out;
}

std::string htree_misplaced(const Htree& h) {
  for (const auto& f : h.leaves) {
    const std::uint64_t hi = f.hi == 0 ? std::uint64_t(1) << 32 : f.hi;
    for (const auto& [hash, name] : f.names) {
      const bool below = hash < f.lo;
      const bool above = hash > hi || (hash == hi && !f.hi_continued);
      if (below || above) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "'%s' (hash 0x%08x) in block %u, whose range is 0x%08x..0x%" PRIx64 "%s",
                      name.c_str(), hash, f.block, f.lo, hi, f.hi_continued ? " (continued)" : "");
        return buf;
      }
    }
  }
  return "";
}

std::vector<std::uint32_t> debugfs_hashes(const std::string& img, const std::vector<std::string>& names) {
  const auto h = dumpe2fs_header(img);
  const std::string seed = h.at("Directory Hash Seed"), alg = h.at("Default directory hash");
  test::TempDir dir;
  {
    std::ofstream cmds(dir / "cmds");
    for (const auto& n : names) cmds << "dx_hash -s " << seed << " -h " << alg << " " << n << "\n";
  }
  const auto r = test::run("debugfs -f '" + (dir / "cmds") + "' '" + img + "'");
  if (r.exit_code != 0) throw std::runtime_error("debugfs dx_hash failed: " + r.output);
  std::map<std::string, std::uint32_t> got;
  static const std::regex line(R"(Hash of (\S+) is 0x([0-9a-f]+))");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
    got[(*it)[1]] = std::uint32_t(number("0x" + std::string((*it)[2])));
  std::vector<std::uint32_t> out;
  for (const auto& n : names) {
    if (!got.count(n)) throw std::runtime_error("debugfs dx_hash gave no hash for " + n + ": " + r.output);
    out.push_back(got[n]);
  }
  return out;
}

fsio::Result<std::vector<std::uint64_t>> adopt(Filesystem& fs, Transaction& tx, const std::string& path,
                                               const std::vector<Extent>& extents, std::uint64_t size) {
  const Layout& l = fs.layout();
  Inode inode = FSIO_TRY(fs.read_inode(FSIO_TRY(fs.lookup(path))));
  std::uint64_t data = 0, goal = l.first_data_block;
  for (const Extent& e : extents) {
    data += e.len;
    goal = e.physical + e.len;
  }
  auto tree = FSIO_TRY(build_extent_tree(fs, tx.alloc(), inode, extents, goal));
  FSIO_TRY(set_inode_blocks(inode, data + tree.size(), l));
  auto f = inode.fields();
  f.i_size_lo = std::uint32_t(size);
  f.i_size_high = std::uint32_t(size >> 32);
  inode.set_fields(f);
  set_inode_times(inode, tx.now());
  FSIO_TRY(fs.write_inode(inode));
  return tree;
}

std::string debugfs_dump(const std::string& img, const std::string& path, const test::TempDir& dir) {
  const std::string out = dir / "dumped";
  debugfs(img, "dump " + path + " " + out);
  std::string data = test::read_all(out);
  std::remove(out.c_str());
  return data;
}

void WriterTest::SetUp() {
  if (const auto why = missing_peers(); !why.empty()) GTEST_SKIP() << why;
  std::filesystem::create_directories(dir_ / "src");
  test::make_file(dir_ / "src/f", 0);
}

void WriterTest::make(std::uint32_t block_size, const std::string& size, const std::string& extra) {
  img_ = dir_ / "fs.img";
  bs_ = block_size;
  mkfs(img_, "-t ext4 -b " + std::to_string(block_size) + " " + extra, size, dir_ / "src");
  groups_ = dumpe2fs_groups(img_);
}

void WriterTest::take(Transaction& tx, std::uint64_t first, std::uint32_t len) {
  auto run = tx.alloc().alloc_blocks(first, len);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->start, first);
  ASSERT_EQ(run->len, len);
}

void WriterTest::expect_clean() {
  const auto r = fsck(img_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace ext::peers
