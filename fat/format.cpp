// format_volume (see format.hpp): build the few non-zero sectors, then write
// them and the zeros around them in three ordered phases.
#include "fat/format.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

#include "fat/badblocks.hpp"
#include "fat/boot.hpp"
#include "fat/fsinfo.hpp"
#include "fat/label.hpp"
#include "libfsio/buffer.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kZeroBufferMax = 4ull << 20;  // one buffer, many requests
constexpr std::uint64_t kPlugBytes = 256ull << 20;    // progress/interrupt granularity

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
std::vector<ByteRange> wipe_ranges(const std::vector<ByteRange>& in, std::uint64_t meta_begin, std::uint64_t meta_end,
                                   std::uint64_t device_size, std::uint32_t ss) {
  std::vector<ByteRange> cut;
  auto keep = [&](std::uint64_t a, std::uint64_t b) {
    if (a < b) cut.push_back({a, b - a});
  };
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

VolumeIdentity resolve_identity(const FormatOptions& o, std::optional<std::int64_t> source_date_epoch) {
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
    id.time = *source_date_epoch;
    id.utc = true;
    if (!o.invariant) id.volume_id = std::uint32_t(std::uint64_t(*source_date_epoch) << 20);
  }
  if (o.volume_id) id.volume_id = *o.volume_id;
  return id;
}

std::uint64_t format_bytes(const Geometry& g) { return metadata_end(g) + g.sector_size * 2; }

namespace {

// The few sectors that are not zero, the zero buffer, and where each goes.
struct Sectors {
  fsio::AlignedBuffer boot, fsinfo, root_head, zero_buf;
  std::vector<fsio::AlignedBuffer> fat;  // the non-zero sectors of a FAT copy (head, bad clusters)
  std::map<std::uint64_t, std::span<const std::byte>> special;  // sector -> contents
  std::vector<ByteRange> wipes;
};

fsio::Status check_fits(const fsio::IoQueue& queue, const Geometry& g) {
  const fsio::Device& dev = queue.device();
  const std::uint64_t end = g.offset_bytes + metadata_end(g);
  if (end > dev.size())
    return make_error(Errc::invalid_argument, std::to_string(dev.size()) + " bytes cannot hold the " +
                                                  std::to_string(end) + " bytes of FAT metadata");
  if (dev.direct() && dev.topology().dio_offset_align > g.sector_size)
    return make_error(Errc::unsupported,
                      "direct I/O needs " + std::to_string(dev.topology().dio_offset_align) +
                          "-byte alignment but the FAT sector is " + std::to_string(g.sector_size) +
                          " bytes; the device must be buffered for it (Device::use_buffered, as mkfat does)");
  return {};
}

void build_sectors(const fsio::IoQueue& queue, const Geometry& g, const VolumeLabel& label, const VolumeIdentity& id,
                   const FormatExtras& extras, Sectors& s) {
  const std::uint32_t ss = g.sector_size;
  s.boot = fsio::AlignedBuffer(ss);
  s.fsinfo = fsio::AlignedBuffer(ss);
  s.root_head = fsio::AlignedBuffer(ss);
  const Sector512 bs = build_boot_sector(g, id.volume_id, label.bytes, extras.boot);
  std::memcpy(s.boot.data(), bs.data(), bs.size());
  if (extras.content && !extras.content->root.empty()) {
    s.root_head = fsio::AlignedBuffer(extras.content->root.size());
    std::memcpy(s.root_head.data(), extras.content->root.data(), extras.content->root.size());
  }
  if (label.present) {
    std::tm tm{};
    const std::time_t t = std::time_t(id.time);
    if (id.utc) gmtime_r(&t, &tm);
    else localtime_r(&t, &tm);
    fsio::store(s.root_head.span(), make_label_entry(label.bytes, encode_dos_datetime(tm)));
  }
  if (g.type == FatType::fat32) {
    if (extras.content) {
      fsio::store(s.fsinfo.span(), make_fsinfo(extras.content->free_clusters, extras.content->next_free));
    } else {
      const Sector512 info = build_fsinfo(g, std::uint32_t(extras.bad_clusters.size()));
      std::memcpy(s.fsinfo.data(), info.data(), info.size());
    }
    s.special[g.fsinfo_sector] = s.fsinfo.span();
    const std::uint64_t backup_info = g.backup_boot_sector + g.fsinfo_sector;
    if (g.backup_boot_sector && backup_info < g.reserved_sectors) s.special[backup_info] = s.fsinfo.span();
  }
  if (extras.content) {  // one span per copy: head, chains and bad marks
    for (std::uint32_t c = 0; c < g.num_fats; ++c)
      s.special[g.first_fat_sector() + std::uint64_t(c) * g.fat_sectors] = extras.content->fat;
  } else {
    for (auto& [sector, bytes] : initial_fat_sectors(g, extras.bad_clusters)) {
      s.fat.emplace_back(ss);
      std::memcpy(s.fat.back().data(), bytes.data(), ss);
      for (std::uint32_t c = 0; c < g.num_fats; ++c)
        s.special[g.first_fat_sector() + std::uint64_t(c) * g.fat_sectors + sector] = s.fat.back().span();
    }
  }
  s.special[g.root_dir_sector()] = s.root_head.span();

  const fsio::Device& dev = queue.device();
  const std::uint64_t meta_end = metadata_end(g);
  s.wipes = wipe_ranges(extras.wipe, g.offset_bytes, g.offset_bytes + meta_end, dev.size(), ss);
  std::uint64_t max_request = queue.options().max_request ? queue.options().max_request : dev.topology().max_request;
  if (max_request < ss) max_request = 1u << 20;
  std::uint64_t zero_size = std::min(kZeroBufferMax, meta_end);
  for (const ByteRange& w : s.wipes) zero_size = std::max(zero_size, std::min(kZeroBufferMax, w.length));
  zero_size = std::max<std::uint64_t>(std::min(zero_size, max_request) / ss * ss, ss);
  s.zero_buf = fsio::AlignedBuffer(zero_size);
}

fsio::Error interrupted_after_erase() {
  return make_error(Errc::interrupted,
                    "interrupted after the old boot sector was erased: whatever filesystem the target held is "
                    "gone and the new one is not complete, so it holds no usable filesystem; format it again "
                    "to finish");
}

// Phase 2: reserved area, FATs and root directory (boot sectors still
// zero), then the wipes; in plugs of about kPlugBytes, checking for an
// interrupt between plugs.
fsio::Status write_metadata(fsio::IoQueue& queue, const Geometry& g, const Sectors& s, fsio::Progress* progress,
                            FormatReport& report) {
  const std::uint32_t ss = g.sector_size;
  const std::uint64_t base = g.offset_bytes;
  const std::span<const std::byte> zeros = s.zero_buf.span();
  std::vector<Piece> pieces;
  std::uint64_t next = 0;
  for (const auto& [sector, data] : s.special) {
    add_zeros(pieces, base + next, base + sector * ss, zeros);
    pieces.push_back({base + sector * ss, data});  // a sector, or several (FormatContent)
    next = sector * ss + data.size();
  }
  add_zeros(pieces, base + next, base + metadata_end(g), zeros);
  for (const ByteRange& w : s.wipes) {
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
    if (fsio::InterruptGuard::requested()) return interrupted_after_erase();
  }
  return flush(queue, "writing FAT metadata", report);
}

fsio::Result<FormatReport> format_steps(fsio::IoQueue& queue, const Geometry& g, const FormatOptions& o,
                                        fsio::Progress* progress, const FormatExtras& extras) {
  const auto label = FSIO_TRY(parse_label(o.label, o.uppercase_label, o.label_in_codepage));
  const VolumeIdentity id = extras.identity ? *extras.identity : resolve_identity(o, std::nullopt);
  FSIO_TRY(check_fits(queue, g));
  Sectors s;
  build_sectors(queue, g, label, id, extras, s);
  const std::uint32_t ss = g.sector_size;
  const std::uint64_t base = g.offset_bytes;
  const std::span<const std::byte> zeros = s.zero_buf.span();

  FormatReport report;
  report.layout = g;
  report.volume_id = g.atari ? id.volume_id & 0xFFFFFF : id.volume_id;  // GEMDOS keeps 24 bits
  report.bad_clusters = extras.bad_clusters.size();
  if (label.present) {
    report.label.assign(label.bytes.begin(), label.bytes.end());
    report.label.erase(report.label.find_last_not_of(' ') + 1);
  }
  if (fsio::InterruptGuard::requested())
    return make_error(Errc::interrupted, "interrupted before anything was written; the target is unchanged");

  // Phase 1: no old boot sector may survive to describe a half-new layout.
  std::vector<Piece> pieces{{base, zeros.first(ss)}};
  if (g.backup_boot_sector) pieces.push_back({base + std::uint64_t(g.backup_boot_sector) * ss, zeros.first(ss)});
  FSIO_TRY(write_pieces(queue, pieces, "invalidating the old boot sector", report));
  FSIO_TRY(flush(queue, "invalidating the old boot sector", report));
  if (extras.content && extras.content->write_data) FSIO_TRY(extras.content->write_data(queue, progress));

  FSIO_TRY(write_metadata(queue, g, s, progress, report));

  // Phase 3: the backup first, so that once the primary exists its backup
  // does. A plug sorts by offset (sector 0 would go first), so the backup
  // gets a plug and a flush of its own.
  if (g.backup_boot_sector) {
    FSIO_TRY(write_pieces(queue, {{base + std::uint64_t(g.backup_boot_sector) * ss, s.boot.span()}},
                          "writing the backup boot sector", report));
    FSIO_TRY(flush(queue, "writing the backup boot sector", report));
  }
  FSIO_TRY(write_pieces(queue, {{base, s.boot.span()}}, "writing the boot sector", report));
  FSIO_TRY(flush(queue, "writing the boot sector", report));
  if (progress) progress->add(2 * std::uint64_t(ss));
  return report;
}

}  // namespace

fsio::Result<FormatReport> format_volume(fsio::IoQueue& queue, const Geometry& g, const FormatOptions& o,
                                         fsio::Progress* progress, const FormatExtras& extras) {
  // Every error names the device, whichever step it comes from.
  auto report = format_steps(queue, g, o, progress, extras);
  if (!report) return std::move(report).error().at(queue.device().path());
  return report;
}

}  // namespace fat
