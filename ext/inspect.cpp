#include "ext/inspect.hpp"

#include <cstdio>
#include <cstring>

namespace ext {

namespace {

// A symlink's target: in i_block when shorter than 60 bytes and no blocks
// are mapped ("fast" symlink), else in its data blocks.
fsio::Result<std::string> symlink_target(Filesystem& fs, const Inode& inode) {
  const std::uint64_t size = inode.size();
  if (size > fs.layout().block_size)
    return fsio::make_error(fsio::Errc::corrupt, "ext inode " + std::to_string(inode.ino) + ": symlink size " +
                                                     std::to_string(size) + " exceeds a block");
  // The kernel's ext4_inode_is_fast_symlink: no blocks but an xattr block's.
  const bool fast = inode.blocks_512(fs.layout()) == (inode.file_acl(fs.layout()) ? fs.layout().block_size / 512 : 0);
  if (fast || (inode.flags() & EXT4_INLINE_DATA_FL)) {
    auto b = inode.i_block();
    return std::string(reinterpret_cast<const char*>(b.data()), std::min<std::uint64_t>(size, 60));
  }
  std::string out;
  FSIO_TRY(fs.read_file(inode, [&](std::span<const std::byte> d) -> fsio::Status {
    out.append(reinterpret_cast<const char*>(d.data()), d.size());
    return {};
  }));
  return out;
}

}  // namespace

std::string mode_string(std::uint16_t mode) {
  std::string s(10, '-');
  switch (mode & S_IFMT_) {
    case S_IFDIR_: s[0] = 'd'; break;
    case S_IFLNK_: s[0] = 'l'; break;
    case 0x2000: s[0] = 'c'; break;
    case 0x6000: s[0] = 'b'; break;
    case 0x1000: s[0] = 'p'; break;
    case 0xC000: s[0] = 's'; break;
    default: break;
  }
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (0400 >> i)) s[1 + i] = rwx[i];
  if (mode & 04000) s[3] = (mode & 0100) ? 's' : 'S';
  if (mode & 02000) s[6] = (mode & 010) ? 's' : 'S';
  if (mode & 01000) s[9] = (mode & 01) ? 't' : 'T';
  return s;
}

std::string format_uuid(const std::uint8_t (&u)[16]) {
  char b[40];
  std::snprintf(b, sizeof b, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return b;
}

fsio::Result<InodeInfo> describe_inode(Filesystem& fs, const Inode& inode) {
  const auto f = inode.fields();
  const bool extra = inode.raw.size() > kGoodOldInodeSize;
  auto has = [&](std::size_t field_end) { return extra && kGoodOldInodeSize + inode.extra_isize() >= field_end; };
  InodeInfo i;
  i.ino = inode.ino;
  i.mode = f.i_mode;
  i.type = file_type_word(i.mode);
  i.uid = inode.uid();
  i.gid = inode.gid();
  i.links = f.i_links_count;
  i.size = inode.size();
  i.blocks_512 = inode.blocks_512(fs.layout());
  i.flags = f.i_flags;
  i.generation = f.i_generation;
  i.ctime = decode_time(f.i_ctime, f.i_ctime_extra, has(offsetof(Ext4Inode, i_ctime_extra) + 4));
  i.mtime = decode_time(f.i_mtime, f.i_mtime_extra, has(offsetof(Ext4Inode, i_mtime_extra) + 4));
  i.atime = decode_time(f.i_atime, f.i_atime_extra, has(offsetof(Ext4Inode, i_atime_extra) + 4));
  i.has_crtime = has(offsetof(Ext4Inode, i_crtime) + 4);
  if (i.has_crtime) i.crtime = decode_time(f.i_crtime, f.i_crtime_extra, has(offsetof(Ext4Inode, i_crtime_extra) + 4));
  if (inode.is_symlink()) i.symlink_target = FSIO_TRY(symlink_target(fs, inode));
  return i;
}

fsio::Result<std::vector<EntryInfo>> list_dir(Filesystem& fs, const std::string& path, bool with_inodes) {
  const std::uint32_t ino = FSIO_TRY(fs.lookup(path));
  const Inode dir = FSIO_TRY(fs.read_inode(ino));
  if (!dir.is_dir()) return fsio::make_error(fsio::Errc::invalid_argument, "ext: " + path + " is not a directory");
  std::vector<EntryInfo> out;
  FSIO_TRY(fs.for_each_entry(dir, [&](const DirEntry& d) -> fsio::Result<bool> {
    if (d.name != "." && d.name != "..") out.push_back(EntryInfo{std::string(d.name), d.inode, d.file_type, {}});
    return true;
  }));
  if (with_inodes)
    for (auto& e : out) {
      const Inode inode = FSIO_TRY_CTX(fs.read_inode(e.ino), path + "/" + e.name);
      e.inode = FSIO_TRY(describe_inode(fs, inode));
    }
  return out;
}

fsio::Result<StatInfo> stat_path(Filesystem& fs, const std::string& path) {
  StatInfo s;
  s.path = path;
  const Inode inode = FSIO_TRY(fs.read_inode(FSIO_TRY(fs.lookup(path))));
  s.inode = FSIO_TRY(describe_inode(fs, inode));
  s.extent_mapped = inode.flags() & EXT4_EXTENTS_FL;
  const bool fast_symlink = inode.is_symlink() && inode.blocks_512(fs.layout()) ==
                                                      (inode.file_acl(fs.layout()) ? fs.layout().block_size / 512 : 0);
  if (!fast_symlink && !(inode.flags() & EXT4_INLINE_DATA_FL))
    FSIO_TRY(walk_mapping(
        inode, fs.layout(), fs.reader(),
        [&](const Extent& e) -> fsio::Status {
          s.extents.push_back(e);
          return {};
        },
        [&](std::uint64_t) { ++s.tree_blocks; }));
  return s;
}

DfInfo describe_fs(Filesystem& fs) {
  const auto& l = fs.layout();
  const auto& sb = fs.super();
  DfInfo d;
  d.block_size = l.block_size;
  d.blocks_count = l.blocks_count;
  d.reserved_blocks = l.r_blocks_count;
  d.free_blocks = fs.free_blocks_from_groups();
  d.inodes_count = l.inodes_count;
  d.free_inodes = std::uint32_t(fs.free_inodes_from_groups());
  d.group_count = l.group_count;
  d.inode_size = l.inode_size;
  d.uuid = format_uuid(sb.s_uuid);
  d.label = std::string(sb.s_volume_name, strnlen(sb.s_volume_name, sizeof sb.s_volume_name));
  d.features = feature_names(l.compat, l.incompat, l.ro_compat);
  d.state = (sb.s_state & EXT2_VALID_FS) ? "clean" : "not clean";
  if (sb.s_state & EXT2_ERROR_FS) d.state += " with errors";
  auto gate = fs.write_gate();
  d.writable = gate.has_value();
  if (!gate) d.write_refusal = gate.error().message();
  return d;
}

}  // namespace ext
