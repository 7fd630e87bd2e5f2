// bmaptool's block map as `fsimg restore --bmap` reads it (img::parse_bmap:
// expat's events, the numbers, the ranges and their checksums, the
// version). A bmap carries a checksum of its own text (BmapFileChecksum,
// the digest of the file with that value written as '0's), which a fuzzer
// cannot guess: before the input is parsed, the value between the
// <BmapFileChecksum> tags, if one of SHA-1's or SHA-256's length, is
// recomputed, so mutations reach the checks behind it. (Inputs whose value
// cannot be found are parsed as they are: the corpus replays them so.)
//
// Besides not crashing, what parse_bmap accepts is checked against its
// promise: ranges sorted, apart, inside BlocksCount, summing to
// MappedBlocksCount, each checksum of the type's hex length.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "cmd/img/bmap.hpp"

namespace {

void fix_file_checksum(std::string& text) {
  const std::string open = "<BmapFileChecksum>", close = "</BmapFileChecksum>";
  const auto a = text.find(open);
  if (a == std::string::npos) return;
  const auto b = text.find(close, a);
  if (b == std::string::npos) return;
  std::size_t from = a + open.size(), to = b;
  while (from < to && text[from] == ' ') ++from;
  while (to > from && text[to - 1] == ' ') --to;
  const std::size_t n = to - from;
  if (n != 40 && n != 64) return;
  auto d = img::Digest::make(n == 64 ? "sha256" : "sha1");
  if (!d) return;
  std::memset(text.data() + from, '0', n);
  d->update(std::as_bytes(std::span(text)));
  const std::string sum = d->finish();
  std::memcpy(text.data() + from, sum.data(), n);
}

void check(const img::Bmap& b) {
  std::uint64_t mapped = 0, next = 0;
  const std::size_t hex = b.checksum_type == "sha256" ? 64 : b.checksum_type == "sha1" ? 40 : 0;
  for (std::size_t i = 0; i < b.ranges.size(); ++i) {
    const img::BmapRange& r = b.ranges[i];
    if (r.first > r.last || r.last >= b.blocks_count || (i > 0 && r.first < next) ||
        (hex && r.checksum.size() != hex)) {
      std::fprintf(stderr, "fuzz_bmap: range %zu (%llu-%llu) accepted against its own rules\n", i,
                   (unsigned long long)r.first, (unsigned long long)r.last);
      std::abort();
    }
    next = r.last + 1;
    mapped += r.last - r.first + 1;
  }
  if (mapped != b.mapped_blocks) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fix_file_checksum(text);
  auto b = img::parse_bmap(std::span<const char>(text.data(), text.size()), "fuzz.bmap");
  if (b) check(*b);
  return 0;
}
