// fsimg restore IN TARGET...: one image onto several targets at once, or
// any image but an fsimg stream, or with --verify or --bmap
// (img/multi.hpp). One result line per target, or --json listing each.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cmd/common.hpp"
#include "cmd/fsimg.hpp"
#include "cmd/img/multi.hpp"
#include "libfsio/size.hpp"

namespace fsimg {
namespace {

using fsio::Errc;
using nlohmann::json;

constexpr const char* kPauseVar = "FSIMG_PAUSE_BEFORE_VERIFY";

const char* kind_name(img::InputKind k) {
  switch (k) {
    case img::InputKind::fsimg: return "fsimg";
    case img::InputKind::raw: return "raw";
    case img::InputKind::zstd: return "zstd";
    case img::InputKind::xz: return "xz";
  }
  return "?";
}

double mbps(std::uint64_t bytes, double secs) { return secs > 0 ? double(bytes) / secs / 1e6 : 0; }

// The test hook: after every target is written and flushed, make FILE and
// wait until it is gone (tests change a byte on a target meanwhile).
// Announced on stderr like FSIO_FAULT, so it is never left on unnoticed.
std::function<void()> pause_hook() {
  const char* file = std::getenv(kPauseVar);
  if (file == nullptr || *file == '\0') return {};
  std::fprintf(stderr,
               "%s: note: %s=%s is set: after writing, fsimg waits for that file to be removed before it "
               "reads the targets back\n",
               kTool, kPauseVar, file);
  return [path = std::string(file)] {
    if (FILE* f = std::fopen(path.c_str(), "w")) std::fclose(f);
    struct stat st {};
    while (::stat(path.c_str(), &st) == 0 && !fsio::InterruptGuard::requested())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
}

json readback_json(const img::TargetReport& t) {
  if (t.verify_error) return {{"error", t.verify_error->message()}};
  if (!t.readback) return nullptr;
  const auto& r = *t.readback;
  json d = nullptr;
  if (r.difference)
    d = {{"offset", r.difference->offset}, {"exact", r.difference->exact}, {"text", r.difference->text}};
  return {{"direct", r.direct},   {"cache_note", r.cache_note},       {"bytes", r.bytes},
          {"seconds", r.seconds}, {"mbps", mbps(r.bytes, r.seconds)}, {"difference", d}};
}

json target_json(const img::TargetReport& t) {
  const auto& c = t.counts;
  return {{"target", t.path},
          {"written", t.written},
          {"bytes_written", t.bytes_written()},
          {"data_bytes", c.data_bytes},
          {"zero_written", c.zero_written},
          {"zero_punched", c.zero_punched},
          {"zero_skipped", c.zero_skipped},
          {"kept_bytes", c.kept_bytes},
          {"head_bytes", c.head_bytes},
          {"zeroing", c.zeroing},
          {"wiped_signatures", t.wiped_signatures},
          {"direct", t.direct},
          {"created", t.created},
          {"seconds", t.seconds},
          {"mbps", mbps(t.bytes_written(), t.seconds)},
          {"error", t.error ? json(t.error->message()) : json(nullptr)},
          {"holds", t.holds},
          {"verified", t.verified()},
          {"verify", readback_json(t)}};
}

void print_json(const Args& a, const img::ManyReport& r) {
  json targets = json::array();
  for (const auto& t : r.targets) targets.push_back(target_json(t));
  json out = {{"in", a.in},
              {"kind", kind_name(r.kind)},
              {"detail", r.detail},
              {"image_bytes", r.image_bytes ? json(*r.image_bytes) : json(nullptr)},
              {"read_bytes", r.read_bytes},
              {"bmap", a.bmap},
              {"dry_run", r.dry_run},
              {"verify", r.verify},
              {"ok", r.ok()},
              {"error", r.input_error ? json(r.input_error->message()) : json(nullptr)},
              {"targets", targets}};
  std::cout << out.dump(2) << '\n';
}

std::string verify_text(const img::TargetReport& t) {
  if (t.verify_error) return "; NOT VERIFIED: " + t.verify_error->message();
  if (!t.readback) return "";
  const auto& r = *t.readback;
  if (r.difference) return "; VERIFY FAILED: " + r.difference->text;
  char text[96];
  std::snprintf(text, sizeof text, "; verified: %s read back in %.2f s, %.0f MB/s, ",
                fsio::format_size(r.bytes).c_str(), r.seconds, mbps(r.bytes, r.seconds));
  return text + (r.direct ? std::string("O_DIRECT") : r.cache_note);
}

void print_target(const img::TargetReport& t, bool dry_run) {
  const auto& c = t.counts;
  std::string line = t.path + ": ";
  if (t.written || dry_run) {
    char text[160];
    std::snprintf(text, sizeof text, "%s%s written (%s of data), zeros: %s by %s; %.2f s, %.0f MB/s",
                  dry_run ? "would be " : "", fsio::format_size(t.bytes_written()).c_str(),
                  fsio::format_size(c.data_bytes).c_str(), fsio::format_size(c.zero_punched).c_str(),
                  c.zeroing == "written" ? "punching" : c.zeroing.c_str(), t.seconds,
                  mbps(t.bytes_written(), t.seconds));
    line += text;
    if (c.kept_bytes) line += ", " + fsio::format_size(c.kept_bytes) + " unused left as it was";
    if (c.zero_skipped) line += ", " + fsio::format_size(c.zero_skipped) + " of zeros skipped (a new file reads zeros)";
  } else {
    if (!t.error) line += "stopped";
    else if (t.error->code == Errc::interrupted) line += "stopped by Ctrl-C";
    else line += "FAILED: " + t.error->message();
  }
  if (!t.holds.empty()) line += "; " + t.holds;
  std::printf("%s%s\n", line.c_str(), verify_text(t).c_str());
}

}  // namespace

int run_restore_many(const Args& a, img::StreamReader& in, img::InputKind kind) {
  std::vector<std::string> labels = a.targets;
  fsio::ProgressLines progress(labels, 0, !a.quiet && !a.json && fsio::stderr_is_terminal() && !a.dry_run);
  img::ManyOptions o;
  o.in_path = a.in;
  o.offset = a.offset;
  o.force = a.force;
  o.keep_unused = a.keep_unused;
  o.create = a.create;
  o.dry_run = a.dry_run;
  o.verify = a.verify;
  o.bmap = a.bmap;
  o.threads = a.threads;
  o.before_verify = pause_hook();
  o.progress = &progress;
  auto rep = img::restore_many(in, kind, a.targets, o);
  if (!rep) return fsio::cli::report(kTool, rep.error());
  const auto& r = *rep;
  if (a.json) {
    print_json(a, r);
  } else if (!a.quiet || !r.ok()) {
    std::printf("%s: %s\n", a.in.c_str(), r.detail.c_str());
    for (const auto& t : r.targets) print_target(t, r.dry_run);
  }
  if (r.input_error)
    return fsio::cli::report(kTool, r.input_error->code == Errc::interrupted
                                        ? fsio::make_error(Errc::interrupted,
                                                           "interrupted: every target "
                                                           "stopped between batches")
                                        : *r.input_error);
  if (fsio::InterruptGuard::requested())
    return fsio::cli::report(kTool, fsio::make_error(Errc::interrupted, "interrupted"));
  if (r.ok()) return fsio::cli::exit_ok;
  std::size_t bad = 0;
  for (const auto& t : r.targets) bad += !t.written || (r.verify && !t.verified());
  std::fprintf(stderr, "%s: %zu of %zu targets %s\n", kTool, bad, r.targets.size(),
               r.verify ? "failed or did not verify" : "failed");
  return fsio::cli::exit_failure;
}

}  // namespace fsimg
