// mkfat -d (see mkfat_tree.hpp).
#include "cmd/mkfat_tree.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "cmd/mkfat_report.hpp"
#include "cmd/tree/source.hpp"
#include "fat/label.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

Error tree_usage(std::string what) { return make_error(Errc::invalid_argument, std::move(what)); }

// --tz: UTC (the default), local (the process's TZ), or a zone by name.
Result<bool> time_zone(const std::optional<std::string>& tz) {
  if (!tz || *tz == "UTC" || *tz == "utc") return true;
  if (*tz == "local") return false;
  struct stat st {};
  const bool named = tz->find("..") == std::string::npos && !tz->empty() && tz->front() != '/' &&
                     ::stat(("/usr/share/zoneinfo/" + *tz).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (!named)
    return tree_usage("--tz '" + *tz + "': no such time zone (a name under /usr/share/zoneinfo, local, or UTC)");
  ::setenv("TZ", tz->c_str(), 1);
  ::tzset();
  return false;
}

Status slack(const std::string& text, fat::TreeOptions& o) {
  if (!text.empty() && text.back() == '%') {
    const std::string digits = text.substr(0, text.size() - 1);
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(digits) > 1000)
      return tree_usage("--slack '" + text + "': expected a size (64M) or a percentage from 0% to 1000%");
    o.slack_percent = unsigned(std::stoul(digits));
    return {};
  }
  auto bytes = parse_size(text);
  if (!bytes) return std::move(bytes).error().wrap("--slack");
  if (*bytes > (std::uint64_t(1) << 50)) return tree_usage("--slack '" + text + "': more than a FAT volume holds");
  o.slack_bytes = *bytes;
  return {};
}

}  // namespace

Status TreeBuild::read_options(const MkfatArgs& a, std::optional<std::int64_t> epoch) {
  opt_.skip_special = a.skip_special;
  opt_.utc = FSIO_TRY(time_zone(a.tz));
  if (a.slack) FSIO_TRY(slack(*a.slack, opt_));
  if (a.slack && !a.auto_size)
    return tree_usage("--slack goes with -C and SIZE auto (the size is chosen for the tree)");
  if (epoch) opt_.clamp = fat::resolve_identity(fat::FormatOptions{}, epoch).time;
  epoch_ = epoch;
  // A multi-byte code page (932, ...) has no table here: its 8.3 names get '_'.
  if (auto cp = fat::OemCodepage::load(a.codepage)) codepage_ = std::move(*cp);
  opt_.codepage = codepage_ ? &*codepage_ : nullptr;
  return {};
}

Result<std::unique_ptr<TreeBuild>> TreeBuild::start(MkfatArgs& a, std::optional<std::int64_t> epoch) {
  std::unique_ptr<TreeBuild> t(new TreeBuild);
  FSIO_TRY(t->read_options(a, epoch));
  t->source_ = *a.root;
  t->src_ = FSIO_TRY(tree::open_source(*a.root, {}));
  t->tree_ = FSIO_TRY(t->src_->list());
  const bool label = FSIO_TRY(fat::parse_label(a.fmt.label, a.fmt.uppercase_label, a.fmt.label_in_codepage)).present;
  t->names_ = FSIO_TRY(fat::plan_names(t->tree_, t->opt_, label));
  if (!a.auto_size) return t;
  fat::FormatOptions f = a.fmt;
  if (a.offset_parsed) {  // as create_size and offset_sectors read --offset
    const std::uint32_t ss = fat::logical_sector_size(f, {});
    if (!a.offset_parsed->plain && a.offset_parsed->value % ss)
      return tree_usage("--offset " + *a.offset + ": not a multiple of the " + std::to_string(ss) + "-byte sector");
    f.offset_sectors = a.offset_parsed->plain ? a.offset_parsed->value : a.offset_parsed->value / ss;
  }
  a.fmt.blocks = FSIO_TRY(fat::smallest_blocks(t->tree_, t->names_, t->opt_, f, {}));
  t->auto_size_ = true;
  t->image_bytes_ = a.fmt.blocks * 1024 + f.offset_sectors * fat::logical_sector_size(f, {});
  return t;
}

Status TreeBuild::check_apart(const std::string& target) const {
  return fsio::check_apart({"", target}, src_->storage());
}

Status TreeBuild::lay_out(const fat::Geometry& g, const std::vector<std::uint32_t>& bad, const fat::VolumeIdentity& id,
                          const std::string& target) {
  opt_.made = {id.time, 0};
  auto layout = fat::lay_out(tree_, names_, g, bad, opt_);
  if (!layout) return std::move(layout).error().at(target);
  layout_.emplace(std::move(*layout));
  return {};
}

const fat::FormatContent& TreeBuild::content() {
  FSIO_ASSERT(layout_);
  if (!writer_) writer_ = std::make_unique<fat::TreeWriter>(*layout_, tree_, *src_);
  return writer_->content();
}

nlohmann::json TreeBuild::json(bool written) const {
  nlohmann::json out = {{"source", source_},     {"files", names_.files},     {"directories", names_.directories},
                        {"bytes", names_.bytes}, {"skipped", names_.skipped}, {"size_auto", auto_size_}};
  if (auto_size_) out["image_bytes"] = image_bytes_;
  if (layout_) {
    out["clusters_used"] = layout_->dir_clusters + layout_->file_clusters;
    out["directory_clusters"] = layout_->dir_clusters;
    out["file_clusters"] = layout_->file_clusters;
    out["clusters_free"] = layout_->free_clusters;
  }
  if (written && writer_) {
    const auto& s = writer_->stats();
    out["data_bytes_written"] = s.bytes_written;
    out["data_batches"] = s.batches;
    out["writer_idle_seconds"] = s.read_wait_seconds;
    out["reader_waited_seconds"] = s.write_wait_seconds;
  }
  return out;
}

std::string TreeBuild::summary(bool dry_run) const {
  std::string s = std::string(dry_run ? "would fill it with " : "filled with ") + format_count(names_.files) +
                  (names_.files == 1 ? " file" : " files") + " in " + format_count(names_.directories) +
                  (names_.directories == 1 ? " directory" : " directories") + " (" + format_size(names_.bytes) + ")";
  if (layout_) {
    const std::uint64_t used = layout_->dir_clusters + layout_->file_clusters;
    s += ": " + format_count(used) + (used == 1 ? " cluster" : " clusters") + " used, " +
         format_count(layout_->free_clusters) + " free";
  }
  if (auto_size_)
    s += "; image size " + format_size(image_bytes_) + " (" + std::to_string(image_bytes_) +
         " bytes), the smallest that holds it";
  return s;
}

Status TreeBuild::dry_run_image(const MkfatArgs& a) {
  struct stat st {};
  if (::lstat(a.target.c_str(), &st) == 0)
    return make_error(Errc::busy, a.target +
                                      ": already exists (a symbolic link counts, even a dangling one); "
                                      "refusing to replace it with a new image");
  const std::uint64_t size = FSIO_TRY(create_size(a));
  fat::FormatOptions f = a.fmt;
  if (a.offset_parsed) f.offset_sectors = FSIO_TRY(offset_sectors(a, size, fat::logical_sector_size(f, {})));
  auto g = fat::compute_geometry(size, f, {});
  if (!g) return std::move(g).error().at(a.target);
  const auto id = fat::resolve_identity(f, epoch_);
  FSIO_TRY(lay_out(*g, {}, id, a.target));
  if (a.json) {
    nlohmann::json out = plan_json(a, *g, {});
    out["tree"] = json(false);
    std::cout << out.dump(2) << '\n';
  } else if (!a.quiet) {
    print_summary(a.target, *g, true);
    std::printf("%s\n", summary(true).c_str());
  }
  return {};
}

}  // namespace fsio::cli
