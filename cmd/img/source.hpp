// What to save from a source: its filesystem, detected or named, and the
// map of the blocks that filesystem uses (the header of the image to be).
//
//   FAT:  the reserved area, every FAT copy and the root directory (all of
//         [0, data start)), then every cluster whose FAT entry is not free
//         and not marked bad, from a streaming pass over the FAT.
//   ext:  every block the block bitmaps mark in use; for a BLOCK_UNINIT
//         group (its bitmap never written) what the kernel would mark when
//         it initialises it: the superblock copy, descriptors and reserve,
//         and any group's bitmaps and inode table inside it. Blocks before
//         s_first_data_block (the boot block with 1 KiB blocks) too.
//   raw:  every block (all-zero blocks are elided later, frame by frame).
//
// Mapping a source opens it read-only and refuses a source that something
// has mounted read-write, or uses as swap: its blocks would change while
// they are copied. A read-only mount is fine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmd/img/format.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/result.hpp"

namespace img {

enum class FsChoice { automatic, fat, ext, raw };
// "auto", "fat" (also "vfat"), "ext4" (also "ext", "ext2", "ext3"), "raw".
fsio::Result<FsChoice> parse_fs_choice(const std::string& text);

struct SourceOptions {
  FsChoice fs = FsChoice::automatic;
  std::uint64_t offset = 0;  // bytes into the source where the filesystem starts
  fsio::EngineKind engine = fsio::EngineKind::automatic;
};

struct Source {
  Header header;     // fs_type, sizes, block size and the map; save fills in the rest
  std::string path;  // the source as named
  std::uint64_t offset = 0;
  std::string detail;              // "FAT32, 4 KiB clusters", "ext4, 16 groups of 128 MiB, 4 KiB blocks"
  std::vector<std::string> notes;  // "mounted read-only on /mnt", ...
};

fsio::Result<Source> map_source(const std::string& path, const SourceOptions& options);

// The parts, for tests. Each fills header and detail from an open source;
// the device window already starts at the filesystem.
fsio::Result<Source> map_fat(const std::string& path, const SourceOptions& options);
fsio::Result<Source> map_ext(const std::string& path, const SourceOptions& options);
fsio::Result<Source> map_raw(const std::string& path, const SourceOptions& options);

// The block size of a FAT image: the largest power of two up to 4 KiB that
// divides both the data area's start and the cluster size, so every
// region is whole blocks.
std::uint32_t fat_block_size(std::uint64_t data_start_bytes, std::uint64_t cluster_bytes);

}  // namespace img
