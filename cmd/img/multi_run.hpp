// restore_many()'s steps after the checks (multi.hpp): writing every target
// on a thread of its own, reading them back, cleaning up. Internal to
// multi.cpp and multi_run.cpp.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "cmd/img/bmap.hpp"
#include "cmd/img/input.hpp"
#include "cmd/img/multi.hpp"
#include "cmd/img/written.hpp"
#include "libfsio/device.hpp"
#include "libfsio/signatures.hpp"

namespace img {

// The input, opened and its kind's header read.
struct Image {
  InputKind kind = InputKind::raw;
  std::optional<ImageReader> stream;  // fsimg
  std::unique_ptr<RawInput> raw;      // everything else
  std::optional<Bmap> bmap;
  std::optional<std::uint64_t> size;  // image bytes, when known before reading
  std::uint64_t block = 4096;         // the unit pieces are aligned to
  std::string detail;
};

// A target that passed every check.
struct Opened {
  fsio::Device dev;
  bool created = false;
  std::vector<fsio::Signature> sigs;  // to wipe first (--force)
};

// Writes the image to every target (fills rep.targets, rep.input_error,
// rep.read_bytes); `written` (nullptr: no --verify) gets the checksums.
void run_targets(Image& im, std::vector<Opened>& targets, const ManyOptions& o, ManyReport& rep, WrittenMap* written);
// Reads every written target back (rep.targets[i].readback).
void verify_targets(const std::vector<Opened>& targets, const ManyOptions& o, const WrittenMap& written,
                    ManyReport& rep);
// Removes each file --create made for a target that was not written whole.
void remove_failed_creations(std::vector<Opened>& targets, ManyReport& rep);

}  // namespace img
