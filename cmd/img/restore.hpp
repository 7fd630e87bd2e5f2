// Restoring, verifying and describing an image.
//
// restore() writes the image onto a target so that it reads exactly like
// the source over [0, image_bytes): mapped blocks from the frames, and
// everything else zeros (holes punched in a file, WRITE ZEROES on a device
// that offloads it, else large writes of zeros), unless keep_unused leaves
// the unmapped regions as they were. Before anything is written it
// refuses what Device::open refuses (in use, read-only), a target smaller
// than the image, and a target holding a filesystem or partition table
// (libblkid) unless forced; forced, those signatures are wiped first.
//
// Write order, so that an interrupted or failed restore can simply be run
// again: signatures wiped and flushed; then frame by frame, each only once
// it has been checked whole (decode.hpp), with the unused gaps before it;
// then the unused tail, flush; then the first 1 MiB of the image (where
// every filesystem signature lives), held back until now, flush. Stopped
// anywhere before the end, the target holds no signature, so restore runs
// on it again without --force.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cmd/img/stream.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/progress.hpp"
#include "libfsio/stats.hpp"

namespace img {

inline constexpr std::uint64_t kHeadBytes = 1u << 20;  // written last

struct RestoreOptions {
  std::uint64_t offset = 0;  // bytes into the target where the image starts
  bool force = false;        // over an existing filesystem or partition table
  bool keep_unused = false;  // leave unmapped regions as they are
  bool create = false;       // create TARGET as a file of the image's size (it must not exist)
  bool dry_run = false;      // every check and the whole stream, nothing written
  unsigned threads = 0;      // decompression workers; 0: one per CPU
  fsio::EngineKind engine = fsio::EngineKind::automatic;
  fsio::Progress* progress = nullptr;  // advanced over [0, image_bytes)
};

struct RestoreReport {
  std::uint32_t frames = 0;
  std::uint64_t data_bytes = 0;    // mapped blocks written from frames
  std::uint64_t zero_written = 0;  // zeros written as data
  std::uint64_t zero_punched = 0;  // zeros by punch hole / WRITE ZEROES
  std::uint64_t kept_bytes = 0;    // unused bytes left as they were (keep_unused)
  std::uint64_t wiped_signatures = 0;
  std::string zeroing;  // "punch hole", "write zeroes", "written"
  bool direct = false;
  bool created = false;
  fsio::IoStats write_stats;
  double seconds = 0;
};

fsio::Result<RestoreReport> restore(ImageReader& reader, const std::string& target, const RestoreOptions& options);

struct VerifyOptions {
  std::uint64_t offset = 0;
  bool unused = false;  // also check that unmapped regions read as zeros
  unsigned threads = 0;
  fsio::EngineKind engine = fsio::EngineKind::automatic;
  fsio::Progress* progress = nullptr;
};

struct VerifyReport {
  std::uint32_t frames = 0;
  std::uint64_t compared_bytes = 0;
  std::optional<std::string> difference;  // the first, named; nullopt: identical
};

fsio::Result<VerifyReport> verify(ImageReader& reader, const std::string& target, const VerifyOptions& options);

struct InfoReport {
  std::uint32_t frames = 0;
  std::uint64_t stored_bytes = 0;
  std::uint64_t zero_bytes = 0;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t stream_bytes = 0;
};

// Reads the whole stream without decompressing it: every record checked,
// data frames skipped.
fsio::Result<InfoReport> info(ImageReader& reader);

}  // namespace img
