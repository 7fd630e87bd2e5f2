#include "cmd/img/map.hpp"

namespace img {

using fsio::Errc;
using fsio::make_error;

void BlockMap::add(std::uint64_t start, std::uint64_t length) {
  if (length == 0) return;
  if (!runs_.empty()) {
    Run& last = runs_.back();
    FSIO_ASSERT(start >= last.end());
    if (start == last.end()) {
      last.length += length;
      blocks_ += length;
      return;
    }
  }
  runs_.push_back({start, length});
  blocks_ += length;
}

void put_varint(std::vector<std::byte>& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(std::byte((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(std::byte(value));
}

fsio::Result<std::uint64_t> get_varint(std::span<const std::byte> in, std::size_t& pos, const std::string& what) {
  std::uint64_t value = 0;
  for (unsigned i = 0; i < 10; ++i) {
    if (pos >= in.size()) return make_error(Errc::corrupt, what + ": a number runs past the end of the list");
    const auto b = std::to_integer<std::uint64_t>(in[pos++]);
    // The tenth byte may only carry the 64th bit.
    if (i == 9 && b > 1) return make_error(Errc::corrupt, what + ": a number overflows 64 bits");
    value |= (b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  return make_error(Errc::corrupt, what + ": a number is longer than 10 bytes");
}

std::vector<std::byte> encode_runs(const std::vector<Run>& runs) {
  std::vector<std::byte> out;
  std::uint64_t end = 0;
  for (const Run& r : runs) {
    put_varint(out, r.start - end);
    put_varint(out, r.length);
    end = r.end();
  }
  return out;
}

fsio::Result<std::vector<Run>> decode_runs(std::span<const std::byte> bytes, std::uint64_t count, std::uint64_t limit,
                                           std::uint64_t blocks, const std::string& what) {
  // Each run takes at least two bytes: a count beyond that is a lie, and
  // must not size an allocation.
  if (count > bytes.size() / 2)
    return make_error(Errc::corrupt, what + ": " + std::to_string(count) + " runs cannot fit in " +
                                         std::to_string(bytes.size()) + " bytes");
  std::vector<Run> runs;
  runs.reserve(count);
  std::size_t pos = 0;
  std::uint64_t end = 0, total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string where = what + " run " + std::to_string(i);
    const std::uint64_t gap = FSIO_TRY(get_varint(bytes, pos, where));
    const std::uint64_t length = FSIO_TRY(get_varint(bytes, pos, where));
    if (i > 0 && gap == 0) return make_error(Errc::corrupt, where + ": touches the run before it (gap 0)");
    if (length == 0) return make_error(Errc::corrupt, where + ": length 0");
    if (gap > limit - end || length > limit - end - gap)
      return make_error(Errc::corrupt, where + ": ends beyond block " + std::to_string(limit));
    runs.push_back({end + gap, length});
    end += gap + length;
    total += length;
  }
  if (pos != bytes.size())
    return make_error(Errc::corrupt, what + ": " + std::to_string(bytes.size() - pos) + " bytes left after " +
                                         std::to_string(count) + " runs");
  if (total != blocks)
    return make_error(Errc::corrupt, what + ": runs hold " + std::to_string(total) + " blocks, the header says " +
                                         std::to_string(blocks));
  return runs;
}

std::vector<Run> MapCursor::take(std::uint64_t count) {
  std::vector<Run> out;
  const auto& runs = *runs_;
  while (count > 0) {
    FSIO_ASSERT(index_ < runs.size());
    const Run& r = runs[index_];
    const std::uint64_t n = std::min(count, r.length - offset_);
    if (!out.empty() && out.back().end() == r.start + offset_) out.back().length += n;
    else out.push_back({r.start + offset_, n});
    offset_ += n;
    ordinal_ += n;
    count -= n;
    if (offset_ == r.length) {
      ++index_;
      offset_ = 0;
    }
  }
  return out;
}

}  // namespace img
