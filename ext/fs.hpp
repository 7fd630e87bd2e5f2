// Filesystem: an ext2/3/4 filesystem on a Device window, opened for reading
// or for writing.
//
// Opening reads and checks the superblock and every group descriptor; for
// writing it also applies the refuse-to-write gate (features, state,
// orphans, journal). Metadata blocks go through a cache owned here (read
// once, modified in place, written back by the commit in ext/commit.cpp in
// crash-safe order); file data never enters the cache. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ext/dirent.hpp"
#include "ext/extent.hpp"
#include "ext/group_desc.hpp"
#include "ext/inode.hpp"
#include "ext/layout.hpp"
#include "libfsio/buffer.hpp"
#include "libfsio/device.hpp"
#include "libfsio/io_queue.hpp"

namespace ext {

struct OpenOptions {
  std::uint64_t offset = 0;  // bytes into the device where the filesystem starts
  bool write = false;        // apply the write gate; open the device read-write
  bool check_write = false;  // apply the write gate and the device's write refusals
                             // (in use, read-only), but open read-only: --dry-run
  bool direct = true;        // O_DIRECT (falls back to buffered where refused)
  fsio::EngineKind engine = fsio::EngineKind::automatic;
};

// What a cached metadata block is, for the order the commit writes it in
// (ext/commit.hpp); declared in that order. A block holding several kinds
// of change is written at the latest of their stages.
enum class MetaKind : std::uint8_t {
  fresh,        // allocated in this transaction: extent blocks, new directory blocks
  bitmap,       // block and inode bitmaps, descriptors
  inode_table,  // inode table blocks with new inodes
  directory,    // the links: existing directory blocks, a directory's inode
  unlinked,     // inodes whose last link went away (after the links)
  other,        // superblock and descriptor backups
};

class Filesystem {
 public:
  static fsio::Result<std::unique_ptr<Filesystem>> open(const std::string& path, const OpenOptions& options);
  // A filesystem on a device and queue already open for writing (mkext4 -d
  // fills the device it has just formatted, through the same queue, so its
  // statistics and FSIO_FAULT's count run on). `superblock`: the primary
  // superblock's 1024 bytes when they are not on the device yet (mkext4
  // writes it last, after the fill), else empty (read from the device).
  // `queue` must be a queue over `*device`. Errors name `name`.
  static fsio::Result<std::unique_ptr<Filesystem>> adopt(std::unique_ptr<fsio::Device> device,
                                                         std::unique_ptr<fsio::IoQueue> queue, const std::string& name,
                                                         std::span<const std::byte> superblock,
                                                         const OpenOptions& options);
  ~Filesystem();

  const Layout& layout() const { return l_; }
  const Ext4SuperBlock& super() const { return sb_; }
  Ext4SuperBlock& super_mut() { return sb_; }
  fsio::IoQueue& queue() { return *q_; }
  const fsio::IoQueue& queue() const { return *q_; }
  const fsio::Device& device() const { return *dev_; }
  bool writable() const { return writable_; }
  // The refuse-to-write gate (features, state, orphans, a journal to
  // replay); open() applies it when opening for writing.
  fsio::Status write_gate();

  const GroupDesc& group(std::uint32_t g) const { return groups_[g]; }
  GroupDesc& group_mut(std::uint32_t g) {
    dirty_groups_[g] = true;
    return groups_[g];
  }
  bool group_dirty(std::uint32_t g) const { return dirty_groups_[g]; }
  std::span<const std::byte> gdt_raw() const { return gdt_raw_; }
  std::span<std::byte> gdt_raw_mut() { return gdt_raw_; }

  // A metadata block through the cache (read on first use).
  fsio::Result<std::span<std::byte>> meta(std::uint64_t block);
  // Reads every block of the runs not cached yet, as few large requests
  // (directories are read whole; one request per contiguous run).
  fsio::Status prefetch(const std::vector<Extent>& runs, std::uint64_t max_blocks);
  // A block about to be overwritten whole: cached as zeros, never read.
  std::span<std::byte> meta_new(std::uint64_t block, MetaKind kind);
  void mark_dirty(std::uint64_t block, MetaKind kind);
  // Allocated in this transaction (MetaKind::fresh) and not yet written:
  // nothing on the device refers to it.
  bool is_fresh(std::uint64_t block) const;
  // Dirty blocks of one kind, in block order; the commit writes and cleans them.
  std::vector<std::uint64_t> dirty_blocks(MetaKind kind) const;
  void mark_clean(std::uint64_t block);
  // Drops a cached block (freed in this transaction) so it is neither written nor reused stale.
  void forget(std::uint64_t block);
  // Bytes the cache holds now.
  std::uint64_t cached_bytes() const { return std::uint64_t(cache_.size()) * l_.block_size; }
  // Writes every cached block (block order, one plugged batch) and
  // empties the cache: later uses read the blocks back, and blocks that were
  // fresh stay fresh (is_fresh). It skips the commit's order, so it is only
  // for a device no filesystem can be seen on until the commit's
  // superblocks (mkext4 -d: Transaction::early_writes). No span from meta()
  // may be held across it.
  fsio::Status spill();
  // Writes the dirty cached blocks no structure on the device refers to yet,
  // and drops them: fresh blocks, and inode table blocks whose inodes all lie
  // in the unused part of their group's table as the device's descriptors
  // mark it (INODE_UNINIT, bg_itable_unused; e2fsck reads no inode there).
  // A crash after it leaves the filesystem on the device as it was, so it
  // serves any transaction (extwb put of a tree keeps its memory down). No
  // span from meta() may be held across it.
  fsio::Status spill_unseen();
  // Zeros over the blocks spill() wrote that were freed since and not made
  // metadata again (a directory's old extent tree blocks): without, free
  // space would hold them, and the image would depend on when the cache
  // spilled. With `old_too` (early writes: no filesystem is visible yet)
  // also over the freed blocks that were on the device before this
  // transaction (mkfs's root block, once the root is an htree), which a
  // spill may or may not have overwritten. Before any file data is written
  // (Transaction::prepare), since such a block may have become a file's.
  fsio::Status zero_spilled_frees(bool old_too);
  BlockReader reader();

  // Inodes. read_inode checks the number, the checksum and i_extra_isize.
  fsio::Result<Inode> read_inode(std::uint32_t ino);
  // Where inode `ino` lives: table block and byte offset in it.
  std::pair<std::uint64_t, std::uint32_t> inode_location(std::uint32_t ino) const;
  // Stores an inode into its table block (checksum set first) and marks
  // the block dirty for the commit stage `kind`.
  fsio::Status write_inode(Inode& inode, MetaKind kind = MetaKind::inode_table);

  // Every extent of a file or directory, in logical order.
  fsio::Result<std::vector<Extent>> extents(const Inode& inode);
  // Entries of a directory, "." and ".." included; `fn` returning false stops.
  fsio::Status for_each_entry(const Inode& dir, const std::function<fsio::Result<bool>(const DirEntry&)>& fn);
  // The inode number a name has in a directory, or 0.
  fsio::Result<std::uint32_t> find_entry(const Inode& dir, std::string_view name);
  // Resolves an absolute path ("/a/b", "a/b" is taken from the root) without
  // following symbolic links; Errc::not_found names the missing component.
  fsio::Result<std::uint32_t> lookup(std::string_view path);

  // Streams the bytes of a regular file (or a directory, or a slow symlink)
  // in order: holes and unwritten extents read as zeros, the last block cut
  // at i_size. Reads go out as large plugged requests of up to `chunk` bytes.
  fsio::Status read_file(const Inode& inode, const std::function<fsio::Status(std::span<const std::byte>)>& sink,
                         std::uint64_t chunk = 8u << 20);

  // Free counts summed over the descriptors (what e2fsck compares the superblock with).
  std::uint64_t free_blocks_from_groups() const;
  std::uint64_t free_inodes_from_groups() const;

 private:
  Filesystem() = default;
  fsio::Status load(const OpenOptions& o, std::span<const std::byte> superblock = {});
  fsio::Status load_groups();
  // spill()'s and spill_unseen()'s end: `blocks` written in block order as
  // one plugged batch, then dropped from the cache (fresh ones stay fresh).
  fsio::Status write_and_drop(std::vector<std::uint64_t> blocks);
  fsio::Result<std::optional<std::uint32_t>> find_hashed(const Inode& dir, std::string_view name,
                                                         const std::vector<Extent>& list);

  struct Cached {
    fsio::AlignedBuffer buf;
    bool dirty = false;
    MetaKind kind = MetaKind::other;
  };

  std::unique_ptr<fsio::Device> dev_;
  std::unique_ptr<fsio::IoQueue> q_;
  bool writable_ = false;
  Ext4SuperBlock sb_{};
  Layout l_;
  std::vector<std::byte> gdt_raw_;  // the descriptor table, group_count * desc_size bytes
  std::vector<GroupDesc> groups_;
  std::vector<bool> dirty_groups_;
  std::vector<std::uint32_t> unused_from_;  // per group: first inode index the device's descriptors mark unused
  std::unordered_map<std::uint64_t, Cached> cache_;
  std::unordered_set<std::uint64_t> spilled_fresh_;  // fresh blocks spill() wrote and dropped
  std::unordered_set<std::uint64_t> spilled_;        // every block spill() wrote
  std::unordered_set<std::uint64_t> spilled_freed_;  // of those, freed since and not meta_new'd
  std::unordered_set<std::uint64_t> freed_old_;      // freed, not spilled, on the device before; not meta_new'd
};

// Splits "/a//b/c" into {"a", "b", "c"}.
std::vector<std::string_view> split_path(std::string_view path);

}  // namespace ext
