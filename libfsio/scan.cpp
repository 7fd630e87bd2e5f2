// scan_readable (see scan.hpp): batches of big reads, then halving only
// where a batch failed.
#include "libfsio/scan.hpp"

#include <algorithm>

#include "libfsio/buffer.hpp"

namespace fsio {

namespace {

class Scanner {
 public:
  Scanner(IoQueue& q, const ScanOptions& o, ScanReport& r) : q_(q), o_(o), r_(r) {}

  // Bytes [off, off + len) into buf: ok, bad (an I/O error), or another error.
  Result<bool> readable(std::uint64_t off, std::uint64_t len, std::span<std::byte> buf) {
    auto st = q_.read(off, buf.first(len));
    r_.bytes_read += len;
    if (st) return true;
    if (st.error().code == Errc::io) return false;
    return std::move(st).error();
  }

  // A range that failed: halve it (on unit boundaries) until each failing
  // piece is one unit.
  Status narrow(std::uint64_t off, std::uint64_t len, std::span<std::byte> buf) {
    if (len <= o_.unit) {
      r_.bad.push_back(off);
      return {};
    }
    const std::uint64_t half = (len / 2 + o_.unit - 1) / o_.unit * o_.unit;
    for (auto [o, n] : {std::pair{off, half}, std::pair{off + half, len - half}}) {
      if (n == 0) continue;
      if (!FSIO_TRY(readable(o, n, buf))) FSIO_TRY(narrow(o, n, buf));
    }
    return {};
  }

  // One batch of chunks in one plug; on failure each chunk again alone.
  Status batch(std::uint64_t off, std::uint64_t end, std::span<std::byte> buf) {
    auto plug = q_.plug();
    std::uint64_t n = 0;
    for (std::uint64_t p = off; p < end; p += o_.chunk, n += o_.chunk)
      plug.read(p, buf.subspan(n, std::min(o_.chunk, end - p)));
    auto st = plug.finish();
    r_.bytes_read += end - off;
    if (st) return {};
    if (st.error().code != Errc::io) return std::move(st).error();
    for (std::uint64_t p = off; p < end; p += o_.chunk) {
      const std::uint64_t len = std::min(o_.chunk, end - p);
      ++r_.retried_chunks;
      if (!FSIO_TRY(readable(p, len, buf))) FSIO_TRY(narrow(p, len, buf));
    }
    return {};
  }

 private:
  IoQueue& q_;
  const ScanOptions& o_;
  ScanReport& r_;
};

}  // namespace

Result<ScanReport> scan_readable(IoQueue& queue, std::uint64_t offset, std::uint64_t length, Progress* progress,
                                 const ScanOptions& options) {
  ScanOptions o = options;
  if (o.unit == 0 || (o.unit & (o.unit - 1)) || o.chunk < o.unit || o.chunk % o.unit || o.batch == 0)
    return make_error(Errc::invalid_argument, "scan: unit " + std::to_string(o.unit) + " and chunk " +
                                                  std::to_string(o.chunk) + " must be powers of two, chunk >= unit");
  ScanReport report;
  if (length == 0) return report;
  const std::uint64_t span = o.chunk * o.batch;
  AlignedBuffer buf(std::min(span, (length + o.unit - 1) / o.unit * o.unit));
  Scanner scanner(queue, o, report);
  for (std::uint64_t off = offset; off < offset + length; off += span) {
    if (InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted during the bad-block scan");
    const std::uint64_t end = std::min(off + span, offset + length);
    FSIO_TRY(scanner.batch(off, end, buf.span()));
    if (progress) progress->add(end - off);
  }
  std::sort(report.bad.begin(), report.bad.end());
  return report;
}

}  // namespace fsio
