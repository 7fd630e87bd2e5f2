// The archive source: a tar (ustar, GNU, pax; plain, gzip, zstd or xz) read
// with libarchive. list() reads every header (pass 1) and builds the tree as
// `tar -x` would leave it (a later member replaces an earlier one of the
// same path, parents that have no member of their own are made); symbolic
// links are resolved inside the archive (an absolute target from its root).
// read_contents() reads the archive again (pass 2) and hands each member's
// data to the sink in archive order. Standard input that cannot be read
// twice is kept in an unnamed temporary file during pass 1.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>

#include "cmd/tree/libarchive.hpp"
#include "cmd/tree/source.hpp"
#include "cmd/tree/tar_tree.hpp"
#include "libfsio/pipe.hpp"
#include "libfsio/progress.hpp"

namespace fsio::tree {

namespace {

constexpr std::size_t kReadBlock = 1u << 20;

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

// Standard input from a pipe, copied into the spool as pass 1 reads it.
struct Tee {
  int in = STDIN_FILENO;
  int spool = -1;
  FdKind kind = FdKind::other;
  std::vector<std::byte> buf = std::vector<std::byte>(kReadBlock);
  std::uint64_t total = 0;
  Status status;
};

la_ssize_t tee_read(archive* a, void* data, const void** out) {
  auto* t = static_cast<Tee*>(data);
  auto n = read_some(t->in, t->kind, t->buf, "standard input", t->total);
  if (n && *n > 0) {
    auto w =
        write_all(t->spool, FdKind::other, std::span(t->buf).first(*n), "the spool file for standard input", t->total);
    if (!w) n = std::move(w).error();
  }
  if (!n) {
    t->status = std::move(n).error();
    archive_set_error(a, EIO, "%s", t->status.error().message().c_str());
    return -1;
  }
  t->total += *n;
  *out = t->buf.data();
  return la_ssize_t(*n);
}

Result<int> make_spool(const std::string& dir_option) {
  std::string dir = dir_option;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp && *tmp ? tmp : "/var/tmp";
  }
  const int fd = ::open(dir.c_str(), O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
  if (fd < 0) return errno_error("make a temporary file in " + dir + " to keep standard input in");
  return fd;
}

class TarSource final : public TreeSource {
 public:
  TarSource(std::string path, const SourceOptions& o) : path_(std::move(path)), opt_(o) {}
  ~TarSource() override {
    if (spool_ >= 0) ::close(spool_);
    if (fd_ >= 0 && !stdin_) ::close(fd_);
  }
  Result<Tree> list() override;
  Status read_contents(ContentSink& sink) override;
  std::vector<StorageRef> storage() const override;
  Status open_input();

 private:
  std::string name() const { return path_ == "-" ? std::string("standard input") : path_; }
  Result<ArchivePtr> start(bool first_pass);
  Error archive_error(archive* a, const std::string& what) const;
  Status deliver(archive* a, const MemberShape& member, ContentSink& sink) const;
  Status deliver_sparse(archive* a, const MemberShape& member, ContentSink& sink) const;

  std::string path_;
  SourceOptions opt_;
  int fd_ = -1;  // the archive file, or standard input
  bool stdin_ = false;
  std::int64_t start_ = 0;  // where the archive starts in fd_ (standard input may be part-read)
  int spool_ = -1;          // standard input kept for pass 2
  Tee tee_;
  TarTree shape_;  // what pass 1 found
};

Status TarSource::open_input() {
  stdin_ = path_ == "-";
  if (stdin_) {
    fd_ = STDIN_FILENO;
    start_ = ::lseek(fd_, 0, SEEK_CUR);
    if (start_ < 0) {  // a pipe or a socket: pass 1 keeps a copy
      spool_ = FSIO_TRY(make_spool(opt_.spool_dir));
      tee_.spool = spool_;
      tee_.kind = fd_kind(fd_);
    }
    return {};
  }
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return errno_error("open " + path_);
  return {};
}

Error TarSource::archive_error(archive* a, const std::string& what) const {
  if (!tee_.status) return Error(tee_.status.error());
  const char* text = archive_error_string(a);
  const int e = archive_errno(a);
  std::string msg = name() + ": " + what + ": " + (text ? text : "libarchive gave no reason");
  return make_error(e == EIO || e == ENOSPC ? Errc::io : Errc::corrupt, msg);
}

Result<ArchivePtr> TarSource::start(bool first_pass) {
  FSIO_TRY(load_libarchive());
  ArchivePtr a(archive_read_new());
  if (!a) return make_error(Errc::io, "libarchive: out of memory");
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_xz(a.get());
  archive_read_support_format_tar(a.get());
  int rc;
  if (spool_ >= 0 && first_pass) {
    rc = archive_read_open(a.get(), &tee_, nullptr, tee_read, nullptr);
  } else {
    const int fd = spool_ >= 0 ? spool_ : fd_;
    if (::lseek(fd, spool_ >= 0 ? 0 : start_, SEEK_SET) < 0) return errno_error("seek in " + name());
    rc = archive_read_open_fd(a.get(), fd, kReadBlock);
  }
  if (rc != ARCHIVE_OK) return archive_error(a.get(), "cannot be read as a tar archive (plain, gzip, zstd or xz)");
  return a;
}

Result<Tree> TarSource::list() {
  ArchivePtr a = FSIO_TRY(start(true));
  TarTreeBuilder builder(name(), opt_.symlinks, opt_.attrs);
  for (;;) {
    if (InterruptGuard::requested())
      return make_error(Errc::interrupted, "interrupted while reading " + name() + "; nothing was written");
    archive_entry* e = nullptr;
    const int rc = archive_read_next_header(a.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return archive_error(a.get(), "reading member " + std::to_string(builder.members()));
    FSIO_TRY(builder.add(e));
    if (archive_read_data_skip(a.get()) < ARCHIVE_WARN)
      return archive_error(a.get(), "reading member " + std::to_string(builder.members()));
  }
  if (builder.members() == 0) return make_error(Errc::corrupt, name() + ": an empty archive (no members)");
  auto tree = FSIO_TRY(builder.finish(shape_));
  if (opt_.holes)
    for (const MemberShape& m : shape_.members)
      if (m.sparse && m.content != kNoContent)
        tree.contents[m.content].sparse = true, tree.contents[m.content].data = m.data;
  tree.label = name();
  tree.separator = ": ";
  return tree;
}

// A sparse member's data as libarchive gives it, block by block at its
// offsets. Without SourceOptions::holes the holes between and after the
// blocks are given as zeros (archive_read_data leaves out a trailing hole).
Status TarSource::deliver_sparse(archive* a, const MemberShape& m, ContentSink& sink) const {
  std::uint64_t pos = 0;
  auto put = [&](const std::byte* bytes, std::uint64_t at, std::uint64_t len) -> Status {
    for (std::uint64_t done = 0; done < len;) {
      const std::span<std::byte> room = FSIO_TRY(sink.reserve(m.content, at + done, len - done));
      const std::size_t n = std::size_t(std::min<std::uint64_t>(room.size(), len - done));
      if (bytes) std::copy(bytes + done, bytes + done + n, room.data());
      else std::fill_n(room.data(), n, std::byte{0});
      FSIO_TRY(sink.commit(m.content, at + done, n));
      done += n;
    }
    return {};
  };
  for (;;) {
    const void* buf = nullptr;
    std::size_t len = 0;
    la_int64_t at = 0;
    const int rc = archive_read_data_block(a, &buf, &len, &at);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return archive_error(a, "reading the data of '" + m.raw_path + "'");
    if (at < 0 || std::uint64_t(at) < pos || std::uint64_t(at) + len > m.size)
      return make_error(Errc::corrupt, name() + ": the data of '" + m.raw_path + "' at byte " + std::to_string(at) +
                                           " is out of order or past its size");
    if (!opt_.holes) FSIO_TRY(put(nullptr, pos, std::uint64_t(at) - pos));
    FSIO_TRY(put(static_cast<const std::byte*>(buf), std::uint64_t(at), len));
    pos = std::uint64_t(at) + len;
  }
  return opt_.holes ? Status{} : put(nullptr, pos, m.size - pos);
}

Status TarSource::deliver(archive* a, const MemberShape& m, ContentSink& sink) const {
  if (m.sparse) return deliver_sparse(a, m, sink);
  for (std::uint64_t off = 0; off < m.size;) {
    const std::span<std::byte> room = FSIO_TRY(sink.reserve(m.content, off, m.size - off));
    const std::size_t want = std::size_t(std::min<std::uint64_t>(room.size(), m.size - off));
    const la_ssize_t n = archive_read_data(a, room.data(), want);
    if (n < 0) return archive_error(a, "reading the data of '" + m.raw_path + "'");
    if (n == 0)
      return make_error(Errc::corrupt, name() + ": the data of '" + m.raw_path + "' ends after " + std::to_string(off) +
                                           " of " + std::to_string(m.size) + " bytes");
    FSIO_TRY(sink.commit(m.content, off, std::size_t(n)));
    off += std::uint64_t(n);
  }
  return {};
}

Status TarSource::read_contents(ContentSink& sink) {
  ArchivePtr a = FSIO_TRY(start(false));
  std::size_t left = shape_.contents;
  for (std::size_t m = 0; left > 0; ++m) {
    if (InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted while reading " + name());
    archive_entry* e = nullptr;
    const int rc = archive_read_next_header(a.get(), &e);
    if (rc == ARCHIVE_EOF || m >= shape_.members.size())
      return make_error(Errc::corrupt, name() + ": changed while it was read (fewer members the second time)");
    if (rc < ARCHIVE_WARN) return archive_error(a.get(), "reading member " + std::to_string(m));
    const MemberShape& want = shape_.members[m];
    const MemberInfo now = member_info(e);
    if (now.path != want.raw_path || now.attrs.size != want.size)
      return make_error(Errc::corrupt, name() + ": changed while it was read (member " + std::to_string(m) + " is '" +
                                           now.path + "' of " + std::to_string(now.attrs.size) + " bytes, was '" +
                                           want.raw_path + "' of " + std::to_string(want.size) + ")");
    if (want.content == kNoContent) continue;  // the next header skips its data
    FSIO_TRY(deliver(a.get(), want, sink));
    --left;
  }
  return {};
}

std::vector<StorageRef> TarSource::storage() const {
  if (stdin_) return {{"the archive", "standard input", STDIN_FILENO}};
  return {{"the archive", path_}};
}

}  // namespace

Result<std::unique_ptr<TreeSource>> open_archive(const std::string& path, const SourceOptions& options) {
  auto src = std::make_unique<TarSource>(path, options);
  FSIO_TRY(src->open_input());
  return std::unique_ptr<TreeSource>(std::move(src));
}

Result<std::unique_ptr<TreeSource>> open_source(const std::string& path, const SourceOptions& options) {
  if (path == "-") return open_archive(path, options);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error(path);
  if (S_ISDIR(st.st_mode)) return open_directory(path, options);
  if (S_ISREG(st.st_mode)) return open_archive(path, options);
  return make_error(Errc::invalid_argument, path + ": neither a directory nor a tar archive");
}

}  // namespace fsio::tree
