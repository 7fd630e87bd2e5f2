// Boot sector, FSInfo, FAT head and label entry for a fresh volume.
#include "fat/boot.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "fat/boot_sector.hpp"
#include "fat/fsinfo.hpp"
#include "fat/fat_entry.hpp"
#include "libfsio/endian.hpp"

namespace fat {

namespace {

// Our boot stub, 16-bit real mode, loaded at 0000:7C00. It prints the
// message that follows it through the BIOS teletype service, waits for a key
// and asks the BIOS to try the next boot device:
//
//   00  31 C0      xor  ax, ax
//   02  8E D8      mov  ds, ax
//   04  BE lo hi   mov  si, 0x7C00 + <message>   ; patched per FAT width
//   07  FC         cld
//   08  AC         next: lodsb
//   09  84 C0      test al, al
//   0B  74 09      jz   key
//   0D  B4 0E      mov  ah, 0x0E                 ; teletype output
//   0F  BB 07 00   mov  bx, 0x0007               ; page 0, light grey
//   12  CD 10      int  0x10
//   14  EB F2      jmp  next
//   16  31 C0      key: xor ax, ax
//   18  CD 16      int  0x16                     ; wait for a key
//   1A  CD 19      int  0x19                     ; reboot / next device
//   1C  F4         halt: hlt
//   1D  EB FD      jmp  halt
constexpr std::uint8_t kStub[] = {0x31, 0xC0, 0x8E, 0xD8, 0xBE, 0x00, 0x00, 0xFC, 0xAC, 0x84, 0xC0,
                                  0x74, 0x09, 0xB4, 0x0E, 0xBB, 0x07, 0x00, 0xCD, 0x10, 0xEB, 0xF2,
                                  0x31, 0xC0, 0xCD, 0x16, 0xCD, 0x19, 0xF4, 0xEB, 0xFD};
constexpr std::size_t kStubMessageOperand = 5;
constexpr std::string_view kMessage =
    "This is not a bootable disk. Please remove it, or boot from another\r\n"
    "device, and press any key to try again.\r\n";

// Stub, then the message (cut to `capacity`), then its NUL.
void put_boot_code(std::uint8_t* code, std::size_t code_offset, std::string_view message, std::size_t capacity) {
  static_assert(sizeof kStub + kMessage.size() + 1 <= kBootCodeSize32 - 70,
                "stub and message must leave the MBR area (bytes 440-509) free");
  std::memcpy(code, kStub, sizeof kStub);
  const std::size_t msg = 0x7C00 + code_offset + sizeof kStub;
  code[kStubMessageOperand] = std::uint8_t(msg & 0xFF);
  code[kStubMessageOperand + 1] = std::uint8_t(msg >> 8);
  const std::size_t n = std::min(message.size(), capacity);
  std::memcpy(code + sizeof kStub, message.data(), n);
}

std::size_t code_offset(const Geometry& g) { return g.type == FatType::fat32 ? 0x5A : 0x3E; }

// Atari: 68000 "bra.s" over the BPB (60 1C), then mkfs.fat's filler
// "mkdosf" and a 24-bit serial number where the OEM name would be.
void put_atari_head(std::uint8_t* sector, std::uint32_t volume_id) {
  constexpr std::uint8_t head[8] = {0x60, 0x1C, 'm', 'k', 'd', 'o', 's', 'f'};
  std::memcpy(sector, head, sizeof head);
  sector[8] = std::uint8_t(volume_id);
  sector[9] = std::uint8_t(volume_id >> 8);
  sector[10] = std::uint8_t(volume_id >> 16);
}

void put_extended(ExtendedBpb& ext, const Geometry& g, std::uint32_t volume_id,
                  const std::array<std::uint8_t, 11>& label) {
  ext.drive_number = g.drive_number;
  if (g.atari) return;  // GEMDOS has no extended BPB; mkfs.fat -A keeps the drive number only
  ext.boot_signature = kExtendedBootSignature;
  ext.volume_id = volume_id;
  std::memcpy(ext.volume_label, label.data(), 11);
  const char* type = g.type == FatType::fat12 ? "FAT12   " : g.type == FatType::fat16 ? "FAT16   " : "FAT32   ";
  std::memcpy(ext.fs_type, type, 8);
}

// mkfs.fat --mbr's partition type: LBA types once CHS cannot describe the
// volume, else the small CHS types by size.
std::uint8_t mbr_type(const Geometry& g) {
  const bool fat32 = g.type == FatType::fat32;
  const std::uint64_t n = g.total_sectors;
  if (g.heads > 254 || g.sectors_per_track > 63) return fat32 ? 0x0C : 0x0E;
  if (g.type == FatType::fat12 && n < 65536) return 0x01;
  if (g.type == FatType::fat16 && n < 65536) return 0x04;
  if (!fat32 && n < std::uint64_t(g.sectors_per_track) * g.heads * 1024) return 0x06;
  return fat32 ? 0x0C : 0x0E;
}

void put_mbr(std::uint8_t* sector, const Geometry& g, std::uint32_t disk_signature) {
  std::uint8_t* sig = sector + kMbrDiskSignatureOffset;
  std::memset(sig, 0, 512 - 2 - kMbrDiskSignatureOffset);
  fsio::store(std::as_writable_bytes(std::span(sig, 4)), fsio::le32(disk_signature));
  std::uint8_t* p = sector + kMbrPartitionTableOffset;
  const std::uint64_t n = g.total_sectors, spt = g.sectors_per_track, heads = g.heads;
  p[0] = 0x80;  // active
  p[1] = 0;
  p[2] = 1;
  p[3] = 0;  // CHS of sector 0: cylinder 0, head 0, sector 1
  p[4] = mbr_type(g);
  if (heads > 254 || spt > 63 || n >= spt * heads * 1024) {
    p[5] = 254;
    p[6] = 255;
    p[7] = 255;  // "beyond CHS" marker (1023, 254, 63)
  } else {
    const std::uint64_t cyl = n / (heads * spt);
    p[5] = std::uint8_t((n / spt) % heads);
    p[6] = std::uint8_t(((1 + n % spt) & 63) | ((cyl >> 8) * 64));
    p[7] = std::uint8_t(cyl & 255);
  }
  fsio::store(std::as_writable_bytes(std::span(p + 12, 4)), fsio::le32(std::uint32_t(n)));
}

template <class Boot>
void put_bpb(Boot& bs, const Geometry& g, std::uint8_t code_offset) {
  Bpb& b = bs.bpb;
  b.jump[0] = 0xEB;  // short jump over the BPB to the boot code, then NOP
  b.jump[1] = std::uint8_t(code_offset - 2);
  b.jump[2] = 0x90;
  std::memcpy(b.oem_name, kOemName, 8);
  b.bytes_per_sector = std::uint16_t(g.sector_size);
  b.sectors_per_cluster = std::uint8_t(g.sectors_per_cluster);
  b.reserved_sectors = std::uint16_t(g.reserved_sectors);
  b.num_fats = std::uint8_t(g.num_fats);
  b.root_entries = std::uint16_t(g.root_entries);
  // fatgen103 p.10: TotSec16 when the count fits in 16 bits, else TotSec32.
  b.total_sectors_16 = std::uint16_t(g.total_sectors < 65536 ? g.total_sectors : 0);
  b.total_sectors_32 = g.total_sectors < 65536 ? 0 : g.total_sectors;
  b.media = g.media;
  b.fat_size_16 = std::uint16_t(g.type == FatType::fat32 ? 0 : g.fat_sectors);
  b.sectors_per_track = std::uint16_t(g.sectors_per_track);
  b.num_heads = std::uint16_t(g.heads);
  b.hidden_sectors = g.hidden_sectors;
  bs.signature = kBootSignature;
}

}  // namespace

Sector512 build_boot_sector(const Geometry& g, std::uint32_t volume_id, const std::array<std::uint8_t, 11>& label,
                            const BootOptions& options) {
  Sector512 out{};
  const std::string_view message = options.message ? std::string_view(*options.message) : kMessage;
  const std::size_t capacity = boot_message_capacity(g);
  if (g.type == FatType::fat32) {
    BootSector32 bs{};
    put_bpb(bs, g, offsetof(BootSector32, boot_code));
    bs.fat32.fat_size_32 = g.fat_sectors;
    bs.fat32.root_cluster = g.root_cluster;
    bs.fat32.fs_info_sector = std::uint16_t(g.fsinfo_sector);
    bs.fat32.backup_boot_sector = std::uint16_t(g.backup_boot_sector);
    put_extended(bs.ext, g, volume_id, label);
    if (!g.atari) put_boot_code(bs.boot_code, offsetof(BootSector32, boot_code), message, capacity);
    fsio::store(std::span(out), bs);
  } else {
    BootSector16 bs{};
    put_bpb(bs, g, offsetof(BootSector16, boot_code));
    put_extended(bs.ext, g, volume_id, label);
    if (!g.atari) put_boot_code(bs.boot_code, offsetof(BootSector16, boot_code), message, capacity);
    fsio::store(std::span(out), bs);
  }
  auto* bytes = reinterpret_cast<std::uint8_t*>(out.data());
  if (g.atari) {
    put_atari_head(bytes, volume_id);
    bytes[510] = bytes[511] = 0;  // GEMDOS boot sectors carry a checksum, not 0x55AA
  }
  if (g.write_mbr) put_mbr(bytes, g, options.disk_signature.value_or(volume_id));
  return out;
}

ByteSpan boot_code_region(const Geometry& g) {
  if (g.atari) return {};
  return {code_offset(g), g.write_mbr ? kMbrDiskSignatureOffset : std::size_t(510)};
}

std::size_t boot_message_capacity(const Geometry& g) {
  const ByteSpan code = boot_code_region(g);
  return code.end - code.begin - sizeof kStub - 1;
}

std::string boot_message_from_text(std::string_view text) {
  std::string out;
  std::size_t column = 0;
  for (char c : text) {
    if (c == '\r' || c == '\0') continue;
    if (c == '\n') {
      if (column) out += '\r';
      out += '\n';
      column = 0;
    } else if (c == '\t') {
      do {
        out += ' ';
      } while (++column % 8);
    } else {
      out += c;
      ++column;
    }
  }
  return out;
}

Sector512 build_fsinfo(const Geometry& g, std::uint32_t bad_clusters) {
  Sector512 out{};
  // The root directory holds cluster 2; everything else is free but the bad.
  fsio::store(std::span(out), make_fsinfo(g.cluster_count - 1 - bad_clusters, 2));
  return out;
}

void fill_fat_head(const Geometry& g, std::span<std::byte> first_sector) {
  const std::uint32_t mask = entry_mask(g.type);
  set_entry(g.type, first_sector, 0, (0x0FFFFF00u | g.media) & mask);
  set_entry(g.type, first_sector, 1, end_of_chain(g.type));
  // mkfs.fat writes 0x0FFFFFF8 for the root's single cluster; any value >=
  // 0x0FFFFFF8 means end of chain.
  if (g.type == FatType::fat32) set_entry(g.type, first_sector, g.root_cluster, g.atari ? 0x0FFFFFFF : 0x0FFFFFF8);
}

DirEntry make_label_entry(const std::array<std::uint8_t, 11>& label, DosDateTime when) {
  DirEntry e{};
  std::memcpy(e.name, label.data(), 11);
  if (e.name[0] == kDirEntryFree) e.name[0] = kDirEntryKanji;  // 0xE5 would read as deleted
  e.attributes = attr::volume_id;
  // mkfs.fat leaves the label's DIR_CrtTimeTenth 0 whatever the second.
  set_times(e, {when.date, when.time, 0});
  return e;
}

}  // namespace fat
