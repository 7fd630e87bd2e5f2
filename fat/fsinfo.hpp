// FAT32 FSInfo sector (BPB_FSInfo, normally sector 1; its backup follows the
// backup boot sector, normally sector 7). fatgen103 section 5.
//
// The free count and next-free hint are advisory: a reader may recompute
// them, and 0xFFFFFFFF means "unknown". fsck.fat -n reports a wrong free count
// (exit 1) but not an uninitialised one, and ignores the next-free hint.
#pragma once

#include <cstddef>
#include <cstdint>

#include "libfsio/endian.hpp"

namespace fat {

using fsio::le32;

inline constexpr std::uint32_t kFsInfoLeadSignature = 0x41615252;    // "RRaA"
inline constexpr std::uint32_t kFsInfoStructSignature = 0x61417272;  // "rrAa"
inline constexpr std::uint32_t kFsInfoTrailSignature = 0xAA550000;   // 00 00 55 AA
inline constexpr std::uint32_t kFsInfoUnknown = 0xFFFFFFFF;

struct FsInfo {
  le32 lead_signature;          // FSI_LeadSig    0x000: 0x41615252
  std::uint8_t reserved1[480];  // FSI_Reserved1  0x004
  le32 struct_signature;        // FSI_StrucSig   0x1E4: 0x61417272
  le32 free_count;              // FSI_Free_Count 0x1E8: free clusters, or 0xFFFFFFFF
  le32 next_free;               // FSI_Nxt_Free   0x1EC: allocation hint, or 0xFFFFFFFF
  std::uint8_t reserved2[12];   // FSI_Reserved2  0x1F0
  le32 trail_signature;         // FSI_TrailSig   0x1FC: 0xAA550000
};
static_assert(sizeof(FsInfo) == 512 && alignof(FsInfo) == 1);
static_assert(offsetof(FsInfo, struct_signature) == 0x1E4);
static_assert(offsetof(FsInfo, free_count) == 0x1E8);
static_assert(offsetof(FsInfo, next_free) == 0x1EC);
static_assert(offsetof(FsInfo, trail_signature) == 0x1FC);

// A freshly formatted FSInfo: every cluster but the root's is free, and the
// search starts at cluster 2 (what mkfs.fat writes).
inline FsInfo make_fsinfo(std::uint32_t free_count, std::uint32_t next_free) {
  FsInfo info{};
  info.lead_signature = kFsInfoLeadSignature;
  info.struct_signature = kFsInfoStructSignature;
  info.free_count = free_count;
  info.next_free = next_free;
  info.trail_signature = kFsInfoTrailSignature;
  return info;
}

}  // namespace fat
