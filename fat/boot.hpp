// Building the sectors a fresh FAT volume starts with: boot sector (with a
// boot stub that only prints a message, and optionally a one-partition MBR),
// FSInfo, the first FAT sector and the volume-label directory entry.
// Pure functions: the same inputs give the same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "fat/dirent.hpp"
#include "fat/geometry.hpp"

namespace fat {

using Sector512 = std::array<std::byte, 512>;

// BS_OEMName. We write "mkfs.fat" so that our images are byte-identical to
// mkfs.fat's outside the boot code: blkid, the kernel and fsck.fat ignore
// the field, and tools that special-case OEM names then treat both alike.
inline constexpr char kOemName[9] = "mkfs.fat";

// The boot sector: BPB from the geometry, extended BPB with volume id and
// label (kNoName for none), our boot stub and message, 0x55AA. With
// g.write_mbr, bytes 440-509 hold a disk signature (the volume id) and one
// partition spanning the whole filesystem, as mkfs.fat --mbr writes them.
Sector512 build_boot_sector(const Geometry& g, std::uint32_t volume_id,
                            const std::array<std::uint8_t, 11>& label);

// FAT32 FSInfo after format: all clusters free but the root's, next free 2.
Sector512 build_fsinfo(const Geometry& g);

// The first sector_size bytes of each FAT copy: FAT[0] = media byte with all
// other bits set, FAT[1] = end of chain (clean, no I/O errors), and on FAT32
// FAT[2] = end of chain for the root directory. fatgen103 p.18.
void fill_fat_head(const Geometry& g, std::span<std::byte> first_sector);

// The root-directory entry carrying the label (attr::volume_id).
DirEntry make_label_entry(const std::array<std::uint8_t, 11>& label, DosDateTime when);

}  // namespace fat
