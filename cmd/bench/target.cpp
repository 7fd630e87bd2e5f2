// Opening a benchmark's target, and the refusals that come before any I/O:
// in use and read-only (Device::open, no option overrides them), a fio job
// file (never a target), other text (scripts, configs: --force), and
// filesystem or partition-table signatures (libblkid: --force).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "cmd/bench/fio_job.hpp"
#include "cmd/bench/run.hpp"
#include "libfsio/signatures.hpp"

namespace bench {
namespace {

using fsio::Errc;
using fsio::make_error;

// The first 64 KiB of a regular file, or "" for anything else (a block
// device, a missing or empty file, one we cannot read).
std::string head_of_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string head(std::min<std::uint64_t>(std::uint64_t(st.st_size), 64u << 10), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::pread(fd, head.data() + got, head.size() - got, off_t(got));
    if (n <= 0) break;
    got += std::size_t(n);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

// A write would replace text someone wrote by hand: a fio job file never
// (whatever --force says: `ddbench --rw=write job.fio` runs the job file,
// it does not write over it), a script or config only with --force.
fsio::Status check_text_target(const std::string& path, bool force) {
  const std::string head = head_of_regular_file(path);
  const auto kind = describe_text(head);
  if (!kind) return {};
  if (looks_like_fio_job(head))
    return make_error(Errc::busy, path +
                                      ": looks like a fio job file (it starts with a [section]); ddbench never "
                                      "writes over a job file, even with --force (to run it: ddbench " +
                                      path + ")");
  if (force) return {};
  return make_error(Errc::busy, path + ": looks like " + *kind +
                                    ", not a disk image; writing would destroy it (use --force to overwrite it)");
}

}  // namespace

fsio::Result<fsio::Device> open_bench_target(const std::string& path, const BenchOptions& o) {
  FSIO_TRY(validate(o));
  fsio::OpenOptions open;
  open.write = bench_writes(o.rw) || o.create_size.has_value();
  open.direct = o.direct;
  open.create_size = o.create_size;
  open.exclusive = o.exclusive;
  // The refusals no option overrides come first (a mounted target must not
  // be met with "use --force"), then text and signatures; all through
  // read-only opens, since opening for writing with create_size would grow
  // the file.
  if (open.write && ::access(path.c_str(), F_OK) == 0) {
    fsio::OpenOptions check;
    check.check_write = true;
    check.direct = false;
    check.exclusive = o.exclusive;
    FSIO_TRY(fsio::Device::open(path, check));
  }
  if (bench_writes(o.rw)) {
    FSIO_TRY(check_text_target(path, o.force));
    if (!o.force) FSIO_TRY(fsio::check_overwrite(path, 0, std::nullopt, false, "writing"));
  }
  return fsio::Device::open(path, open);
}

}  // namespace bench
