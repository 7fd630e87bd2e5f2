// FAT images for the reader's tests, made and described by the peer tools:
// mkfs.fat makes them, mtools fills them, fsck.fat -v and mshowfat say what
// they hold. An OpenVolume keeps a Device, an IoQueue and a Volume together
// (the Volume points at the queue, so the three live and die as one).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fat/volume.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"
#include "tests/support/support.hpp"

namespace fat::test {

using fsio::test::RunResult;

// Skips the calling test (GTEST_SKIP in the caller) when this is non-empty.
std::string missing_peer_tools();

// `mkfs.fat -C <args> <path> <kib>`; throws with the output on failure.
void mkfs(const std::string& path, std::uint64_t kib, const std::string& args);
// Runs an mtools command on an image (`mcopy -i IMG ...`): "-i <path>" goes
// after the command name; LC_ALL=C.UTF-8 and TZ=UTC. Throws with the output
// on failure.
std::string mtools(const std::string& command, const std::string& path, const std::string& args);

// fsck.fat -nv's "Boot sector contents" as numbers: sector_size,
// cluster_bytes, reserved_sectors, fat_start_byte, num_fats, fat_bits,
// fat_bytes, root_start_byte / root_entries (FAT12/16) or root_cluster
// (FAT32), data_start_byte, clusters, sectors_per_track, heads,
// hidden_sectors, total_sectors. Also "exit" (fsck.fat's exit code).
std::map<std::string, std::uint64_t> fsck_geometry(const std::string& path);

// mshowfat's clusters of a file, in chain order ("<2-5><9-9>" -> 2,3,4,5,9).
std::vector<std::uint32_t> mshowfat_clusters(const std::string& image, const std::string& file);

struct OpenVolume {
  fsio::Device device;
  std::optional<fsio::IoQueue> queue;
  std::unique_ptr<Volume> volume;
  Volume* operator->() { return volume.get(); }
  Volume& operator*() { return *volume; }
};
// Opens an image buffered (read-write when `write`) and reads it as a
// Volume; the Result carries Volume::open's error. Tests that open
// thousands of times pick the psync engine: an io_uring per open costs more
// than the parse.
fsio::Result<std::unique_ptr<OpenVolume>> open_volume(const std::string& path, bool write = false,
                                                      const VolumeOptions& options = {},
                                                      fsio::EngineKind engine = fsio::EngineKind::automatic);

// Fills an image with mtools the way the reader's tests need it: nested
// directories with spaces in their names, 8.3 names in upper and lower case,
// long names of 13, 26 and 255 characters, non-ASCII names, files of 0 bytes
// to several clusters (mcopy -m, so every file's time is 2019-05-06
// 07:08:10), a directory of `many` files spanning several clusters, and a
// file written into the holes deleted files left (fragmented). The source
// files are made under `src`. Returns image path ("/Sub Dir/x.txt") ->
// source file, with "" for directories.
std::map<std::string, std::string> populate(const std::string& image, const std::string& src,
                                            std::uint64_t cluster_bytes, unsigned many = 150);

// Overwrites bytes of a file in place (pwrite); throws on failure.
void patch(const std::string& path, std::uint64_t offset, const std::vector<std::uint8_t>& bytes);

}  // namespace fat::test
