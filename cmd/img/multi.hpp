// restore_many(): one image onto one or more targets at once, decoded once
// (fanout.hpp has the threads, feed.hpp the inputs), with --verify read
// back from every target (readback.hpp).
//
// Before any byte goes to any target, every target is checked as restore
// checks one (in use anywhere in its stack, read-only, smaller than the
// image, holding a filesystem or partition table without --force), no two
// targets may share storage, nor any target with the input; every refusal
// is named, not only the first, and none of the targets is written.
//
// Then each target is written in restore's order (signatures wiped with
// --force, the image without its first 1 MiB, the unused tail, flush, the
// first 1 MiB, flush) on a thread and a queue of its own, at the pace of
// the slowest. A target that fails is dropped and named; the others go on.
// Damage in the input, Ctrl-C, or every target failing stops them all
// between batches: each then holds no filesystem signature (its head was
// not written), so a rerun restores it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmd/img/input.hpp"
#include "cmd/img/lane_writer.hpp"
#include "cmd/img/readback.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/progress.hpp"

namespace img {

struct ManyOptions {
  std::string in_path;       // IN as given ("-": standard input), for the shared-storage check
  std::uint64_t offset = 0;  // where the image starts in every target
  bool force = false;
  bool keep_unused = false;
  bool create = false;   // each target a new file of the image's size
  bool dry_run = false;  // every check and the whole input, nothing written
  bool verify = false;
  std::string bmap;      // a bmaptool map of a raw image: only its ranges
  unsigned threads = 0;  // decompression workers (fsimg, xz); 0: one per CPU
  fsio::EngineKind engine = fsio::EngineKind::automatic;
  // Runs after every target is written and flushed, before any is read
  // back (tests change a byte on a target here).
  std::function<void()> before_verify;
  fsio::ProgressLines* progress = nullptr;  // one line per target, in order
};

struct TargetReport {
  std::string path;
  bool written = false;  // the whole image on it, flushed
  LaneCounts counts;
  std::uint64_t wiped_signatures = 0;
  bool direct = false;
  bool created = false;
  double seconds = 0;                // from the start to its last flush
  std::optional<fsio::Error> error;  // why it was dropped or stopped
  std::string holds;                 // after an error: what it holds now
  std::optional<ReadbackReport> readback;
  std::optional<fsio::Error> verify_error;  // the read-back itself failed
  bool verified() const { return readback && !readback->difference; }
  // Bytes sent to the target (data, zeros written, the head); zeros by
  // punch hole or WRITE ZEROES are not among them.
  std::uint64_t bytes_written() const { return counts.data_bytes + counts.zero_written + counts.head_bytes; }
};

struct ManyReport {
  InputKind kind = InputKind::raw;
  std::string detail;                        // what the input holds, for the header line
  std::optional<std::uint64_t> image_bytes;  // nullopt: not known before it was read
  std::uint64_t read_bytes = 0;              // image bytes handed out
  std::optional<fsio::Error> input_error;    // the input failed (or Ctrl-C) part way
  bool verify = false, dry_run = false;
  std::vector<TargetReport> targets;
  // Every target written, and verified when asked.
  bool ok() const;
};

// Reads `in` (told to be `kind`, detect_input), writes every target.
// Errors before the first write are returned (nothing written anywhere);
// after it, everything is in the report.
fsio::Result<ManyReport> restore_many(StreamReader& in, InputKind kind, const std::vector<std::string>& targets,
                                      const ManyOptions& options);

}  // namespace img
