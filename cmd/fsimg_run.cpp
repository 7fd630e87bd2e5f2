// The four fsimg commands: open the stream ends, call img/, print.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>

#include "cmd/common.hpp"
#include "cmd/fsimg.hpp"
#include "libfsio/apart.hpp"
#include "libfsio/size.hpp"
#include "version.hpp"

namespace fsimg {
namespace {

using fsio::Errc;
using fsio::make_error;
using nlohmann::json;

int fail(const fsio::Error& e) { return fsio::cli::report(kTool, e); }
bool progress_on(const Args& a) { return !a.quiet && !a.json && fsio::stderr_is_terminal(); }
double ratio(std::uint64_t a, std::uint64_t b) { return b ? double(a) / double(b) : 0; }

json header_json(const img::Header& h) {
  return {{"fs_type", img::fs_type_name(h.fs_type)},
          {"block_size", h.block_size},
          {"image_bytes", h.image_bytes},
          {"source_bytes", h.source_bytes},
          {"mapped_bytes", h.mapped_blocks * h.block_size},
          {"runs", h.runs.size()},
          {"frame_bytes", h.frame_bytes},
          {"level", h.level},
          {"tool", h.tool},
          {"created", h.created}};
}

// OUT for save: stdout, a new file, or (with --force) a file replaced; never
// a block device, nor anything sharing storage with the source (checked
// before, by check_out_apart). *created: remove it on failure.
fsio::Result<int> open_out(const Args& a, bool* created) {
  if (a.out == "-") {
    if (::isatty(STDOUT_FILENO))
      return make_error(Errc::invalid_argument, "stdout is a terminal; send the image to a file or a pipe");
    return STDOUT_FILENO;
  }
  struct stat st {};
  int flags = O_WRONLY | O_CLOEXEC;
  if (::stat(a.out.c_str(), &st) == 0) {
    if (S_ISBLK(st.st_mode))
      return make_error(Errc::invalid_argument, a.out +
                                                    ": a block device; save writes an image file (fsimg restore "
                                                    "puts an image onto a device)");
    if (S_ISDIR(st.st_mode)) return make_error(Errc::invalid_argument, a.out + ": a directory");
    if (S_ISREG(st.st_mode) && !a.force) return make_error(Errc::busy, a.out + ": exists (use --force to replace it)");
    if (S_ISREG(st.st_mode)) flags |= O_TRUNC;
  } else {
    flags |= O_CREAT | O_EXCL;
    *created = true;
  }
  const int fd = ::open(a.out.c_str(), flags, 0644);
  if (fd < 0) {
    *created = false;
    return fsio::errno_error(a.out + ": open for writing");
  }
  return fd;
}

// What save reads and what it writes must not share storage: OUT (or
// standard output, when it is a file or a device) replaced while a loop
// device over it is the source would destroy the source as it is read.
fsio::Status check_out_apart(const Args& a) {
  const bool out_stdout = a.out == "-";
  const fsio::StorageRef out{"", out_stdout ? "standard output" : a.out, out_stdout ? STDOUT_FILENO : -1};
  return fsio::check_apart(out, {{"the source", a.source, -1, a.offset}});
}

// Restore writes [offset, offset + the image) of the target; the stream it
// reads (a file, or standard input) must lie elsewhere.
fsio::Status check_input_apart(const Args& a, const img::Header& h) {
  const std::uint64_t end = a.offset > fsio::kToEnd - h.image_bytes ? fsio::kToEnd : a.offset + h.image_bytes;
  const bool in_stdin = a.in == "-";
  return fsio::check_apart({"", a.target, -1, a.offset, end},
                           {{"the input", in_stdin ? "standard input" : a.in, in_stdin ? STDIN_FILENO : -1}});
}

// Opens IN (a file, or "-" for a pipe) and runs `body` on its reader; an
// error on the way is reported and its exit code returned.
int with_input(const std::string& in, const std::function<int(img::StreamReader&)>& body) {
  int fd = STDIN_FILENO;
  if (in == "-") {
    if (::isatty(STDIN_FILENO))
      return fail(make_error(Errc::invalid_argument, "stdin is a terminal; pipe an image in"));
  } else if ((fd = ::open(in.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    return fail(fsio::errno_error(in + ": open"));
  }
  img::StreamReader stream(fd, in == "-" ? "stdin" : in);
  return body(stream);
}

// The same, with the fsimg header read.
int with_stream(const std::string& in, const std::function<int(img::ImageReader&)>& body) {
  return with_input(in, [&](img::StreamReader& stream) {
    auto reader = img::ImageReader::open(stream);
    if (!reader) return fail(reader.error());
    return body(*reader);
  });
}

// The header's creation time: SOURCE_DATE_EPOCH's seconds when it is set
// (cmd/common.hpp), else the clock's.
fsio::Result<std::uint64_t> created_time() {
  if (const auto sde = FSIO_TRY(fsio::cli::source_date_epoch())) return std::uint64_t(*sde);
  return std::uint64_t(std::time(nullptr));
}

void print_source(std::FILE* f, const img::Source& p) {
  const img::Header& h = p.header;
  const std::uint64_t mapped = h.mapped_blocks * h.block_size;
  std::fprintf(f, "%s: %s; %s used of %s (%.1f%%) in %zu runs of %u-byte blocks\n", p.path.c_str(), p.detail.c_str(),
               fsio::format_size(mapped).c_str(), fsio::format_size(h.image_bytes).c_str(),
               100.0 * ratio(mapped, h.image_bytes), h.runs.size(), h.block_size);
  for (const auto& n : p.notes) std::fprintf(f, "%s: note: %s\n", p.path.c_str(), n.c_str());
}

// --frame-size: whole blocks, up to 64 MiB.
fsio::Status check_frame_size(std::uint64_t frame_bytes, std::uint32_t bs) {
  if (frame_bytes < bs || frame_bytes % bs || frame_bytes > img::kMaxFrameBytes)
    return make_error(Errc::invalid_argument, "--frame-size " + std::to_string(frame_bytes) +
                                                  ": must be a multiple of the block size (" + std::to_string(bs) +
                                                  ") up to 64 MiB");
  return {};
}

// What save made: the JSON document (`out` holds the source's part) or one
// line of text.
void print_saved(const Args& a, const img::Source& source, const img::SaveReport& r, json& out, std::FILE* text) {
  if (a.json) {
    out["header"] = header_json(source.header);
    out.update({{"frames", r.frames},
                {"threads", r.threads},
                {"mapped_bytes", r.mapped_bytes},
                {"zero_bytes", r.zero_bytes},
                {"stored_bytes", r.stored_bytes},
                {"compressed_bytes", r.compressed_bytes},
                {"stream_bytes", r.stream_bytes},
                {"ratio", ratio(r.mapped_bytes, r.stream_bytes)},
                {"seconds", r.seconds},
                {"direct", r.direct},
                {"read_stats", fsio::cli::to_json(r.read_stats)}});
    std::cout << out.dump(2) << '\n';
  } else if (!a.quiet) {
    std::fprintf(text, "%s: %s in %u frames (%s all-zero, elided), %.2f:1, %.2f s, %.0f MB/s read, %u threads\n",
                 a.out.c_str(), fsio::format_size(r.stream_bytes).c_str(), r.frames,
                 fsio::format_size(r.zero_bytes).c_str(), ratio(r.mapped_bytes, r.stream_bytes), r.seconds,
                 r.seconds > 0 ? double(r.mapped_bytes) / r.seconds / 1e6 : 0.0, r.threads);
  }
}

}  // namespace

int run_save(const Args& a) {
  auto choice = img::parse_fs_choice(a.fs);
  if (!choice) return fail(choice.error());
  const auto stamp = created_time();
  if (!stamp) return fail(stamp.error());
  if (a.out == "-" && a.json)
    return fail(make_error(Errc::invalid_argument, "--json with OUT -: stdout carries the image"));
  fsio::InterruptGuard interrupt;
  if (auto st = check_out_apart(a); !st) return fail(st.error());
  auto source = img::map_source(a.source, {*choice, a.offset, fsio::EngineKind::automatic});
  if (!source) return fail(source.error());
  std::FILE* text = a.out == "-" ? stderr : stdout;
  json out = {{"source", a.source}, {"out", a.out}, {"detail", source->detail}, {"notes", source->notes}};
  if (a.dry_run) {
    out["header"] = header_json(source->header);
    if (a.json) std::cout << out.dump(2) << '\n';
    else if (!a.quiet) print_source(text, *source);
    return fsio::cli::exit_ok;
  }
  if (auto st = check_frame_size(a.frame_bytes, source->header.block_size); !st) return fail(st.error());
  bool created = false;
  auto fd = open_out(a, &created);
  if (!fd) return fail(fd.error());
  if (!a.quiet && !a.json) print_source(text, *source);
  fsio::Progress progress("fsimg save", source->header.mapped_blocks * source->header.block_size, progress_on(a));
  img::SaveOptions so{a.level,
                      a.threads,
                      std::uint32_t(a.frame_bytes),
                      std::string("fsimg ") + fsio::kVersion,
                      *stamp,
                      fsio::EngineKind::automatic,
                      &progress};
  auto rep = img::save(*source, *fd, a.out, so);
  if (*fd != STDOUT_FILENO && ::close(*fd) != 0 && rep) rep = fsio::errno_error(a.out + ": close");
  if (!rep) {
    std::string msg = rep.error().code == Errc::interrupted ? a.out + ": interrupted, the image is incomplete"
                                                            : rep.error().message();
    if (created) msg += ::unlink(a.out.c_str()) == 0 ? "; removed " + a.out : "; could not remove " + a.out;
    return fail(fsio::Error{rep.error().code, 0, msg});
  }
  print_saved(a, *source, *rep, out, text);
  return fsio::cli::exit_ok;
}

// An fsimg stream to one target, without --verify: restore() (restore.hpp).
int restore_one(const Args& a, img::StreamReader& stream) {
  auto image = img::ImageReader::open(stream);
  if (!image) return fail(image.error());
  img::ImageReader& reader = *image;
  const img::Header& h = reader.header();
  if (auto st = check_input_apart(a, h); !st) return fail(st.error());
  fsio::Progress progress("fsimg restore", h.image_bytes, progress_on(a) && !a.dry_run);
  img::RestoreOptions ro{a.offset, a.force, a.keep_unused, a.create, a.dry_run, a.threads, fsio::EngineKind::automatic,
                         &progress};
  auto rep = img::restore(reader, a.target, ro);
  if (!rep) return fail(rep.error());
  const auto& r = *rep;
  const double mbps = r.seconds > 0 ? double(r.data_bytes) / r.seconds / 1e6 : 0;
  if (a.json) {
    json out = {{"in", a.in},
                {"target", a.target},
                {"dry_run", a.dry_run},
                {"header", header_json(h)},
                {"frames", r.frames},
                {"data_bytes", r.data_bytes},
                {"zero_written", r.zero_written},
                {"zero_punched", r.zero_punched},
                {"kept_bytes", r.kept_bytes},
                {"wiped_signatures", r.wiped_signatures},
                {"zeroing", r.zeroing},
                {"direct", r.direct},
                {"created", r.created},
                {"seconds", r.seconds},
                {"write_stats", fsio::cli::to_json(r.write_stats)}};
    std::cout << out.dump(2) << '\n';
  } else if (!a.quiet) {
    std::printf(
        "%s%s: %s %s filesystem from %s: %s of data in %u frames, zeros: %s written, %s by %s%s; %.2f s, "
        "%.0f MB/s\n",
        a.dry_run ? "would restore " : "", a.target.c_str(), fsio::format_size(h.image_bytes).c_str(),
        img::fs_type_name(h.fs_type), a.in.c_str(), fsio::format_size(r.data_bytes).c_str(), r.frames,
        fsio::format_size(r.zero_written).c_str(), fsio::format_size(r.zero_punched).c_str(),
        r.zeroing == "written" ? "punching" : r.zeroing.c_str(),
        a.keep_unused ? (", " + fsio::format_size(r.kept_bytes) + " unused left as it was").c_str() : "", r.seconds,
        mbps);
  }
  return fsio::cli::exit_ok;
}

int run_restore(const Args& a) {
  fsio::InterruptGuard interrupt;
  return with_input(a.in, [&](img::StreamReader& stream) -> int {
    auto kind = img::detect_input(stream);
    if (!kind) return fail(kind.error());
    if (*kind == img::InputKind::fsimg && a.targets.size() == 1 && !a.verify && a.bmap.empty()) {
      Args one = a;
      one.target = a.targets[0];
      return restore_one(one, stream);
    }
    return run_restore_many(a, stream, *kind);
  });
}

int run_verify(const Args& a) {
  fsio::InterruptGuard interrupt;
  return with_stream(a.in, [&](img::ImageReader& reader) -> int {
    fsio::Progress progress("fsimg verify", reader.header().image_bytes, progress_on(a));
    auto rep = img::verify(reader, a.target, {a.offset, a.unused, a.threads, fsio::EngineKind::automatic, &progress});
    if (!rep) return fail(rep.error());
    if (a.json) {
      std::cout << json{{"in", a.in},
                        {"target", a.target},
                        {"identical", !rep->difference},
                        {"difference", rep->difference.value_or("")},
                        {"frames", rep->frames},
                        {"compared_bytes", rep->compared_bytes}}
                       .dump(2)
                << '\n';
    } else if (rep->difference) {
      std::fprintf(stderr, "%s: %s: %s\n", kTool, a.target.c_str(), rep->difference->c_str());
    } else if (!a.quiet) {
      std::printf("%s: identical to %s over %s compared%s\n", a.target.c_str(), a.in.c_str(),
                  fsio::format_size(rep->compared_bytes).c_str(), a.unused ? " (unused blocks read as zeros)" : "");
    }
    return rep->difference ? fsio::cli::exit_failure : fsio::cli::exit_ok;
  });
}

int run_info(const Args& a) {
  return with_stream(a.in, [&](img::ImageReader& reader) -> int {
    const img::Header& h = reader.header();
    auto rep = img::info(reader);
    if (!rep) return fail(rep.error());
    const std::uint64_t mapped = h.mapped_blocks * h.block_size;
    if (a.json) {
      std::cout << json{{"in", a.in},
                        {"header", header_json(h)},
                        {"frames", rep->frames},
                        {"stored_bytes", rep->stored_bytes},
                        {"zero_bytes", rep->zero_bytes},
                        {"compressed_bytes", rep->compressed_bytes},
                        {"stream_bytes", rep->stream_bytes},
                        {"ratio", ratio(mapped, rep->stream_bytes)}}
                       .dump(2)
                << '\n';
      return fsio::cli::exit_ok;
    }
    const std::time_t t = std::time_t(h.created);
    char when[32] = "?";
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
    std::printf("%s: fsimg image, format version %u, made by %s at %s\n", a.in.c_str(), unsigned(img::kVersion),
                h.tool.c_str(), when);
    std::printf("filesystem: %s, %s (%" PRIu64 " bytes) of a %s source, %u-byte blocks\n", img::fs_type_name(h.fs_type),
                fsio::format_size(h.image_bytes).c_str(), h.image_bytes, fsio::format_size(h.source_bytes).c_str(),
                h.block_size);
    std::printf("map: %zu runs, %" PRIu64 " blocks, %s (%.1f%% of the filesystem)\n", h.runs.size(), h.mapped_blocks,
                fsio::format_size(mapped).c_str(), 100.0 * ratio(mapped, h.image_bytes));
    std::printf("frames: %u of up to %s, zstd level %d: %s stored, %s of all-zero blocks elided, %s compressed\n",
                rep->frames, fsio::format_size(h.frame_bytes).c_str(), h.level,
                fsio::format_size(rep->stored_bytes).c_str(), fsio::format_size(rep->zero_bytes).c_str(),
                fsio::format_size(rep->compressed_bytes).c_str());
    std::printf("stream: %" PRIu64 " bytes; ratio %.2f:1 to the used blocks, %.2f:1 to the filesystem\n",
                rep->stream_bytes, ratio(mapped, rep->stream_bytes), ratio(h.image_bytes, rep->stream_bytes));
    return fsio::cli::exit_ok;
  });
}

}  // namespace fsimg
