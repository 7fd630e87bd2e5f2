// The inodes mke2fs 1.47.0 creates after the tables, and the blocks they
// take, in its order (misc/mke2fs.c main()): the inode-table flags
// (write_inode_tables), root (ext2fs_mkdir), lost+found (ext2fs_mkdir,
// ext2fs_expand_dir), the reserved inodes 3-10 and 1, the resize inode
// (res_gdt.c), the journal (mkjournal.c, fallocate.c: midpoint goal,
// extents of free runs, a leaf block at the fifth extent), and the orphan
// file (orphan.c). Each allocation uses libext2fs's search from its goal.
#pragma once

#include <cstdint>
#include <vector>

#include "ext/extent.hpp"
#include "ext/mkfs_layout.hpp"

namespace ext {

// How the inode tables are left (write_inode_tables' two flags).
struct ItableInit {
  bool lazy = true;     // zero only the blocks that hold inodes in use
  bool zeroed = false;  // the target reads zeros already: zero nothing, set INODE_ZEROED
};

struct MkfsFiles {
  std::uint64_t root_block = 0;
  std::vector<std::uint64_t> lpf_blocks;  // lost+found, logical order
  std::uint32_t lpf_ino = 11;
  std::uint64_t resize_dind = 0;     // 0 without resize_inode
  std::uint32_t journal_blocks = 0;  // 0: no journal
  std::uint32_t fc_blocks = 0;       // fast_commit area after the journal
  std::vector<Extent> journal_extents;
  std::uint64_t journal_leaf = 0;  // the extent leaf, when more than 4 extents
  std::uint32_t orphan_ino = 0;    // 0: no orphan file
  std::uint32_t orphan_blocks = 0;
  std::vector<Extent> orphan_extents;
  std::uint64_t overhead = 0;  // s_overhead_clusters
};

// Runs every allocation in mke2fs's order on `m` (counts, flags, bitmaps)
// and returns where things went. Errc::invalid_argument when the journal
// does not fit (as figure_journal_size refuses -J size=), Errc::unsupported
// for shapes mkext4 does not write (an orphan file in more than 4 extents).
fsio::Result<MkfsFiles> make_files(MkfsLayout& m, const MkfsParams& p, const ItableInit& init);

// The journal mke2fs makes (figure_journal_size): the default for the
// filesystem's size, or -J size= (and fast_commit_size=); 0 blocks when
// the filesystem is too small for one.
struct JournalSize {
  std::uint32_t blocks = 0, fc_blocks = 0;
};
fsio::Result<JournalSize> journal_size(const MkfsLayout& m, const MkfsParams& p);

}  // namespace ext
