// mkfat -d SRC: the tree a new volume is filled with. mkfat's run calls it
// at four points, each before anything is written:
//   1. start(): SRC opened and listed (a directory or a tar archive,
//      cmd/tree/source.hpp), every name planned and every refusal made
//      naming the path (fat/tree_fill.hpp); with -C and SIZE auto, the
//      smallest size that holds it becomes the image's BLOCKS;
//   2. check_apart(): the source shares no storage with the target;
//   3. lay_out(): on the geometry (and bad clusters) chosen, every cluster
//      placed, or "the tree needs N clusters ...; the volume has M";
//   4. content(): what format_volume writes besides the empty tables.
// --dry-run stops after 3 and reports the volume it would make.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmd/mkfat_args.hpp"
#include "fat/format.hpp"
#include "fat/tree_fill.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::cli {

class TreeBuild {
 public:
  // Lists a.root and plans its names; sets a.fmt.blocks when a.auto_size.
  // `epoch` is SOURCE_DATE_EPOCH's seconds, if set (fsio::cli::source_date_epoch).
  // Errc::invalid_argument (exit 2) for --slack and --tz values.
  static Result<std::unique_ptr<TreeBuild>> start(MkfatArgs& a, std::optional<std::int64_t> epoch);
  TreeBuild(const TreeBuild&) = delete;
  TreeBuild& operator=(const TreeBuild&) = delete;

  Status check_apart(const std::string& target) const;
  // `id`: the volume's identity (its time stamps what is made); errors name `target`.
  Status lay_out(const fat::Geometry& g, const std::vector<std::uint32_t>& bad, const fat::VolumeIdentity& id,
                 const std::string& target);
  // -C --dry-run: the image that would be made, printed; nothing is created.
  Status dry_run_image(const MkfatArgs& a);
  const fat::FormatContent& content();  // after lay_out

  std::uint64_t file_bytes() const { return names_.bytes; }
  std::uint64_t files() const { return names_.files; }
  const std::vector<std::string>& skipped() const { return names_.skipped; }
  // "tree" in --json: what went in and what it took.
  nlohmann::json json(bool written) const;
  // "would fill it with 3,393 files in 212 directories (57 MiB): 14,209 clusters used, 2,011 free"
  std::string summary(bool dry_run) const;

 private:
  TreeBuild() = default;
  Status read_options(const MkfatArgs& a, std::optional<std::int64_t> epoch);
  std::optional<std::int64_t> epoch_;
  std::string source_;
  std::unique_ptr<fsio::TreeSource> src_;
  fsio::Tree tree_;
  fat::TreeNames names_;
  fat::TreeOptions opt_;
  std::optional<fat::OemCodepage> codepage_;
  std::optional<fat::TreeLayout> layout_;
  std::unique_ptr<fat::TreeWriter> writer_;
  bool auto_size_ = false;
  std::uint64_t image_bytes_ = 0;  // with auto_size: the image -C makes
};

}  // namespace fsio::cli
