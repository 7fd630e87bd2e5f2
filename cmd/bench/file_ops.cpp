#include "cmd/bench/file_ops.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "cmd/bench/runner.hpp"

namespace bench {

using fsio::errno_error;

const char* file_op_engine(FileOp op) {
  switch (op) {
    case FileOp::create: return "filecreate";
    case FileOp::stat: return "filestat";
    case FileOp::remove: return "filedelete";
    case FileOp::none: break;
  }
  return "none";
}

namespace {

// Writes `path` out to `size` bytes when it is missing or shorter.
fsio::Status lay_out_one(const std::string& path, std::uint64_t size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && std::uint64_t(st.st_size) >= size) return {};
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(errno, path + ": lay out the file");
  const std::vector<char> fill(std::size_t(std::min<std::uint64_t>(size, 1u << 20)), 'f');
  fsio::Status st2;
  for (std::uint64_t off = 0; off < size && st2; off += fill.size()) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(fill.size(), size - off));
    if (::pwrite(fd, fill.data(), n, off_t(off)) != ssize_t(n)) st2 = errno_error(errno, path + ": lay out the file");
  }
  ::close(fd);
  return st2;
}

// One file's operation, as fio's open_file hook of the engine does it.
fsio::Status operate(FileOp op, const std::string& path) {
  if (op == FileOp::create) {
    const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return errno_error(errno, "open(" + path + ")");
    ::close(fd);
    return {};
  }
  if (op == FileOp::stat) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno_error(errno, "stat(" + path + ")");
    return {};
  }
  if (::unlink(path.c_str()) != 0) return errno_error(errno, "delete(" + path + ")");
  return {};
}

}  // namespace

fsio::Status lay_out_file_op_files(const FileOpJob& job, bool create_on_open) {
  if (job.op == FileOp::create || create_on_open) return {};
  for (const auto& f : job.files) FSIO_TRY(lay_out_one(f, job.file_bytes));
  return {};
}

fsio::Result<BenchResult> run_file_ops(const FileOpJob& job) {
  BenchResult res;
  res.rw = job.rw;
  res.engine = file_op_engine(job.op);
  res.bs = job.bs;
  res.iodepth = 1;
  // fio's init(): the samples go to reads unless the job only writes.
  const BenchDir d = bench_reads(job.rw) ? dir_read : dir_write;
  const std::uint64_t per_file = job.bs ? job.file_bytes / job.bs : 0;
  BenchDirResult& out = res.dir[d];
  const std::uint64_t t0 = detail::now_ns();
  std::uint64_t t = t0;
  for (const auto& f : job.files) {
    const std::uint64_t start = detail::now_ns();
    FSIO_TRY(operate(job.op, f));
    t = detail::now_ns();
    out.clat.add(t - start);
    // The file's requests complete at once, one in flight at a time.
    out.ios += per_file;
    out.io_bytes += per_file * job.bs;
    res.depths.add_level(1, per_file);
    for (std::uint64_t k = 0; k < per_file; ++k) {
      res.depths.add_submit(1);
      res.depths.add_complete(1);
    }
  }
  res.elapsed = double(t - t0) / 1e9;
  res.io_bytes = out.io_bytes;
  res.ios = out.ios;
  res.clat = out.clat;
  res.stats.elapsed_seconds = res.elapsed;
  return res;
}

}  // namespace bench
