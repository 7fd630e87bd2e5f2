#include "tests/fat/peer_images.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <stdexcept>

namespace fat::test {

namespace support = fsio::test;

std::string missing_peer_tools() {
  for (const char* t : {"mkfs.fat", "fsck.fat", "mcopy", "mmd", "mdir", "mshowfat", "mdel"})
    if (!support::have_tool(t))
      return std::string(t) + " is not installed; the reader is judged by dosfstools and mtools";
  return {};
}

void mkfs(const std::string& path, std::uint64_t kib, const std::string& args) {
  const auto r = support::run("mkfs.fat -C " + args + " " + path + " " + std::to_string(kib));
  if (r.exit_code != 0) throw std::runtime_error("mkfs.fat " + args + " failed: " + r.output);
}

std::string mtools(const std::string& command, const std::string& path, const std::string& args) {
  // UTF-8 names, and DOS times in UTC so tests can state them.
  const auto r = support::run("MTOOLS_SKIP_CHECK=1 LC_ALL=C.UTF-8 TZ=UTC " + command + " -i " + path + " " + args);
  if (r.exit_code != 0) throw std::runtime_error(command + " -i " + path + " " + args + " failed: " + r.output);
  return r.output;
}

std::map<std::string, std::uint64_t> fsck_geometry(const std::string& path) {
  const auto r = support::run("fsck.fat -nv " + path);
  std::map<std::string, std::uint64_t> g;
  g["exit"] = std::uint64_t(r.exit_code);
  const std::pair<const char*, const char*> patterns[] = {
      {R"((\d+) bytes per logical sector)", "sector_size"},
      {R"((\d+) bytes per cluster)", "cluster_bytes"},
      {R"((\d+) reserved sectors?)", "reserved_sectors"},
      {R"(First FAT starts at byte (\d+))", "fat_start_byte"},
      {R"((\d+) FATs?, \d+ bit entries)", "num_fats"},
      {R"(FATs?, (\d+) bit entries)", "fat_bits"},
      {R"((\d+) bytes per FAT)", "fat_bytes"},
      {R"(Root directory starts at byte (\d+))", "root_start_byte"},
      {R"((\d+) root directory entries)", "root_entries"},
      {R"(Root directory start at cluster (\d+))", "root_cluster"},
      {R"(Data area starts at byte (\d+))", "data_start_byte"},
      {R"((\d+) data clusters)", "clusters"},
      {R"((\d+) sectors/track)", "sectors_per_track"},
      {R"(sectors/track, (\d+) heads)", "heads"},
      {R"((\d+) hidden sectors)", "hidden_sectors"},
      {R"((\d+) sectors total)", "total_sectors"},
  };
  for (const auto& [re, key] : patterns) {
    std::smatch m;
    if (std::regex_search(r.output, m, std::regex(re))) g[key] = std::stoull(m[1]);
  }
  return g;
}

std::vector<std::uint32_t> mshowfat_clusters(const std::string& image, const std::string& file) {
  const std::string out = mtools("mshowfat", image, "'::" + file + "'");
  std::vector<std::uint32_t> clusters;
  const std::regex run(R"(<(\d+)(?:-(\d+))?>)");  // "<4>" or "<2-5>"
  for (auto it = std::sregex_iterator(out.begin(), out.end(), run); it != std::sregex_iterator(); ++it) {
    const std::uint32_t a = std::stoul((*it)[1]), b = (*it)[2].matched ? std::stoul((*it)[2]) : a;
    for (std::uint32_t c = a; c <= b; ++c) clusters.push_back(c);
  }
  return clusters;
}

fsio::Result<std::unique_ptr<OpenVolume>> open_volume(const std::string& path, bool write, const VolumeOptions& options,
                                                      fsio::EngineKind engine) {
  fsio::OpenOptions oo;
  oo.write = write;
  oo.direct = false;
  oo.allow_mounted = true;
  auto dev = FSIO_TRY(fsio::Device::open(path, oo));
  auto holder = std::unique_ptr<OpenVolume>(new OpenVolume{std::move(dev), std::nullopt, nullptr});
  fsio::QueueOptions qo;
  qo.engine = engine;
  holder->queue.emplace(FSIO_TRY(fsio::IoQueue::create(holder->device, qo)));
  holder->volume = std::make_unique<Volume>(FSIO_TRY(Volume::open(*holder->queue, options)));
  return holder;
}

void patch(const std::string& path, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) throw std::runtime_error("open " + path);
  const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), off_t(offset));
  ::close(fd);
  if (n != ssize_t(bytes.size())) throw std::runtime_error("pwrite " + path);
}

}  // namespace fat::test

namespace fat::test {

namespace {

void write_source(const std::string& path, std::uint64_t size, unsigned seed) {
  std::string bytes(size, '\0');
  for (std::uint64_t j = 0; j < size; ++j) bytes[j] = char((seed * 131 + j * 7 + j / 509) & 0xFF);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("create " + path);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  const auto r = support::run("TZ=UTC touch -d '2019-05-06 07:08:10' '" + path + "'");
  if (r.exit_code != 0) throw std::runtime_error("touch " + path + ": " + r.output);
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::map<std::string, std::string> populate(const std::string& image, const std::string& src,
                                            std::uint64_t cluster_bytes, unsigned many) {
  std::map<std::string, std::string> out;
  unsigned seed = 0;
  auto file = [&](const std::string& dir, const std::string& name, std::uint64_t size) {
    const std::string s = src + "/" + std::to_string(++seed);
    support::run("mkdir -p " + quote(s));
    write_source(s + "/" + name, size, seed);
    mtools("mcopy -m", image, quote(s + "/" + name) + " " + quote("::" + dir + "/"));
    out[dir + "/" + name] = s + "/" + name;
  };
  auto dir = [&](const std::string& path) {
    mtools("mmd", image, quote("::" + path));
    out[path] = "";
  };
  const std::uint64_t cb = cluster_bytes;
  // First: mtools 4.0.32 cannot grow a directory by two clusters for one
  // name ("No directory slots"), which 21 slots need in a 512-byte cluster.
  file("", std::string(200, 'L') + std::string(55, 'n'), cb);
  dir("/Sub Dir");
  dir("/Sub Dir/Deeper");
  dir("/UPPER");
  file("", "README.TXT", 1);
  file("", "lower.txt", 511);
  file("", "a long name.txt", cb + 1);
  file("", "exactly13char", 3 * cb + 17);
  file("", "Twenty-six characters long", 0);
  file("",
       "Gr\xC3\xBC\xC3\x9F"
       "e.txt",
       512);
  file("/Sub Dir", "inner file.bin", 100 * 1024);
  file("/Sub Dir/Deeper", "deep.dat", 2 * cb);
  file("/UPPER", "MIXED case.Txt", 513);
  // Fragment the free space: fill, punch holes, write across them.
  for (int i = 1; i <= 8; ++i) file("", "frag" + std::to_string(i), 3 * cb);
  for (int i : {2, 4, 6}) {
    mtools("mdel", image, quote("::/frag" + std::to_string(i)));
    out.erase("/frag" + std::to_string(i));
  }
  // On FAT32 mtools allocates after FSInfo's next-free hint, past the holes:
  // point the hint back at cluster 2 so the next file fills them.
  auto g = fsck_geometry(image);
  if (g["fat_bits"] == 32) {
    const auto boot = support::read_bytes(image, 0x30, 2);
    const std::uint64_t fsinfo = std::to_integer<unsigned>(boot[0]) | std::to_integer<unsigned>(boot[1]) << 8;
    patch(image, fsinfo * g["sector_size"] + 0x1EC, {2, 0, 0, 0});
  }
  file("", "fragmented.bin", 10 * cb + 5);
  if (many) {
    dir("/many");
    const std::string s = src + "/many";
    support::run("mkdir -p " + quote(s));
    std::string args;
    for (unsigned i = 0; i < many; ++i) {
      const std::string name = "file number " + std::to_string(i) + ".dat";
      write_source(s + "/" + name, i % 7 * 100, 1000 + i);
      args += quote(s + "/" + name) + " ";
      out["/many/" + name] = s + "/" + name;
    }
    mtools("mcopy -m", image, args + "::/many/");
  }
  return out;
}

}  // namespace fat::test
