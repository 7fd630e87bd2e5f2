// ext read path: superblock and group descriptors (ext::Filesystem::open),
// then what extwb ls -l, stat, get and df do with every directory and file
// reachable from the root: inodes, extent trees and block maps, directory
// blocks, htree lookups of each name found, file data; and the write gate
// put/mkdir/rm run before they write (features, state, orphans, journal).
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>

#include "ext/fs.hpp"
#include "ext/inspect.hpp"
#include "tests/fuzz/mem_image.hpp"

namespace {

constexpr unsigned kMaxDepth = 8;
constexpr std::size_t kMaxVisits = 256;
constexpr std::uint64_t kMaxFileBytes = 1u << 20;

struct Walk {
  ext::Filesystem& fs;
  std::set<std::uint32_t> seen;
};

void get(ext::Filesystem& fs, const std::string& path) {
  auto ino = fs.lookup(path);
  if (!ino) return;
  auto inode = fs.read_inode(*ino);
  if (!inode) return;
  (void)fs.extents(*inode);
  std::uint64_t got = 0;
  (void)fs.read_file(
      *inode,
      [&](std::span<const std::byte> piece) -> fsio::Status {
        got += piece.size();
        if (got > kMaxFileBytes) return fsio::make_error(fsio::Errc::interrupted, "enough");
        return {};
      },
      256u << 10);
}

void ls(Walk& w, const std::string& path, unsigned depth) {
  auto entries = ext::list_dir(w.fs, path, true);
  if (!entries) return;
  for (const auto& e : *entries) {
    if (w.seen.size() >= kMaxVisits) return;
    const std::string child = (path == "/" ? "" : path) + "/" + e.name;
    (void)ext::stat_path(w.fs, child);
    if (!w.seen.insert(e.ino).second) continue;
    if (e.inode.type == "dir") {
      if (depth < kMaxDepth) ls(w, child, depth + 1);
    } else {
      get(w.fs, child);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  auto& image = fsio::fuzz::MemImage::load(in, fsio::fuzz::padded_size(size, fsio::fuzz::ext_declared_size(in)));
  ext::OpenOptions o;
  o.direct = false;
  o.engine = fsio::EngineKind::psync;
  auto fs = ext::Filesystem::open(image.path(), o);
  if (!fs) return 0;
  (void)ext::describe_fs(**fs);
  (void)(*fs)->write_gate();
  Walk w{**fs, {}};
  ls(w, "/", 0);
  (void)(*fs)->lookup("/lost+found/no/such/name");
  return 0;
}
