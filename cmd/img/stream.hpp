// Reading and writing the fsimg stream through a plain file descriptor: a
// file, a pipe, a socket. Nothing seeks: a stream is read once, front to
// back, and every error names the byte offset where it was met.
// On a pipe or a socket, Ctrl-C ends a wait for the other end however long
// it stalls (libfsio/pipe.hpp); the stream is written with fsio::write_all.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cmd/img/format.hpp"
#include "libfsio/pipe.hpp"
#include "libfsio/result.hpp"

namespace img {

// Buffered reads from a descriptor, counting the bytes consumed. Not
// thread-safe; does not own the descriptor.
class StreamReader {
 public:
  StreamReader(int fd, std::string name);
  // Exactly out.size() bytes. The stream ending first is Errc::corrupt:
  // "IN: truncated: the stream ends at byte 1234, 10 bytes into frame 3 data
  // of 4096". A read error is Errc::io with errno. EINTR is retried.
  fsio::Status read_exact(std::span<std::byte> out, const std::string& what);
  // Appends exactly n bytes to `out`, which grows only as they arrive (to
  // twice what it holds, at least 1 MiB at a time; within its capacity it
  // does not allocate): a size read from the stream never sizes memory
  // before the stream shows it holds that many bytes. Errors as read_exact,
  // counting from where the append began.
  fsio::Status read_append(std::vector<std::byte>& out, std::uint64_t n, const std::string& what);
  // Discards n bytes (reads them: a pipe cannot seek).
  fsio::Status skip(std::uint64_t n, const std::string& what);
  // True when the stream has no byte left.
  fsio::Result<bool> at_end();
  // Up to out.size() bytes, fewer only at the end of the stream (0: ended).
  // For inputs that are not fsimg streams (a raw or compressed image).
  fsio::Result<std::size_t> read_some(std::span<std::byte> out) { return read_upto(out); }
  // The first bytes still to come, without consuming them: up to out.size()
  // (at most the buffer's 1 MiB), fewer only when the stream is shorter.
  // What the input's kind is told by, before anything reads it.
  fsio::Result<std::size_t> peek(std::span<std::byte> out);
  int fd() const { return fd_; }
  fsio::FdKind kind() const { return kind_; }
  // Bytes read from the descriptor and not yet handed out: the file
  // position is where the stream started + offset() + buffered().
  std::size_t buffered() const { return len_ - pos_; }
  std::uint64_t offset() const { return offset_; }
  const std::string& name() const { return name_; }

 private:
  fsio::Result<std::size_t> fill();
  // Up to out.size() bytes; fewer only at the end of the stream.
  fsio::Result<std::size_t> read_upto(std::span<std::byte> out);
  fsio::Error truncated(std::uint64_t done, std::uint64_t want, const std::string& what) const;
  int fd_;
  fsio::FdKind kind_;
  std::string name_;
  std::vector<std::byte> buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t offset_ = 0;  // bytes handed out so far
};

// One data frame as read: its index and its compressed bytes, not yet
// decompressed or checked against its checksum.
struct FrameRecord {
  FrameIndex index;
  std::vector<std::byte> compressed;
  std::uint64_t offset = 0;  // stream offset of the index record
};

// Reads a stream record by record and checks each against the header and
// the records before it: sequence numbers, map ordinals, sizes, checksums
// of the records themselves, the end record's totals, and nothing after it.
class ImageReader {
 public:
  // Reads and checks the header record. Errors are wrapped with the name.
  static fsio::Result<ImageReader> open(StreamReader& in);
  const Header& header() const { return header_; }
  std::uint64_t header_bytes() const { return header_bytes_; }

  // The next frame (with its compressed bytes, or with them skipped when
  // `skip_data`), or the end record once the map is covered. Errc::corrupt
  // names the record and the stream offset. `reuse` becomes the frame's
  // `compressed` vector: a restore hands back the vector of a frame it has
  // decompressed, so each frame costs neither an allocation nor page faults.
  fsio::Result<std::variant<FrameRecord, End>> next(bool skip_data = false, std::vector<std::byte> reuse = {});
  std::uint32_t frames() const { return sequence_; }
  const std::string& name() const { return in_->name(); }
  std::uint64_t offset() const { return in_->offset(); }

 private:
  explicit ImageReader(StreamReader& in) : in_(&in) {}
  fsio::Result<std::vector<std::byte>> read_record(std::uint32_t min, std::uint32_t max, const std::string& what);
  fsio::Result<End> finish_end(std::vector<std::byte> rec, std::uint64_t at);
  fsio::Error at(std::uint64_t offset, fsio::Error e) const;

  StreamReader* in_;
  Header header_;
  std::uint64_t header_bytes_ = 0;
  std::uint32_t sequence_ = 0;
  std::uint64_t next_block_ = 0;
  std::uint64_t stored_ = 0, compressed_ = 0;
  bool ended_ = false;
};

}  // namespace img
