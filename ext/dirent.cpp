// Directory block parsing and checksums.
#include "ext/dirent.hpp"

#include <cinttypes>
#include <cstdio>

#include "ext/crc.hpp"
#include "libfsio/size.hpp"

namespace ext {
namespace {

using fsio::Errc;
using fsio::make_error;

}  // namespace

std::uint32_t rec_len_from_disk(std::uint16_t stored, std::uint32_t block_size) {
  if (block_size >= 65536 && (stored == 65535 || stored == 0)) return 65536;
  return stored;
}

std::uint16_t rec_len_to_disk(std::uint32_t len, std::uint32_t block_size) {
  if (block_size >= 65536 && len == 65536) return 65535;
  return std::uint16_t(len);
}

std::uint32_t dir_leaf_checksum(std::span<const std::byte> block, std::uint32_t ino, std::uint32_t gen,
                                const Layout& l) {
  std::uint32_t c = crc32c_raw_le32(l.csum_seed, ino);
  c = crc32c_raw_le32(c, gen);
  return crc32c_raw(c, block.first(block.size() - kDirTailSize));
}

std::uint32_t dx_checksum(std::span<const std::byte> block, std::size_t count_offset, std::uint32_t ino,
                          std::uint32_t gen, const Layout& l) {
  const auto cl = fsio::load<DxCountLimit>(block, count_offset);
  const std::size_t tail = count_offset + std::size_t(cl.limit) * sizeof(DxEntry);
  const std::size_t size = count_offset + std::size_t(cl.count) * sizeof(DxEntry);
  const std::byte zero[4] = {};
  std::uint32_t c = crc32c_raw_le32(l.csum_seed, ino);
  c = crc32c_raw_le32(c, gen);
  c = crc32c_raw(c, block.first(size));
  c = crc32c_raw(c, block.subspan(tail, 4));  // dt_reserved
  return crc32c_raw(c, zero, 4);              // dt_checksum counted as zero
}

DirBlockKind classify_dir_block(std::span<const std::byte> block, std::uint32_t logical, bool indexed,
                                const Layout& l) {
  if (!indexed) return DirBlockKind::leaf;
  if (logical == 0) return DirBlockKind::dx_root;
  const auto h = fsio::load<Ext4DirEntryHead>(block);
  if (h.inode == 0 && rec_len_from_disk(h.rec_len, l.block_size) == l.block_size && h.name_len == 0)
    return DirBlockKind::dx_node;
  return DirBlockKind::leaf;
}

namespace {

// The dx_tail of a root or node block: limit, count and checksum.
fsio::Status check_dx_block(std::span<const std::byte> block, std::size_t count_offset, std::uint32_t ino,
                            std::uint32_t gen, const std::string& where, const Layout& l) {
  const auto cl = fsio::load<DxCountLimit>(block, count_offset);
  const std::size_t room = (block.size() - count_offset) / sizeof(DxEntry);
  const std::size_t want_limit = room - (l.metadata_csum() ? 1 : 0);
  if (cl.limit != want_limit)
    return make_error(Errc::corrupt, where + "dx limit " + std::to_string(cl.limit) + " (expected " +
                                         std::to_string(want_limit) + ")");
  if (cl.count == 0 || cl.count > cl.limit)
    return make_error(Errc::corrupt,
                      where + "dx count " + std::to_string(cl.count) + " (limit " + std::to_string(cl.limit) + ")");
  if (!l.metadata_csum()) return {};
  const std::size_t tail = count_offset + std::size_t(cl.limit) * sizeof(DxEntry);
  const std::uint32_t stored = fsio::load<DxTail>(block, tail).dt_checksum;
  const std::uint32_t want = dx_checksum(block, count_offset, ino, gen, l);
  if (stored != want)
    return make_error(Errc::corrupt, where + "dx_tail checksum " + fsio::format_hex(stored, true) +
                                         " does not match the contents (" + fsio::format_hex(want, true) + ")");
  return {};
}

fsio::Status check_leaf_tail(std::span<const std::byte> block, std::uint32_t ino, std::uint32_t gen,
                             const std::string& where, const Layout& l) {
  const auto t = fsio::load<Ext4DirEntryTail>(block, block.size() - kDirTailSize);
  if (t.det_reserved_zero1 != 0 || t.det_rec_len != kDirTailSize || t.det_reserved_zero2 != 0 ||
      t.det_reserved_ft != kDirTailFileType)
    return make_error(Errc::corrupt, where + "no checksum tail (metadata_csum needs one in every leaf block)");
  const std::uint32_t want = dir_leaf_checksum(block, ino, gen, l);
  if (t.det_checksum != want)
    return make_error(Errc::corrupt, where + "checksum " + fsio::format_hex(t.det_checksum, true) +
                                         " does not match the contents (" + fsio::format_hex(want, true) + ")");
  return {};
}

}  // namespace

fsio::Status for_each_dirent(std::span<const std::byte> block, std::uint32_t dir_ino, std::uint32_t dir_gen,
                             std::uint32_t logical, bool indexed, const Layout& l,
                             const std::function<fsio::Status(const DirEntry&)>& fn) {
  const std::string where =
      "ext directory inode " + std::to_string(dir_ino) + " block " + std::to_string(logical) + ": ";
  const auto kind = classify_dir_block(block, logical, indexed, l);
  std::size_t end = block.size();
  if (kind == DirBlockKind::dx_node) return check_dx_block(block, kDxNodeCountOffset, dir_ino, dir_gen, where, l);
  if (kind == DirBlockKind::dx_root) {
    const auto info = fsio::load<DxRootInfo>(block, kDxRootInfoOffset);
    if (info.info_length != 8)
      return make_error(Errc::corrupt,
                        where + "dx_root info_length " + std::to_string(info.info_length) + " (expected 8)");
    FSIO_TRY(check_dx_block(block, kDxRootCountOffset, dir_ino, dir_gen, where, l));
  } else if (l.metadata_csum()) {
    FSIO_TRY(check_leaf_tail(block, dir_ino, dir_gen, where, l));
    end -= kDirTailSize;
  }
  for (std::size_t off = 0; off < end;) {
    if (end - off < 8)
      return make_error(Errc::corrupt,
                        where + "entry at offset " + std::to_string(off) + " is cut off by the block end");
    const auto h = fsio::load<Ext4DirEntryHead>(block, off);
    const std::uint32_t rec = rec_len_from_disk(h.rec_len, l.block_size);
    if (rec < 8 || rec % 4 != 0 || rec > end - off)
      return make_error(Errc::corrupt, where + "rec_len " + std::to_string(rec) + " at offset " + std::to_string(off) +
                                           " (entries must be 4-byte aligned and end by " + std::to_string(end) + ")");
    if (h.inode != 0) {
      if (h.name_len == 0 || 8u + h.name_len > rec)
        return make_error(Errc::corrupt, where + "name_len " + std::to_string(h.name_len) + " at offset " +
                                             std::to_string(off) + " does not fit rec_len " + std::to_string(rec));
      if (h.inode > l.inodes_count)
        return make_error(Errc::corrupt, where + "inode " + std::to_string(h.inode) + " at offset " +
                                             std::to_string(off) + " exceeds s_inodes_count");
      DirEntry e;
      e.inode = h.inode;
      e.file_type = h.file_type;
      e.name = std::string_view(reinterpret_cast<const char*>(block.data() + off + 8), h.name_len);
      e.offset = std::uint32_t(off);
      e.rec_len = rec;
      FSIO_TRY(fn(e));
    }
    off += rec;
  }
  return {};
}

}  // namespace ext
