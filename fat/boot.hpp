// Building the sectors a fresh FAT volume starts with: boot sector (with a
// boot stub that only prints a message, and optionally a one-partition MBR),
// FSInfo, the first FAT sector and the volume-label directory entry.
// Pure functions: the same inputs give the same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "fat/dirent.hpp"
#include "fat/geometry.hpp"

namespace fat {

using Sector512 = std::array<std::byte, 512>;

// BS_OEMName. We write "mkfs.fat" so that our images are byte-identical to
// mkfs.fat's outside the boot code: blkid, the kernel and fsck.fat ignore
// the field, and tools that special-case OEM names then treat both alike.
inline constexpr char kOemName[9] = "mkfs.fat";

// What the boot sector carries besides the layout.
struct BootOptions {
  // The message our boot stub prints (bytes as they are stored, see
  // boot_message_from_text); nullopt: ours ("This is not a bootable disk.
  // ..."). Cut to boot_message_capacity() bytes.
  std::optional<std::string> message;
  // The MBR disk signature with g.write_mbr; nullopt: the volume id.
  std::optional<std::uint32_t> disk_signature;
};

// The boot sector: BPB from the geometry, extended BPB with volume id and
// label (kNoName for none), our boot stub and message, 0x55AA. With
// g.write_mbr, bytes 440-509 hold a disk signature and one partition
// spanning the whole filesystem, as mkfs.fat --mbr writes them.
//
// g.atari (mkfs.fat -A): the GEMDOS boot sector instead: a 68000 branch
// (60 1C) and "mkdosf" over the jump and OEM name, the low 24 bits of the
// volume id as the serial number at bytes 8-10, no extended boot signature,
// label, type, boot code or 0x55AA (the extended BPB keeps only the drive
// number), as mkfs.fat 4.2 writes it.
Sector512 build_boot_sector(const Geometry& g, std::uint32_t volume_id, const std::array<std::uint8_t, 11>& label,
                            const BootOptions& options = {});

// The boot-code region of the boot sector (its backup has the same), which
// holds our stub and message and so differs from mkfs.fat's: [begin, end)
// byte offsets in the sector. 0x3E (FAT12/16) or 0x5A (FAT32) to 510, or to
// 440 with g.write_mbr (the disk signature and partition table are format,
// not code). Empty for the Atari variant, which has no boot code.
struct ByteSpan {
  std::size_t begin = 0, end = 0;
};
ByteSpan boot_code_region(const Geometry& g);

// The longest message that fits after our stub, leaving its terminating NUL
// (and with g.write_mbr the MBR area) free.
std::size_t boot_message_capacity(const Geometry& g);

// mkfs.fat -m's rules for a message file's text: carriage returns and NUL
// bytes dropped, a line feed after text becomes CR LF (a bare one stays
// LF), tabs expanded to the next multiple of 8 columns.
std::string boot_message_from_text(std::string_view text);

// FAT32 FSInfo after format: all clusters free but the root's and the
// `bad_clusters` marked bad, next free 2.
Sector512 build_fsinfo(const Geometry& g, std::uint32_t bad_clusters = 0);

// The first sector_size bytes of each FAT copy: FAT[0] = media byte with all
// other bits set, FAT[1] = end of chain (clean, no I/O errors), and on FAT32
// FAT[2] = end of chain for the root directory (0x0FFFFFF8 as mkfs.fat
// writes it; 0x0FFFFFFF in the Atari variant). fatgen103 p.18.
void fill_fat_head(const Geometry& g, std::span<std::byte> first_sector);

// The root-directory entry carrying the label (attr::volume_id).
DirEntry make_label_entry(const std::array<std::uint8_t, 11>& label, DosDateTime when);

}  // namespace fat
