// restore(), verify() and info() (restore.hpp).
#include "cmd/img/restore.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "cmd/img/decode.hpp"
#include "cmd/img/save.hpp"
#include "cmd/img/target.hpp"
#include "cmd/img/wipe.hpp"
#include "libfsio/created_file.hpp"
#include "libfsio/device.hpp"
#include "libfsio/signatures.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

std::string size_text(std::uint64_t n) { return fsio::format_size(n) + " (" + std::to_string(n) + " bytes)"; }

// O_DIRECT needs every request aligned to the device's unit; an image of
// smaller blocks (FAT with 512-byte units on a 4 KiB-sector disk) goes
// through the page cache instead.
bool direct_fits(const fsio::Device& dev, const Header& h) {
  const std::uint64_t a = dev.topology().dio_offset_align;
  return h.block_size % a == 0 && h.image_bytes % a == 0 && dev.offset() % a == 0;
}

struct Target {
  fsio::Device dev;
  fsio::CreatedFile made;  // the file --create made: removed again on failure
};

// The size --create gives the file: offset + image_bytes, which must fit
// off_t (what ftruncate takes: at most 2^63 - 1 bytes).
fsio::Result<std::uint64_t> create_size(const std::string& image, const Header& h, std::uint64_t offset) {
  constexpr std::uint64_t kMaxFile = UINT64_MAX / 2;
  if (h.image_bytes > kMaxFile)
    return make_error(Errc::corrupt, image + ": the header says image_bytes " + std::to_string(h.image_bytes) +
                                         ": no file can be that large (at most 2^63 - 1 bytes), so no filesystem "
                                         "of that size was saved; the header is damaged or forged");
  if (offset > kMaxFile - h.image_bytes)
    return make_error(Errc::invalid_argument, "--offset " + std::to_string(offset) + " + the image's " +
                                                  std::to_string(h.image_bytes) +
                                                  " bytes (image_bytes) is past "
                                                  "the largest file size (2^63 - 1 bytes)");
  return offset + h.image_bytes;
}

fsio::Result<Target> open_target(const std::string& image, const std::string& path, const Header& h,
                                 const RestoreOptions& o) {
  fsio::OpenOptions oo;
  oo.write = !o.dry_run;
  oo.check_write = o.dry_run;
  oo.offset = o.offset;
  if (o.create) {
    if (o.dry_run) return make_error(Errc::invalid_argument, "--create and --dry-run: nothing to check; omit --create");
    oo.create_size = FSIO_TRY(create_size(image, h, o.offset));
    oo.create_new = true;
  }
  auto dev = FSIO_TRY(fsio::Device::open(path, oo));
  fsio::CreatedFile made(dev, "--create");
  Target t{std::move(dev), std::move(made)};
  if (t.dev.size() < h.image_bytes)
    return t.made.fail(
        make_error(Errc::invalid_argument, size_text(t.dev.size()) + (o.offset ? " from --offset on" : "") +
                                               " is smaller than the image's filesystem, " + size_text(h.image_bytes))
            .at(path));
  // The same descriptor, buffered: a second open would meet our own O_EXCL claim.
  if (t.dev.direct() && !direct_fits(t.dev, h))
    if (auto st = t.dev.use_buffered("the image's blocks do not fit the device's direct-I/O unit"); !st)
      return t.made.fail(std::move(st).error());
  return t;
}

// What the target holds after a failed restore, to follow the error (which
// names the failed write's offset and errno). A file --create made is
// removed afterwards, so it gets no advice about running again.
std::string stopped_note(const TargetWriter& w, const Header& h, const fsio::Error& e, bool created) {
  std::string note;
  if (e.sys_errno == ENOSPC) note = "; ENOSPC: the filesystem or device holding the target is full";
  const std::string head = fsio::format_size(std::min(kHeadBytes, h.image_bytes));
  if (w.writing_head())
    return note + "; everything after the first " + head + " was written, and this write was in the first " + head +
           ", which is written last" +
           (created ? std::string() : ": the target may hold part of a filesystem; run fsimg restore --force again");
  note += "; nothing was written past byte " + std::to_string(w.position()) + " of " + std::to_string(h.image_bytes);
  if (created) return note;
  return note + ", and the first " + head +
         " (where the filesystem's signature lives) is written last, so the target holds no filesystem: run "
         "fsimg restore again";
}

}  // namespace

fsio::Result<RestoreReport> restore(ImageReader& reader, const std::string& target, const RestoreOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Header& h = reader.header();
  auto t = FSIO_TRY(open_target(reader.name(), target, h, o));
  fsio::Device& dev = t.dev;
  const bool created = t.made.armed();
  auto run = [&]() -> fsio::Result<RestoreReport> {
    auto sigs = created
                    ? std::vector<fsio::Signature>{}
                    : FSIO_TRY(fsio::check_overwrite(dev.path(), dev.offset(), h.image_bytes, o.force, "restoring"));
    std::optional<fsio::IoQueue> queue;
    if (!o.dry_run) {
      queue.emplace(FSIO_TRY(fsio::IoQueue::create(dev, {.engine = o.engine})));
      FSIO_TRY(wipe_signatures(*queue, sigs, h.image_bytes));
    }
    TargetWriter w(queue ? &*queue : nullptr, h, o.keep_unused, o.progress);
    auto end = decode_frames(reader, resolve_threads(o.threads), [&](Decoded& f) { return w.frame(f); });
    if (end) {
      auto fin = w.finish();
      if (!fin) end = std::move(fin).error();
    }
    if (!end && !o.dry_run) return fsio::Error(end.error()).with_note(stopped_note(w, h, end.error(), created));
    if (!end) return std::move(end).error();
    RestoreReport rep = w.report();
    rep.wiped_signatures = sigs.size();
    rep.direct = dev.direct();
    rep.created = created;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return rep;
  };
  auto rep = run();
  if (!rep) return t.made.fail(std::move(rep).error());
  t.made.keep();
  return rep;
}

fsio::Result<InfoReport> info(ImageReader& reader) {
  InfoReport rep;
  const std::uint64_t bs = reader.header().block_size;
  for (;;) {
    auto rec = FSIO_TRY(reader.next(true));
    if (auto* end = std::get_if<End>(&rec)) {
      rep.stream_bytes = end->stream_bytes + sizeof(RecordHead) + sizeof(EndFixed);
      return rep;
    }
    const auto& f = std::get<FrameRecord>(rec).index;
    rep.frames += 1;
    rep.stored_bytes += f.stored_bytes;
    rep.compressed_bytes += f.compressed_bytes;
    for (const Run& z : f.zero_runs) rep.zero_bytes += z.length * bs;
  }
}

}  // namespace img
