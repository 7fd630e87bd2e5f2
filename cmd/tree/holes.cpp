// A directory's sparse files (file_ref.hpp): their data ranges found with
// SEEK_DATA and SEEK_HOLE at list() time, and only those ranges read back.
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cmd/tree/file_ref.hpp"

namespace fsio::tree {

Result<std::optional<std::vector<DataRange>>> data_ranges(int fd, std::uint64_t size, const std::string& path) {
  std::vector<DataRange> out;
  for (std::uint64_t at = 0; at < size;) {
    const off_t data = ::lseek(fd, off_t(at), SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // a hole to the end
    if (data < 0 && errno == EINVAL) return std::optional<std::vector<DataRange>>();
    if (data < 0) return errno_error("find the data of " + path + " (SEEK_DATA at byte " + std::to_string(at) + ")");
    if (std::uint64_t(data) >= size) break;
    const off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return errno_error("find the holes of " + path + " (SEEK_HOLE at byte " + std::to_string(data) + ")");
    const std::uint64_t end = std::min<std::uint64_t>(std::uint64_t(hole), size);
    if (end <= std::uint64_t(data)) break;
    out.push_back({std::uint64_t(data), end - std::uint64_t(data)});
    at = end;
  }
  return std::optional<std::vector<DataRange>>(std::move(out));
}

Status read_ranges(const FileRef& f, std::uint32_t content, int fd, ContentSink& sink) {
  for (const DataRange& r : f.data) {
    for (std::uint64_t off = r.offset, end = r.offset + r.length; off < end;) {
      const std::span<std::byte> room = FSIO_TRY(sink.reserve(content, off, end - off));
      const std::size_t want = std::size_t(std::min<std::uint64_t>(room.size(), end - off));
      std::size_t got = 0;
      while (got < want) {
        const ssize_t n = ::pread(fd, room.data() + got, want - got, off_t(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("read " + f.path + " at byte " + std::to_string(off + got));
        if (n == 0)
          return make_error(Errc::corrupt, f.path + ": changed while it was read (it ended at byte " +
                                               std::to_string(off + got) + ")");
        got += std::size_t(n);
      }
      FSIO_TRY(sink.commit(content, off, got));
      off += got;
    }
  }
  return {};
}

}  // namespace fsio::tree
