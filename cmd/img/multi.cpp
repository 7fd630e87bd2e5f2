// restore_many(), part one: what the input is, and every check that can
// refuse a target, all made before the first write (multi.hpp).
#include "cmd/img/multi.hpp"

#include <unistd.h>

#include "cmd/img/feed.hpp"
#include "cmd/img/multi_run.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/device.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

std::string size_text(std::uint64_t n) { return fsio::format_size(n) + " (" + std::to_string(n) + " bytes)"; }

fsio::Status check_bmap(const Image& im, const std::string& in_name, const std::string& bmap_name) {
  const Bmap& m = *im.bmap;
  if (im.raw->size() && *im.raw->size() != m.image_size)
    return make_error(Errc::invalid_argument, in_name + " holds " + size_text(*im.raw->size()) + ", and " + bmap_name +
                                                  " is the map of an image of " + size_text(m.image_size) +
                                                  " (ImageSize)");
  for (std::size_t i = 0; i < m.ranges.size(); ++i) {
    const std::uint64_t bytes = (m.ranges[i].last - m.ranges[i].first + 1) * m.block_size;
    if (bytes > kMaxHeldRange)
      return make_error(Errc::unsupported, bmap_name + ": range " + std::to_string(i) + " holds " + size_text(bytes) +
                                               "; a range is held in memory until its checksum is known, and at most " +
                                               fsio::format_size(kMaxHeldRange) + " is");
  }
  return {};
}

fsio::Result<Image> open_image(StreamReader& in, InputKind kind, const ManyOptions& o) {
  Image im;
  im.kind = kind;
  if (kind == InputKind::fsimg) {
    if (!o.bmap.empty())
      return make_error(Errc::invalid_argument, "--bmap: " + in.name() +
                                                    " is an fsimg stream, which holds its own "
                                                    "map; --bmap is for a raw image");
    im.stream.emplace(FSIO_TRY(ImageReader::open(in)));
    const Header& h = im.stream->header();
    im.size = h.image_bytes;
    im.block = h.block_size;
    im.detail = std::string(describe(kind)) + " of a " + fsio::format_size(h.image_bytes) + " " +
                fs_type_name(h.fs_type) + " filesystem, " + fsio::format_size(h.mapped_blocks * h.block_size) + " used";
    return im;
  }
  im.raw = FSIO_TRY(open_raw_input(in, kind, o.threads));
  im.detail = describe(kind);
  if (o.bmap.empty()) {
    im.size = im.raw->size();
    im.block = im.size && *im.size % 4096 ? 512 : 4096;
    im.detail += im.size ? " of " + fsio::format_size(*im.size) : ", its size not known until it ends";
    return im;
  }
  im.bmap = FSIO_TRY(read_bmap(o.bmap));
  FSIO_TRY(check_bmap(im, in.name(), o.bmap));
  im.size = im.bmap->image_size;
  im.block = im.bmap->block_size;
  im.detail += " of " + fsio::format_size(im.bmap->image_size) + ", " +
               fsio::format_size(im.bmap->mapped_blocks * im.bmap->block_size) + " mapped by " + o.bmap;
  return im;
}

// The window every target is written in: [offset, offset + size), or to
// its end when the size is not known yet.
fsio::StorageRef target_ref(const std::string& path, const Image& im, const ManyOptions& o) {
  std::uint64_t end = fsio::kToEnd;
  if (im.size && o.offset <= fsio::kToEnd - *im.size) end = o.offset + *im.size;
  return {"the target", path, -1, o.offset, end};
}

// What the target shares storage with: the input, the bmap, a target before it.
fsio::Status check_target_apart(const std::vector<std::string>& targets, std::size_t i, const Image& im,
                                const ManyOptions& o) {
  const bool in_stdin = o.in_path == "-";
  std::vector<fsio::StorageRef> reads{
      {"the input", in_stdin ? "standard input" : o.in_path, in_stdin ? STDIN_FILENO : -1}};
  if (!o.bmap.empty()) reads.push_back({"the bmap", o.bmap});
  FSIO_TRY(fsio::check_apart(target_ref(targets[i], im, o), reads));
  for (std::size_t j = 0; j < i; ++j)
    FSIO_TRY(fsio::check_apart(target_ref(targets[i], im, o), {target_ref(targets[j], im, o)}));
  return {};
}

fsio::Result<Opened> open_target(const std::string& path, const Image& im, const ManyOptions& o) {
  fsio::OpenOptions oo;
  oo.write = !o.dry_run;
  oo.check_write = o.dry_run;
  oo.offset = o.offset;
  if (o.create) {
    if (o.dry_run) return make_error(Errc::invalid_argument, "--create and --dry-run: nothing to check; omit --create");
    if (!im.size)
      return make_error(Errc::invalid_argument, "--create: the image's size is not known before it is read (" +
                                                    im.detail + "); give it as a file, or create the targets first");
    constexpr std::uint64_t kMaxFile = UINT64_MAX / 2;  // off_t, what ftruncate takes
    if (o.offset > kMaxFile || *im.size > kMaxFile - o.offset)
      return make_error(Errc::invalid_argument, "--create: --offset " + std::to_string(o.offset) + " + the image's " +
                                                    std::to_string(*im.size) +
                                                    " bytes is past the largest file size "
                                                    "(2^63 - 1 bytes)");
    oo.create_size = o.offset + *im.size;
    oo.create_new = true;
  }
  Opened t{FSIO_TRY(fsio::Device::open(path, oo)), false, {}};
  t.created = t.dev.created();
  auto fail = [&](fsio::Error e) -> fsio::Error {
    if (t.created) (void)t.dev.remove_created();
    return e;
  };
  if (im.size && t.dev.size() < *im.size)
    return fail(make_error(Errc::invalid_argument, size_text(t.dev.size()) + (o.offset ? " from --offset on" : "") +
                                                       " is smaller than the image, " + size_text(*im.size))
                    .at(path));
  if (!t.created) {
    auto sigs = fsio::check_overwrite(path, o.offset, im.size, o.force, "restoring");
    if (!sigs) return fail(std::move(sigs).error());
    t.sigs = std::move(*sigs);
  }
  return t;
}

// Every target checked; all refusals named together, and then none is written.
fsio::Result<std::vector<Opened>> open_targets(const std::vector<std::string>& targets, const Image& im,
                                               const ManyOptions& o) {
  std::vector<Opened> opened;
  std::vector<fsio::Error> refused;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (auto st = check_target_apart(targets, i, im, o); !st) {
      refused.push_back(std::move(st).error());
      continue;
    }
    auto t = open_target(targets[i], im, o);
    if (!t) refused.push_back(std::move(t).error());
    else opened.push_back(std::move(*t));
  }
  if (refused.empty()) return opened;
  for (auto& t : opened)
    if (t.created) (void)t.dev.remove_created();
  if (targets.size() == 1) return refused[0];
  std::string msg = std::to_string(refused.size()) + " of " + std::to_string(targets.size()) +
                    " targets refused; nothing was written to any of them:";
  bool same = true;
  for (const auto& e : refused) {
    msg += "\n  " + e.message();
    same &= e.code == refused[0].code;
  }
  return make_error(same ? refused[0].code : Errc::busy, msg);
}

}  // namespace

bool ManyReport::ok() const {
  if (input_error) return false;
  for (const auto& t : targets)
    if (!t.written || (verify && !t.verified())) return false;
  return true;
}

fsio::Result<ManyReport> restore_many(StreamReader& in, InputKind kind, const std::vector<std::string>& targets,
                                      const ManyOptions& o) {
  auto im = FSIO_TRY(open_image(in, kind, o));
  auto opened = FSIO_TRY(open_targets(targets, im, o));
  ManyReport rep;
  rep.kind = kind;
  rep.detail = im.detail;
  rep.image_bytes = im.size;
  rep.verify = o.verify;
  rep.dry_run = o.dry_run;
  WrittenMap written;
  run_targets(im, opened, o, rep, o.verify ? &written : nullptr);
  if (o.verify && !o.dry_run && !rep.input_error) verify_targets(opened, o, written, rep);
  remove_failed_creations(opened, rep);
  return rep;
}

}  // namespace img
