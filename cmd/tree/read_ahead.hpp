// ReadAhead: small files read whole on a few threads, ahead of the thread
// that consumes them in order. On a tree of thousands of small files the
// source is what costs (an open, a read and a close each; a seek each on a
// cold cache or a card), so they are read in parallel while the filler
// copies and writes the ones before (dir_source.cpp).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "libfsio/result.hpp"

namespace fsio::tree {

// One regular file as list() saw it: reading checks it is still that file.
struct FileRef {
  std::string path;  // as it is opened (through any symbolic links the tree follows)
  dev_t dev = 0;
  ino_t ino = 0;
  std::uint64_t size = 0;
};

// The bytes of one file, or why they could not be read.
struct FileBytes {
  std::unique_ptr<std::byte[]> data;
  std::uint64_t size = 0;
};

// Opens `file` for reading and checks that it is the file listed (same
// device, inode and size): Errc::corrupt "PATH: changed while it was read"
// otherwise; errno errors name the path.
Result<int> open_listed(const FileRef& file);
// Reads all of `file` into memory (at most its listed size, which must be all of it).
Result<FileBytes> read_whole(const FileRef& file);

class ReadAhead {
 public:
  // Reads files[jobs[0]], files[jobs[1]], ... on `threads` threads, in that
  // order, holding at most `budget` bytes read but not yet taken (the next
  // job to be taken is always admitted). Starts at once.
  ReadAhead(const std::vector<FileRef>& files, std::vector<std::uint32_t> jobs, unsigned threads,
            std::uint64_t budget);
  ~ReadAhead();  // stops the threads, discards what was read ahead
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The bytes of jobs[k], waiting for them; must be called with k = 0, 1, 2, ...
  Result<FileBytes> take(std::size_t k);

 private:
  void work();
  const std::vector<FileRef>& files_;
  std::vector<std::uint32_t> jobs_;
  std::uint64_t budget_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t next_ = 0;    // next job a thread starts
  std::size_t taken_ = 0;   // next job take() returns
  std::uint64_t held_ = 0;  // bytes started or read and not yet taken
  bool stop_ = false;
  std::map<std::size_t, Result<FileBytes>> done_;
  std::vector<std::jthread> threads_;  // last: they use everything above
};

}  // namespace fsio::tree
