// The promise extwb's writing commands make (extwb.8, "a refused command
// writes nothing"): put, mkdir, rm and rmdir check everything first, and
// when a check refuses, nothing has been written.
//
// Each command runs on a fresh copy of the (damaged) image, opened for
// writing as extwb opens it (the write gate runs at open). Two witnesses
// record writes: the queue's counters (every write and flush the library
// issues) and the image's bytes compared with the input (anything that
// reached the device by any path). A command that fails with a refusal
// (any error but an I/O error: corrupt, unsupported, busy, not found,
// invalid argument) after a write was issued aborts, naming the command.
// Commands that succeed may write, of course.
//
// FSIO_FUZZ_SKIP=VERB[,VERB...] (put, mkdir, rm) leaves those commands out:
// with a known defect in one of them, fuzzing can still look at the others.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ext/fs.hpp"
#include "ext/inspect.hpp"
#include "ext/ops.hpp"
#include "tests/fuzz/mem_image.hpp"

namespace {

// A small file's bytes, from memory.
class MemSource : public ext::Source {
 public:
  explicit MemSource(std::size_t bytes) : left_(bytes), size_(bytes) {}
  fsio::Result<std::size_t> read(std::span<std::byte> buf) override {
    const std::size_t n = std::min(buf.size(), left_);
    std::memset(buf.data(), 0x5a, n);
    left_ -= n;
    return n;
  }
  std::optional<std::uint64_t> size() const override { return size_; }

 private:
  std::size_t left_;
  std::uint64_t size_;
};

using Command = std::function<fsio::Status(ext::Filesystem&)>;

struct Named {
  std::string name;
  Command run;
};

ext::OpenOptions write_options() {
  ext::OpenOptions o;
  o.write = true;
  o.direct = false;
  o.engine = fsio::EngineKind::psync;
  return o;
}

ext::PutOptions put_options(bool force) {
  ext::PutOptions o;
  o.force = force;
  o.parents = true;
  o.now = {1700000000, 0};
  o.writeback.dirty_limit = 1u << 20;
  o.writeback.chunk = 256u << 10;
  return o;
}

fsio::Status put(ext::Filesystem& fs, const std::string& dest, bool force, std::size_t bytes) {
  MemSource src(bytes);
  auto r = ext::put_file(fs, dest, src, put_options(force));
  if (!r) return std::move(r).error();
  return {};
}

fsio::Status mkdir(ext::Filesystem& fs, const std::string& path, bool parents) {
  auto r = ext::make_dirs(fs, path, parents, {0755, 0, 0}, {1700000000, 0}, false);
  if (!r) return std::move(r).error();
  return {};
}

fsio::Status rm(ext::Filesystem& fs, const std::string& path) {
  auto r = ext::remove_path(fs, path, {1700000000, 0}, false);
  if (!r) return std::move(r).error();
  return {};
}

// The commands to try: new names, and up to a few names the root holds
// (rm of each, rmdir of a directory, put -f over a file, mkdir beneath).
std::vector<Named> commands(ext::Filesystem& fs) {
  std::vector<Named> out = {
      {"put /fuzz.bin", [](ext::Filesystem& f) { return put(f, "/fuzz.bin", false, 3000); }},
      {"put -p /new/dir/f", [](ext::Filesystem& f) { return put(f, "/new/dir/f", false, 100); }},
      {"mkdir /fuzzdir", [](ext::Filesystem& f) { return mkdir(f, "/fuzzdir", false); }},
      {"mkdir -p /a/b/c", [](ext::Filesystem& f) { return mkdir(f, "/a/b/c", true); }},
      {"rm /no-such-name", [](ext::Filesystem& f) { return rm(f, "/no-such-name"); }},
  };
  auto entries = ext::list_dir(fs, "/", false);
  if (!entries) return out;
  std::size_t taken = 0;
  for (const auto& e : *entries) {
    if (++taken > 6) break;
    const std::string path = "/" + e.name;
    out.push_back({"rm " + path, [path](ext::Filesystem& f) { return rm(f, path); }});
    if (e.file_type == 2) {  // EXT4_FT_DIR
      out.push_back({"mkdir " + path + "/sub", [path](ext::Filesystem& f) { return mkdir(f, path + "/sub", false); }});
      out.push_back({"put " + path + "/f", [path](ext::Filesystem& f) { return put(f, path + "/f", false, 5000); }});
    } else {
      out.push_back({"put -f " + path, [path](ext::Filesystem& f) { return put(f, path, true, 2000); }});
    }
  }
  return out;
}

[[noreturn]] void wrote_then_refused(const std::string& command, const fsio::Error& e, const fsio::IoStats& s,
                                     bool changed) {
  std::fprintf(stderr,
               "fuzz_ext_write_gate: '%s' was refused (%s: %s) after writing: %llu bytes written, %llu flushes, "
               "image %s\n",
               command.c_str(), fsio::errc_name(e.code), e.message().c_str(), (unsigned long long)s.bytes_written,
               (unsigned long long)s.flushes, changed ? "changed" : "unchanged");
  std::abort();
}

// True when FSIO_FUZZ_SKIP names the command's verb (its first word).
bool skipped(const std::string& command) {
  static const std::string skip = [] {
    const char* s = std::getenv("FSIO_FUZZ_SKIP");
    return "," + std::string(s ? s : "") + ",";
  }();
  return skip.find("," + command.substr(0, command.find(' ')) + ",") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const std::uint64_t padded = fsio::fuzz::padded_size(size, fsio::fuzz::ext_declared_size(in));
  std::vector<Named> cmds;
  {
    auto& image = fsio::fuzz::MemImage::load(in, padded);
    auto fs = ext::Filesystem::open(image.path(), write_options());
    if (!fs) return 0;  // refused at the gate (or not ext): the open itself writes nothing
    cmds = commands(**fs);
  }
  for (const auto& c : cmds) {
    if (skipped(c.name)) continue;
    auto& image = fsio::fuzz::MemImage::load(in, padded);
    const std::vector<std::uint8_t> before = image.contents();
    auto fs = ext::Filesystem::open(image.path(), write_options());
    if (!fs) {
      if (image.contents() != before) wrote_then_refused(c.name + " (open)", fs.error(), {}, true);
      continue;
    }
    auto st = c.run(**fs);
    if (st || st.error().code == fsio::Errc::io) continue;
    const fsio::IoStats& s = (*fs)->queue().stats();
    const bool changed = image.contents() != before;
    if (s.bytes_written != 0 || s.flushes != 0 || changed) wrote_then_refused(c.name, st.error(), s, changed);
  }
  return 0;
}
