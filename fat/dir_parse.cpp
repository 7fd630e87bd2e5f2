// Directory parsing (LFN runs, 8.3 entries), lookups by name and path, and
// the entries a writer adds (see directory.hpp).
#include <algorithm>
#include <cstring>

#include "fat/directory.hpp"

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint32_t kMaxLfnSlots = 20;  // 255 characters / 13 (Linux: id > 20 is bogus)

// A run of LFN slots being collected, highest order first.
struct LfnRun {
  bool active = false;
  std::uint32_t first = 0;    // slot of the 0x40 slot
  std::uint8_t count = 0;     // slots the run announced
  std::uint8_t expected = 0;  // order number the next slot must carry
  std::uint8_t checksum = 0;
  std::u16string chars;  // count * 13, filled as slots arrive
  bool damaged = false;  // a slot's checksum differed: the kernel drops such a name

  std::u16string name() const {
    const auto end = chars.find(u'\0');
    return chars.substr(0, end);
  }
  std::string text() const {
    std::u16string s;
    for (char16_t c : chars)
      if (c != 0xFFFF && c != 0) s += c;
    return utf16_to_utf8(s);
  }
};

void place(LfnRun& run, const LfnEntry& e, std::uint32_t order) {
  const auto c = lfn_slot_chars(e);
  std::copy(c.begin(), c.end(), run.chars.begin() + (order - 1) * kLfnCharsPerSlot);
}

// The slot-by-slot state of the kernel's fat_parse_long and fsck.fat's
// lfn.c: at most one run of LFN slots is open; a free slot, the end, a new
// run or a stray slot closes it as an orphan; an 8.3 entry takes its name
// when the run is whole and its checksum matches.
class SlotParser {
 public:
  explicit SlotParser(std::vector<LfnProblem>& problems) : problems_(problems) {}

  // A deleted slot or the directory's end: an open run had no 8.3 entry.
  void close(std::uint32_t at) {
    if (run_.active) problem(LfnProblem::Kind::orphan, run_.first, at - run_.first, run_.text());
    run_.active = false;
  }

  void lfn_slot(std::uint32_t i, std::span<const std::byte> raw) {
    const auto l = fsio::load<LfnEntry>(raw);
    if (l.first_cluster_lo != 0) problem(LfnProblem::Kind::start_cluster, i, 1, "");
    const std::uint32_t order = l.order & ~kLfnLastSlot;
    if (l.order & kLfnLastSlot) {
      close(i);  // fsck.fat: "A new long file name starts within an old one"
      if (order == 0 || order > kMaxLfnSlots) return fragment(i, l);
      run_ = {true,
              i,
              std::uint8_t(order),
              std::uint8_t(order - 1),
              l.checksum,
              std::u16string(order * kLfnCharsPerSlot, char16_t(0xFFFF))};
      place(run_, l, order);
    } else if (run_.active && order == run_.expected && order > 0) {
      if (l.checksum != run_.checksum) {
        problem(LfnProblem::Kind::part_checksum, i, 1, "");
        run_.damaged = true;
      }
      place(run_, l, order);
      --run_.expected;
    } else {
      close(i);
      fragment(i, l);
    }
  }

  void short_entry(Entry& e) {
    if (!run_.active) return;
    const std::uint32_t slots = e.slot - run_.first;
    if (run_.expected != 0) {
      problem(LfnProblem::Kind::unfinished, run_.first, slots, run_.text());
    } else if (run_.damaged) {
      // reported as part_checksum already; the entry keeps its short name
    } else if (lfn_checksum(e.raw_name) != run_.checksum) {
      problem(LfnProblem::Kind::checksum, run_.first, slots, run_.text());
    } else if (e.is_label() || run_.name().empty()) {
      problem(LfnProblem::Kind::orphan, run_.first, slots, run_.text());
    } else {
      e.long_name = utf16_to_utf8(run_.name());
      e.name = e.long_name;
      e.first_slot = run_.first;
    }
    run_.active = false;
  }

 private:
  void problem(LfnProblem::Kind kind, std::uint32_t first, std::uint32_t slots, std::string text) {
    problems_.push_back({kind, first, slots, std::move(text)});
  }
  void fragment(std::uint32_t at, const LfnEntry& l) {
    LfnRun lone{true, at, 1, 0, 0, std::u16string(kLfnCharsPerSlot, char16_t(0xFFFF))};
    place(lone, l, 1);
    problem(LfnProblem::Kind::fragment, at, 1, lone.text());
  }

  std::vector<LfnProblem>& problems_;
  LfnRun run_;
};

Entry to_entry(const DirEntry& d, std::uint32_t slot, FatType type) {
  Entry e;
  std::memcpy(e.raw_name.data(), d.name, 11);
  e.attributes = d.attributes;
  e.nt_reserved = d.nt_reserved;
  e.first_cluster =
      std::uint32_t(d.first_cluster_lo) | (type == FatType::fat32 ? std::uint32_t(d.first_cluster_hi) << 16 : 0);
  e.size = d.file_size;
  e.created = {d.create_date, d.create_time, d.create_time_tenth};
  e.accessed = d.access_date;
  e.modified = {d.write_date, d.write_time, 0};
  e.slot = e.first_slot = slot;
  e.short_name = decode_short_name(e.raw_name, e.nt_reserved);
  e.name = e.short_name;
  return e;
}

}  // namespace

void Directory::refresh() {
  if (!stale_) return;
  entries_.clear();
  problems_.clear();
  by_name_.clear();
  short_names_.clear();
  end_.reset();
  parse(0, slot_count(), true);
  stale_ = false;
}

void Directory::index_entry(const Entry& e) {
  short_names_.insert(std::string(e.raw_name.begin(), e.raw_name.end()));
  if (e.is_label() || e.is_dot()) return;
  if (!e.long_name.empty()) by_name_.emplace(fold_case(e.long_name), e.slot);
  by_name_.emplace(fold_case(e.short_name), e.slot);
}

// Parses slots [from, to). The whole directory stops at the first 0x00
// slot (past it with past_end_, where a 0x00 slot is free like 0xE5: lfn.c
// ends any long-name run there, lfn_check_orphaned); a run add() wrote is
// parsed on its own and merged in.
void Directory::parse(std::uint32_t from, std::uint32_t to, bool whole) {
  std::vector<Entry> found;
  SlotParser parser(problems_);
  for (std::uint32_t i = from; i < to; ++i) {
    const auto raw = slot(i);
    const auto b0 = std::to_integer<std::uint8_t>(raw[0]);
    if (whole && b0 == kDirEntryEnd && !past_end_) {
      end_ = i;
      to = i;
      break;
    }
    if (whole && b0 == kDirEntryEnd && !end_) end_ = i;
    if (b0 == kDirEntryFree || (past_end_ && b0 == kDirEntryEnd)) {
      parser.close(i);
    } else if ((std::to_integer<std::uint8_t>(raw[11]) & attr::long_name_mask) == attr::long_name) {
      parser.lfn_slot(i, raw);
    } else {
      Entry e = to_entry(fsio::load<DirEntry>(raw), i, layout_.type);
      parser.short_entry(e);
      found.push_back(std::move(e));
    }
  }
  parser.close(to);
  for (const Entry& e : found) index_entry(e);
  // Keep slot order; add() usually appends, which needs no merge.
  const bool in_order = entries_.empty() || found.empty() || found.front().slot > entries_.back().slot;
  const std::size_t old = entries_.size();
  for (Entry& e : found) entries_.push_back(std::move(e));
  if (!in_order)
    std::inplace_merge(entries_.begin(), entries_.begin() + std::ptrdiff_t(old), entries_.end(),
                       [](const Entry& a, const Entry& b) { return a.slot < b.slot; });
}

const Entry* Directory::find(std::string_view name) {
  refresh();
  const auto it = by_name_.find(fold_case(name));
  if (it == by_name_.end()) return nullptr;
  const auto e = std::lower_bound(entries_.begin(), entries_.end(), it->second,
                                  [](const Entry& a, std::uint32_t slot) { return a.slot < slot; });
  return e != entries_.end() && e->slot == it->second ? &*e : nullptr;
}

bool Directory::short_name_taken(const ShortName& name) {
  refresh();
  return short_names_.count(std::string(name.begin(), name.end())) != 0;
}

fsio::Result<Entry> lookup(Volume& volume, std::string_view path) {
  const Layout& l = volume.layout();
  Entry cur;
  cur.name = "/";
  cur.attributes = attr::directory;
  cur.first_cluster = l.type == FatType::fat32 ? l.root_cluster : 0;
  std::string walked;
  bool root = true;
  for (std::size_t pos = 0; pos <= path.size();) {
    const std::size_t slash = std::min(path.find('/', pos), path.size());
    const std::string_view part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty()) continue;
    if (!cur.is_directory())
      return make_error(Errc::invalid_argument, "'" + (walked.empty() ? "/" : walked) + "' is not a directory");
    auto dir = root ? FSIO_TRY(Directory::open_root(volume)) : FSIO_TRY(Directory::open(volume, cur));
    const Entry* e = dir.find(part);
    walked += "/" + std::string(part);
    if (!e) return make_error(Errc::not_found, "no '" + walked + "'");
    cur = *e;
    root = false;
  }
  return cur;
}

DirEntry make_entry(const NameSlots& name, std::uint8_t attributes, std::uint32_t first_cluster, std::uint32_t size,
                    DosDateTime when, FatType type) {
  DirEntry d{};
  std::memcpy(d.name, name.short_name.data(), 11);
  d.attributes = attributes;
  d.nt_reserved = name.case_bits;
  set_times(d, when);
  d.first_cluster_lo = std::uint16_t(first_cluster & 0xFFFF);
  d.first_cluster_hi = std::uint16_t(type == FatType::fat32 ? first_cluster >> 16 : 0);
  d.file_size = size;
  return d;
}

std::vector<std::byte> entry_slots(const NameSlots& name, const DirEntry& entry) {
  std::vector<std::byte> out(name.slot_count() * 32);
  for (std::size_t i = 0; i < name.lfn.size(); ++i) fsio::store(std::span(out), name.lfn[i], i * 32);
  fsio::store(std::span(out), entry, name.lfn.size() * 32);
  return out;
}

std::array<DirEntry, 2> make_dot_entries(const Layout& layout, std::uint32_t self, std::uint32_t parent,
                                         DosDateTime when) {
  const bool parent_is_root = parent == 0 || (layout.type == FatType::fat32 && parent == layout.root_cluster);
  NameSlots dot, dotdot;
  dot.short_name = {'.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  dotdot.short_name = {'.', '.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  return {make_entry(dot, attr::directory, self, 0, when, layout.type),
          make_entry(dotdot, attr::directory, parent_is_root ? 0 : parent, 0, when, layout.type)};
}

}  // namespace fat
