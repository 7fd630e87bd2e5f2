// ReadAhead (see read_ahead.hpp).
#include "cmd/tree/read_ahead.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace fsio::tree {

namespace {

Error changed(const FileRef& f, const std::string& how) {
  return make_error(Errc::corrupt, f.path + ": changed while it was read (" + how + ")");
}

}  // namespace

Result<int> open_listed(const FileRef& f) {
  const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno_error("open " + f.path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return errno_error(e, "stat " + f.path);
  }
  std::string how;
  if (!S_ISREG(st.st_mode)) how = "no longer a regular file";
  else if (st.st_dev != f.dev || st.st_ino != f.ino) how = "another file is there now";
  else if (std::uint64_t(st.st_size) != f.size)
    how = std::to_string(f.size) + " bytes when listed, " + std::to_string(st.st_size) + " now";
  if (!how.empty()) {
    ::close(fd);
    return changed(f, how);
  }
  return fd;
}

Result<FileBytes> read_whole(const FileRef& f) {
  const int fd = FSIO_TRY(open_listed(f));
  FileBytes out;
  out.size = f.size;
  out.data = std::make_unique_for_overwrite<std::byte[]>(std::size_t(f.size));
  std::uint64_t got = 0;
  while (got < f.size) {
    const ssize_t n = ::read(fd, out.data.get() + got, std::size_t(f.size - got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      if (n == 0) return changed(f, "it ended after " + std::to_string(got) + " of " + std::to_string(f.size) + " bytes");
      return errno_error(e, "read " + f.path + " at byte " + std::to_string(got));
    }
    got += std::uint64_t(n);
  }
  ::close(fd);
  return out;
}

ReadAhead::ReadAhead(const std::vector<FileRef>& files, std::vector<std::uint32_t> jobs, unsigned threads,
                     std::uint64_t budget)
    : files_(files), jobs_(std::move(jobs)), budget_(budget) {
  const std::size_t n = std::min<std::size_t>(std::max(threads, 1u), jobs_.size());
  for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  threads_.clear();  // joins
}

void ReadAhead::work() {
  for (;;) {
    std::size_t k = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return stop_ || next_ >= jobs_.size() || next_ == taken_ ||
               held_ + files_[jobs_[next_]].size <= budget_;
      });
      if (stop_ || next_ >= jobs_.size()) return;
      k = next_++;
      held_ += files_[jobs_[k]].size;
    }
    auto bytes = read_whole(files_[jobs_[k]]);
    {
      std::lock_guard lock(mu_);
      done_.emplace(k, std::move(bytes));
    }
    cv_.notify_all();
  }
}

Result<FileBytes> ReadAhead::take(std::size_t k) {
  std::unique_lock lock(mu_);
  FSIO_ASSERT(k == taken_ && k < jobs_.size());
  cv_.wait(lock, [&] { return done_.count(k) > 0; });
  auto node = done_.extract(k);
  held_ -= files_[jobs_[k]].size;
  ++taken_;
  lock.unlock();
  cv_.notify_all();
  return std::move(node.mapped());
}

}  // namespace fsio::tree
