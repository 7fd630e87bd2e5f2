// Cluster chains: following FAT entries from a first cluster, stopping at
// whatever a damaged FAT puts in the way, and saying which and where.
//
//   first -> FAT[first] -> FAT[FAT[first]] -> ... -> end-of-chain mark
//
// walk_chain finds the chain's well-formed prefix and why it ends:
//   end_of_chain  an end-of-chain mark (0x...FF8-FFF): a sound chain
//   free_cluster  the chain reaches a cluster whose entry is free
//   bad_cluster   the chain reaches a cluster marked bad (0x...FF7)
//   out_of_range  an entry holds 1, a reserved value (0x...FF0-FF6) or a
//                 cluster number past the last cluster
//   loop          an entry points back into the chain
//   bad_start     the first cluster is not a cluster (0, 1, too large)
// The prefix and `last` are what fsck.fat keeps when it repairs (check_file:
// a free or bad cluster is dropped and the entry before it becomes the end;
// an out-of-range entry and the entry closing a loop become the end).
//
// Loops are found with Brent's algorithm: O(1) memory, at most about three
// times the chain's length in FAT lookups, so a corrupt chain can never run
// away even though no per-cluster memory is used. A checker that needs
// cross-links marks each chain's clusters in a ClusterBitmap (bitmap.hpp) as
// walk_chain hands them out: it hands out each cluster of the prefix once.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "fat/table.hpp"
#include "fat/volume.hpp"
#include "libfsio/result.hpp"

namespace fat {

enum class ChainEnd : std::uint8_t { end_of_chain, free_cluster, bad_cluster, out_of_range, loop, bad_start };

const char* chain_end_name(ChainEnd end);  // "end of chain", "free cluster", ...

struct Chain {
  std::uint32_t first = 0;
  std::uint32_t length = 0;  // clusters in the well-formed prefix
  std::uint32_t last = 0;    // last cluster of the prefix; 0 when length is 0
  ChainEnd end = ChainEnd::end_of_chain;
  // end_of_chain: the mark in FAT[last]; free_cluster, bad_cluster: the
  // cluster reached (FAT[last] points to it); out_of_range: the value in
  // FAT[last]; loop: the cluster FAT[last] points back to; bad_start: first.
  std::uint32_t stop = 0;

  bool ok() const { return end == ChainEnd::end_of_chain; }
  std::uint64_t bytes(const Layout& layout) const { return length * layout.cluster_bytes(); }
};

// "chain from 5: loop after 7 clusters (cluster 11 points back to 8)".
std::string describe(const Chain& chain);

// Called with runs of consecutive clusters (first, count), in chain order,
// covering the prefix exactly once. Return false to stop visiting.
using RunVisitor = std::function<bool(std::uint32_t, std::uint32_t)>;

// Walks the chain from `first`. With a visitor, the prefix is walked a
// second time to hand out its runs, so the visitor never sees the clusters
// a loop repeats. Errors are only the table's (I/O).
fsio::Result<Chain> walk_chain(FatTable& fat, std::uint32_t first, const RunVisitor& visit = {});

// A file's bytes: its chain's clusters read in runs of up to `max_read`
// bytes, cut to `size`; sink gets each piece in order (return false to
// stop). A chain that ends early or badly is Errc::corrupt naming it; a
// chain longer than the size is not read past the size.
fsio::Status read_file(Volume& volume, std::uint32_t first_cluster, std::uint64_t size,
                       const std::function<bool(std::span<const std::byte>)>& sink, std::size_t max_read = 1u << 20);

}  // namespace fat
