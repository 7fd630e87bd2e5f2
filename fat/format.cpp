// format_volume (see format.hpp): build the few non-zero sectors, then write
// them and the zeros around them in three ordered phases.
#include "fat/format.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

#include "fat/boot.hpp"
#include "fat/label.hpp"
#include "libfsio/buffer.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kZeroBufferMax = 4ull << 20;   // one buffer, many requests
constexpr std::uint64_t kPlugBytes = 256ull << 20;     // progress/interrupt granularity

struct Piece {
  std::uint64_t offset;  // device window offset
  std::span<const std::byte> data;
};

// The metadata region [0, end) of the filesystem: reserved area, FATs, and
// the root directory (FAT32: its first cluster).
std::uint64_t metadata_end(const Geometry& g) {
  const std::uint64_t root_sectors = g.type == FatType::fat32 ? g.sectors_per_cluster : g.root_dir_sectors();
  return (g.root_dir_sector() + root_sectors) * g.sector_size;
}

// Zeros over [begin, end), in chunks no larger than the zero buffer.
void add_zeros(std::vector<Piece>& out, std::uint64_t begin, std::uint64_t end, std::span<const std::byte> zeros) {
  while (begin < end) {
    const std::uint64_t n = std::min<std::uint64_t>(end - begin, zeros.size());
    out.push_back({begin, zeros.first(n)});
    begin += n;
  }
}

// Foreign-signature ranges rounded out to whole sectors, with the metadata
// region (written anyway) and the space beyond the device cut away, merged.
std::vector<ByteRange> wipe_ranges(const std::vector<ByteRange>& in, std::uint64_t meta_begin,
                                   std::uint64_t meta_end, std::uint64_t device_size, std::uint32_t ss) {
  std::vector<ByteRange> cut;
  auto keep = [&](std::uint64_t a, std::uint64_t b) { if (a < b) cut.push_back({a, b - a}); };
  for (const ByteRange& r : in) {
    if (r.length == 0) continue;
    const std::uint64_t a = r.offset / ss * ss;
    const std::uint64_t b = std::min((r.offset + r.length + ss - 1) / ss * ss, device_size / ss * ss);
    keep(a, std::min(b, meta_begin));
    keep(std::max(a, meta_end), b);
  }
  std::sort(cut.begin(), cut.end(), [](auto& x, auto& y) { return x.offset < y.offset; });
  std::vector<ByteRange> merged;
  for (const ByteRange& r : cut) {
    if (!merged.empty() && r.offset <= merged.back().offset + merged.back().length) {
      auto& m = merged.back();
      m.length = std::max(m.offset + m.length, r.offset + r.length) - m.offset;
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

fsio::Status write_pieces(fsio::IoQueue& queue, const std::vector<Piece>& pieces, const std::string& what,
                          FormatReport& report) {
  auto plug = queue.plug();
  for (const Piece& p : pieces) plug.write(p.offset, p.data);
  const std::uint64_t bytes = plug.pending_bytes();
  FSIO_TRY_CTX(plug.finish(), what);
  ++report.plugs;
  report.bytes_written += bytes;
  return {};
}

fsio::Status flush(fsio::IoQueue& queue, const std::string& after, FormatReport& report) {
  FSIO_TRY_CTX(queue.flush(), "flush after " + after);
  ++report.flushes;
  return {};
}

}  // namespace

fsio::Result<VolumeIdentity> resolve_identity(const FormatOptions& o,
                                              std::optional<std::string_view> source_date_epoch) {
  VolumeIdentity id;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  id.time = now.tv_sec;
  id.utc = false;
  id.volume_id = std::uint32_t(std::uint64_t(now.tv_sec) << 20 | std::uint64_t(now.tv_nsec / 1000));
  if (o.invariant) {
    id.volume_id = kInvariantVolumeId;
    id.time = kInvariantTime;
    id.utc = true;
  }
  if (source_date_epoch) {
    const std::string_view s = *source_date_epoch;
    std::int64_t t = 0;
    bool ok = !s.empty() && s.size() <= 18;
    for (char c : s) {
      if (c < '0' || c > '9') ok = false;
      else t = t * 10 + (c - '0');
    }
    if (!ok)
      return make_error(Errc::invalid_argument,
                        "SOURCE_DATE_EPOCH '" + std::string(s) + "' is not a number of seconds since 1970");
    id.time = t;
    id.utc = true;
    if (!o.invariant) id.volume_id = std::uint32_t(std::uint64_t(t) << 20);
  }
  if (o.volume_id) id.volume_id = *o.volume_id;
  return id;
}

std::uint64_t format_bytes(const Geometry& g) { return metadata_end(g) + g.sector_size * 2; }

fsio::Result<FormatReport> format_volume(fsio::IoQueue& queue, const Geometry& g, const FormatOptions& o,
                                         fsio::Progress* progress, const FormatExtras& extras) {
  const auto label = FSIO_TRY(parse_label(o.label, o.uppercase_label));
  const VolumeIdentity id = extras.identity ? *extras.identity : FSIO_TRY(resolve_identity(o, std::nullopt));
  const fsio::Device& dev = queue.device();
  const std::uint32_t ss = g.sector_size;
  const std::uint64_t base = g.offset_bytes;
  const std::uint64_t meta_end = metadata_end(g);
  if (base + meta_end > dev.size())
    return make_error(Errc::invalid_argument,
                      dev.path() + ": " + std::to_string(dev.size()) + " bytes cannot hold the " +
                          std::to_string(base + meta_end) + " bytes of FAT metadata");
  if (dev.direct() && dev.topology().dio_offset_align > ss)
    return make_error(Errc::unsupported,
                      dev.path() + ": direct I/O needs " + std::to_string(dev.topology().dio_offset_align) +
                          "-byte alignment but the FAT sector is " + std::to_string(ss) +
                          " bytes; open the device buffered or use a larger sector size");

  // The few sectors that are not zero.
  fsio::AlignedBuffer boot(ss), fsinfo(ss), fat_head(ss), root_head(ss);
  const Sector512 bs = build_boot_sector(g, id.volume_id, label.bytes);
  std::memcpy(boot.data(), bs.data(), bs.size());
  fill_fat_head(g, fat_head.span());
  if (label.present) {
    std::tm tm{};
    const std::time_t t = std::time_t(id.time);
    if (id.utc) gmtime_r(&t, &tm); else localtime_r(&t, &tm);
    fsio::store(root_head.span(), make_label_entry(label.bytes, encode_dos_datetime(tm)));
  }
  std::map<std::uint64_t, std::span<const std::byte>> special;  // sector -> contents
  if (g.type == FatType::fat32) {
    const Sector512 info = build_fsinfo(g);
    std::memcpy(fsinfo.data(), info.data(), info.size());
    special[g.fsinfo_sector] = fsinfo.span();
    const std::uint64_t backup_info = g.backup_boot_sector + g.fsinfo_sector;
    if (g.backup_boot_sector && backup_info < g.reserved_sectors) special[backup_info] = fsinfo.span();
  }
  for (std::uint32_t c = 0; c < g.num_fats; ++c)
    special[g.first_fat_sector() + std::uint64_t(c) * g.fat_sectors] = fat_head.span();
  special[g.root_dir_sector()] = root_head.span();

  const auto wipes = wipe_ranges(extras.wipe, base, base + meta_end, dev.size(), ss);
  std::uint64_t max_request = queue.options().max_request ? queue.options().max_request
                                                         : dev.topology().max_request;
  if (max_request < ss) max_request = 1u << 20;
  std::uint64_t zero_size = std::min(kZeroBufferMax, meta_end);
  for (const ByteRange& w : wipes) zero_size = std::max(zero_size, std::min(kZeroBufferMax, w.length));
  zero_size = std::max<std::uint64_t>(std::min(zero_size, max_request) / ss * ss, ss);
  fsio::AlignedBuffer zero_buf(zero_size);
  const std::span<const std::byte> zeros = zero_buf.span();

  FormatReport report;
  report.layout = g;
  report.volume_id = id.volume_id;
  if (label.present) {
    report.label.assign(label.bytes.begin(), label.bytes.end());
    report.label.erase(report.label.find_last_not_of(' ') + 1);
  }

  // Phase 1: no old boot sector may survive to describe a half-new layout.
  std::vector<Piece> pieces{{base, zeros.first(ss)}};
  if (g.backup_boot_sector) pieces.push_back({base + std::uint64_t(g.backup_boot_sector) * ss, zeros.first(ss)});
  FSIO_TRY(write_pieces(queue, pieces, "invalidating the old boot sector", report));
  FSIO_TRY(flush(queue, "invalidating the old boot sector", report));

  // Phase 2: reserved area, FATs and root directory (boot sectors still
  // zero), then the wipes; in plugs of about kPlugBytes.
  pieces.clear();
  std::uint64_t next = 0;
  for (const auto& [sector, data] : special) {
    add_zeros(pieces, base + next, base + sector * ss, zeros);
    pieces.push_back({base + sector * ss, data});
    next = (sector + 1) * ss;
  }
  add_zeros(pieces, base + next, base + meta_end, zeros);
  for (const ByteRange& w : wipes) {
    add_zeros(pieces, w.offset, w.offset + w.length, zeros);
    report.bytes_wiped += w.length;
  }
  std::vector<Piece> batch;
  std::uint64_t batch_bytes = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    batch.push_back(pieces[i]);
    batch_bytes += pieces[i].data.size();
    if (batch_bytes < kPlugBytes && i + 1 < pieces.size()) continue;
    FSIO_TRY(write_pieces(queue, batch, "writing FAT metadata", report));
    if (progress) progress->add(batch_bytes);
    batch.clear();
    batch_bytes = 0;
    if (fsio::InterruptGuard::requested())
      return make_error(Errc::interrupted,
                        dev.path() + ": interrupted before the boot sector was written; no filesystem was made");
  }
  FSIO_TRY(flush(queue, "writing FAT metadata", report));

  // Phase 3: the backup first, so that once the primary exists its backup
  // does. A plug sorts by offset (sector 0 would go first), so the backup
  // gets a plug and a flush of its own.
  if (g.backup_boot_sector) {
    FSIO_TRY(write_pieces(queue, {{base + std::uint64_t(g.backup_boot_sector) * ss, boot.span()}},
                          "writing the backup boot sector", report));
    FSIO_TRY(flush(queue, "writing the backup boot sector", report));
  }
  FSIO_TRY(write_pieces(queue, {{base, boot.span()}}, "writing the boot sector", report));
  FSIO_TRY(flush(queue, "writing the boot sector", report));
  if (progress) progress->add(2 * std::uint64_t(ss));
  return report;
}

}  // namespace fat
