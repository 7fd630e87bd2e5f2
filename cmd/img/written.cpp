#include "cmd/img/written.hpp"

#include "libfsio/crc32c.hpp"

namespace img {

std::uint32_t WrittenMap::chunk_crc(const std::byte* data, std::uint64_t length) {
  return ~fsio::crc32c_raw(~0u, data, length);
}

void WrittenMap::add(const Piece& p, bool keep_unused) {
  if (p.length == 0 || (p.unused && keep_unused)) return;
  bytes_ += p.length;
  const bool zero = p.data == nullptr;
  Extent* last = extents_.empty() ? nullptr : &extents_.back();
  // Contiguous extents of one kind merge; data only when the one before
  // ends on a whole chunk, so that chunks stay counted from its start.
  const bool joins = last && last->offset + last->length == p.offset && last->zero == zero &&
                     (zero || last->length % kCheckChunk == 0);
  if (joins) {
    last->length += p.length;
  } else {
    extents_.push_back({p.offset, p.length, zero, crcs_.size()});
  }
  if (zero) return;
  for (std::uint64_t at = 0; at < p.length; at += kCheckChunk)
    crcs_.push_back(chunk_crc(p.data + at, std::min(kCheckChunk, p.length - at)));
}

}  // namespace img
