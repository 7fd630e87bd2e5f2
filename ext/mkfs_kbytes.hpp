// s_kbytes_written as mke2fs 1.47.0 stores it: ext2fs_close2 adds the bytes
// the unix I/O manager had passed to pwrite when the bitmaps are written
// (lib/ext2fs/unix_io.c io_stats), in KiB, plus (GDT blocks + 1) blocks, to
// the 1 mke2fs starts with when the features include flex_bg, huge_file,
// uninit_bg, dir_nlink, metadata_csum or extra_isize (else it stays 0).
//
// Those bytes are the 4 KiB of zap_sector plus one block for every time
// unix_io's write-back cache (8 slots, least recently used replaced) had to
// write a dirty block out to make room. So this file replays libext2fs's
// block reads and writes in mke2fs's order through a model of that cache
// and of libext2fs's inode cache (4 inodes, and the one inode-table block
// read last), which decides which inode reads reach the device. Zeroing
// (fallocate) bypasses the cache and is not counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ext/mkfs_files.hpp"

namespace ext {

// `trace` (optional) receives the model's device requests as mke2fs would
// issue them, "R 4096" / "W 4096" (block reads and write-backs) and "RAW
// 3072", for comparing with strace of the real mke2fs.
std::uint64_t kbytes_written(const MkfsLayout& m, const MkfsFiles& f, const MkfsParams& p,
                             std::vector<std::string>* trace = nullptr);

}  // namespace ext
