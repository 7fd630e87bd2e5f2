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
    if (!support::have_tool(t)) return std::string(t) + " is not installed; the reader is judged by dosfstools and mtools";
  return {};
}

void mkfs(const std::string& path, std::uint64_t kib, const std::string& args) {
  const auto r = support::run("mkfs.fat -C " + args + " " + path + " " + std::to_string(kib));
  if (r.exit_code != 0) throw std::runtime_error("mkfs.fat " + args + " failed: " + r.output);
}

std::string mtools(const std::string& command, const std::string& path, const std::string& args) {
  const auto r = support::run("MTOOLS_SKIP_CHECK=1 MTOOLS_NO_VFAT=0 " + command + " -i " + path + " " + args);
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
  const std::regex run(R"(<(\d+)-(\d+)>)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), run); it != std::sregex_iterator(); ++it)
    for (std::uint32_t c = std::stoul((*it)[1]); c <= std::stoul((*it)[2]); ++c) clusters.push_back(c);
  return clusters;
}

fsio::Result<std::unique_ptr<OpenVolume>> open_volume(const std::string& path, bool write,
                                                      const VolumeOptions& options, fsio::EngineKind engine) {
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
