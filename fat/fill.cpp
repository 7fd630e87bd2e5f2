// fill: names, paths and times from what the user typed, and the operation
// itself as its two steps (see fill.hpp): plan, then write.
#include "fat/fill.hpp"

#include <chrono>
#include <ctime>

#include "fat/fill_plan.hpp"
#include "fat/format.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

fsio::Error bad_pattern(std::string_view pattern, const std::string& why) {
  return make_error(Errc::invalid_argument, "--name '" + std::string(pattern) + "': " + why);
}

// The pattern cut at its one %d: prefix, zero padding and width, suffix.
struct Pattern {
  std::string prefix, suffix;
  bool has_number = false;
  bool zero_pad = false;
  unsigned width = 0;
};

fsio::Result<Pattern> parse_pattern(std::string_view p) {
  Pattern out;
  std::string* text = &out.prefix;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '%') {
      *text += p[i];
      continue;
    }
    if (i + 1 < p.size() && p[i + 1] == '%') {
      *text += '%';
      ++i;
      continue;
    }
    if (out.has_number) return bad_pattern(p, "more than one %d");
    std::size_t j = i + 1;
    if (j < p.size() && p[j] == '0') {
      out.zero_pad = true;
      ++j;
    }
    while (j < p.size() && p[j] >= '0' && p[j] <= '9') {
      out.width = out.width * 10 + unsigned(p[j] - '0');
      if (out.width > 10) return bad_pattern(p, "a width above 10");
      ++j;
    }
    if (j >= p.size() || (p[j] != 'd' && p[j] != 'u')) return bad_pattern(p, "'%' must start %d, %0Nd or %%");
    out.has_number = true;
    text = &out.suffix;
    i = j;
  }
  return out;
}

}  // namespace

std::uint64_t FilledFile::clusters() const {
  std::uint64_t n = 0;
  for (const Extent& e : extents) n += e.count;
  return n;
}

fsio::Result<std::vector<std::string>> expand_names(std::string_view pattern, std::uint64_t first,
                                                    std::uint64_t count) {
  const Pattern p = FSIO_TRY(parse_pattern(pattern));
  if (count > 1 && !p.has_number)
    return bad_pattern(pattern, std::to_string(count) + " files need a number in their names (%d)");
  if (count > 0 && first > ~std::uint64_t(0) - (count - 1))
    return make_error(Errc::invalid_argument, "--start " + std::to_string(first) + " with --count " +
                                                  std::to_string(count) + ": the numbers overflow");
  std::vector<std::string> names;
  names.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name = p.prefix;
    if (p.has_number) {
      const std::string digits = std::to_string(first + i);
      if (digits.size() < p.width) name.append(p.width - digits.size(), p.zero_pad ? '0' : ' ');
      name += digits + p.suffix;
    }
    names.push_back(std::move(name));
  }
  return names;
}

fsio::Result<std::pair<std::string, std::string>> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  for (std::size_t pos = 0; pos <= path.size();) {
    const std::size_t slash = std::min(path.find('/', pos), path.size());
    const std::string_view part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty()) continue;
    if (part == "." || part == "..")
      return make_error(Errc::invalid_argument, "path '" + std::string(path) + "': '.' and '..' are not supported");
    parts.push_back(part);
  }
  if (parts.empty() || path.back() == '/')
    return make_error(Errc::invalid_argument, "path '" + std::string(path) + "' names no file");
  std::string dir;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) dir += "/" + std::string(parts[i]);
  return std::pair{dir.empty() ? std::string("/") : dir, std::string(parts.back())};
}

DosDateTime fill_time(std::optional<std::int64_t> source_date_epoch) {
  const VolumeIdentity id = resolve_identity(FormatOptions{}, source_date_epoch);
  const std::time_t t = std::time_t(id.time);
  std::tm tm{};
  if (!(id.utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm))) return kDosEpoch;
  return encode_dos_datetime(tm);
}

fsio::Result<FillReport> fill(Volume& volume, const FillOptions& options, fsio::Progress* progress) {
  if (options.size > kMaxFileSize)
    return make_error(Errc::invalid_argument, "file size " + std::to_string(options.size) +
                                                  " is over FAT's limit of 4 GiB - 1 (4294967295 bytes)");
  if (options.names.size() > kMaxFillCount)
    return make_error(Errc::invalid_argument,
                      std::to_string(options.names.size()) + " files do not fit one directory (at most 65536 entries)");
  FillReport report;
  report.layout = volume.layout();
  report.dry_run = options.dry_run;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto plan = fill_detail::make_plan(volume, options, report);
  if (!plan) return std::move(plan).error().at(volume.path());
  // A replaced file's old chain must be its own before it is freed; the
  // dry run meets this refusal too.
  if (auto own = fill_detail::check_unshared(volume, *plan); !own) return std::move(own).error().at(volume.path());
  const auto t1 = Clock::now();
  report.plan_seconds = std::chrono::duration<double>(t1 - t0).count();
  if (options.dry_run) return report;
  FSIO_TRY(fill_detail::write_plan(volume, options, *plan, report, progress));
  report.write_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  return report;
}

namespace fill_detail {

fsio::Result<NameSlots> name_slots(Directory& dir, const std::string& name) {
  return make_name(name, [&dir](const ShortName& s) { return dir.short_name_taken(s); });
}

std::uint32_t clusters_for(const Layout& layout, std::uint64_t size) {
  return std::uint32_t((size + layout.cluster_bytes() - 1) / layout.cluster_bytes());
}

}  // namespace fill_detail

}  // namespace fat
