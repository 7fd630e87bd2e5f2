// write_plan: the plan carried out in crash-safe order, a file (sync) or a
// batch of files at a time (see fill.hpp for the order and why).
#include <algorithm>
#include <chrono>
#include <set>

#include "fat/fill_plan.hpp"

namespace fat::fill_detail {

namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kZeroBufferBytes = 4u << 20;

fsio::IoStats delta(const fsio::IoStats& a, const fsio::IoStats& b) {
  fsio::IoStats d;
  d.requests_queued = b.requests_queued - a.requests_queued;
  d.requests_submitted = b.requests_submitted - a.requests_submitted;
  d.syscalls = b.syscalls - a.syscalls;
  d.bytes_read = b.bytes_read - a.bytes_read;
  d.bytes_written = b.bytes_written - a.bytes_written;
  d.flushes = b.flushes - a.flushes;
  d.retries = b.retries - a.retries;
  d.peak_in_flight = b.peak_in_flight;
  d.elapsed_seconds = b.elapsed_seconds - a.elapsed_seconds;
  return d;
}

class Writer {
 public:
  Writer(Volume& v, const FillOptions& o, const Plan& p, FillReport& r, fsio::Progress* progress)
      : vol_(v),
        q_(v.queue()),
        fat_(v.fat()),
        l_(v.layout()),
        opt_(o),
        plan_(p),
        rep_(r),
        progress_(progress),
        dirs_(p.dirs.size()),
        free_(r.free_before),
        last_(v.allocation_hint()) {}

  fsio::Status run();

 private:
  struct Batch {
    std::size_t begin = 0, end = 0;
    bool growth = false, directories = false, replace = false;
  };
  Batch next_batch(std::size_t begin) const;
  fsio::Status run_batch(const Batch& b);
  fsio::Status read_ahead();
  static void fat_ranges(const Item& it, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out);
  fsio::Status queue_data(const Batch& b, fsio::IoQueue::Plug& plug);
  fsio::Status stage(const Item& item, std::set<std::size_t>& touched);
  fsio::Status link(const std::vector<Extent>& extents);
  fsio::Status fat_writes(fsio::IoQueue::Plug& plug);
  fsio::Status write_fat(fsio::IoQueue::Plug& plug);
  fsio::Status write_dirs(const Batch& b, const std::set<std::size_t>& touched);
  fsio::Status free_old(const Batch& b);
  fsio::Status finish(fsio::IoQueue::Plug& plug, const char* what);
  fsio::Status flush(const char* after);
  void queue_fsinfo(fsio::IoQueue::Plug& plug);
  fsio::Result<Directory*> dir(std::size_t index);
  void account(const Batch& b);
  fsio::Status finalize();
  fsio::Error after_writing(fsio::Error e) const;

  Volume& vol_;
  fsio::IoQueue& q_;
  FatTable& fat_;
  const Layout& l_;
  const FillOptions& opt_;
  const Plan& plan_;
  FillReport& rep_;
  fsio::Progress* progress_;
  std::vector<std::optional<Directory>> dirs_;  // opened (or created) when first needed
  fsio::AlignedBuffer zeros_;
  std::uint32_t free_;          // free clusters once what is committed is on disk
  std::uint32_t last_;          // last cluster allocated, for FSI_Nxt_Free
  bool fsinfo_current_ = true;  // FSInfo on disk matches what is committed
  bool wrote_ = false;
};

// With sync, one item per batch. Without, items of one kind (directories
// are made before any file goes in) until the FAT changes reach the bound.
Writer::Batch Writer::next_batch(std::size_t begin) const {
  Batch b{begin, begin};
  const std::uint64_t entry_bytes = l_.type == FatType::fat32 ? 4 : 2;
  std::uint64_t fat_bytes = 0;
  while (b.end < plan_.items.size()) {
    const Item& it = plan_.items[b.end];
    if (b.end > begin && (opt_.sync || it.kind != plan_.items[begin].kind || b.end - begin >= opt_.max_batch_files ||
                          fat_bytes >= opt_.batch_fat_bytes))
      break;
    for (const Extent& e : it.extents) fat_bytes += e.count * entry_bytes;
    for (const Extent& e : it.old_extents) fat_bytes += e.count * entry_bytes;
    b.growth |= !it.growth.empty();
    b.directories |= it.kind == Item::Kind::directory;
    b.replace |= it.replace;
    ++b.end;
  }
  return b;
}

fsio::Result<Directory*> Writer::dir(std::size_t index) {
  if (!dirs_[index]) {
    const DirRef& d = plan_.dirs[index];
    FSIO_ASSERT(!d.created);  // created ones are made by their item's data step
    dirs_[index] = d.root ? FSIO_TRY(Directory::open_root(vol_)) : FSIO_TRY(Directory::open(vol_, d.cluster));
    dirs_[index]->read_past_end();  // as the planner read it, so its slot numbers hold
  }
  return &*dirs_[index];
}

fsio::Status Writer::finish(fsio::IoQueue::Plug& plug, const char* what) {
  if (plug.pending() == 0) return {};
  wrote_ = true;
  FSIO_TRY_CTX(plug.finish(), what);
  return {};
}

fsio::Status Writer::flush(const char* after) {
  ++rep_.flushes;
  FSIO_TRY_CTX(q_.flush(), std::string("flush after ") + after);
  return {};
}

void Writer::queue_fsinfo(fsio::IoQueue::Plug& plug) {
  const auto& fi = vol_.fsinfo();
  if (!fi || !fi->signatures_ok || fsinfo_current_) return;
  if (vol_.queue_fsinfo(plug, free_, last_)) ++rep_.fsinfo_writes;
  fsinfo_current_ = true;
}

// Step 1: zeros for the files' clusters and directories' new clusters, and
// new directories' first cluster. Checks for Ctrl-C between plugs: nothing
// points at these clusters yet, so stopping here leaves nothing behind.
fsio::Status Writer::queue_data(const Batch& b, fsio::IoQueue::Plug& plug) {
  const std::uint64_t cb = l_.cluster_bytes();
  auto zero = [&](std::uint32_t first, std::uint64_t count, bool file_data) -> fsio::Status {
    const std::uint64_t bytes = count * cb;
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t piece = std::min<std::uint64_t>(zeros_.size(), bytes - done);
      plug.write(l_.cluster_offset(first) + done, zeros_.span().first(piece));
      done += piece;
      rep_.bytes_zeroed += piece;
      if (file_data && progress_) progress_->add(piece);
      if (plug.pending_bytes() >= opt_.zero_plug_bytes) {
        FSIO_TRY(finish(plug, "zero-fill"));
        if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
      }
    }
    return {};
  };
  for (std::size_t i = b.begin; i < b.end; ++i) {
    const Item& it = plan_.items[i];
    for (std::uint32_t g : it.growth) FSIO_TRY(zero(g, 1, false));
    if (it.kind == Item::Kind::directory) {
      const std::uint32_t c = it.extents[0].first;
      dirs_[it.self] = Directory::create(l_, c, plan_.dirs[it.parent].cluster, opt_.when);
      dirs_[it.self]->queue_dirty(plug);
      dirs_[it.self]->clear_dirty();
      rep_.bytes_zeroed += cb;
    } else if (opt_.zero) {
      for (const Extent& e : it.extents) FSIO_TRY(zero(e.first, e.count, true));
    }
  }
  return {};
}

// Chains in the FAT: each cluster points at the next, the last is the end.
fsio::Status Writer::link(const std::vector<Extent>& ex) {
  for (std::size_t i = 0; i < ex.size(); ++i)
    FSIO_TRY(fat_.set_chain(ex[i].first, ex[i].count, i + 1 < ex.size() ? ex[i + 1].first : end_of_chain(l_.type)));
  return {};
}

// In memory: the directory grows, the chains go into the FAT, the entry
// into its directory. Written by the steps after.
fsio::Status Writer::stage(const Item& it, std::set<std::size_t>& touched) {
  Directory* parent = FSIO_TRY(dir(it.parent));
  touched.insert(it.parent);
  for (std::uint32_t g : it.growth) {
    const std::uint32_t prev = parent->clusters().back();
    FSIO_TRY(parent->append_cluster(g));
    FSIO_TRY(fat_.set(prev, g));
    FSIO_TRY(fat_.set(g, end_of_chain(l_.type)));
  }
  FSIO_TRY(link(it.extents));
  const std::uint32_t first = it.extents.empty() ? 0 : it.extents[0].first;
  if (it.replace) {
    auto e = fsio::load<DirEntry>(parent->slot(it.slot));
    const DirEntry fresh = make_entry(NameSlots{}, attr::archive, first, it.size, opt_.when, l_.type);
    e.attributes = attr::archive;
    set_times(e, opt_.when);
    e.first_cluster_hi = fresh.first_cluster_hi;
    e.first_cluster_lo = fresh.first_cluster_lo;
    e.file_size = it.size;
    std::array<std::byte, 32> bytes;
    fsio::store(std::span(bytes), e);
    return parent->overwrite(it.slot, bytes);
  }
  const NameSlots slots = FSIO_TRY(name_slots(*parent, it.name));
  FSIO_ASSERT(slots.short_name == it.short_name);  // the same edits on the same bytes
  const std::uint8_t attrs = it.kind == Item::Kind::directory ? attr::directory : attr::archive;
  return parent->add(it.slot, entry_slots(slots, make_entry(slots, attrs, first, it.size, opt_.when, l_.type)));
}

// The FAT's dirty sectors in every copy. Batched: queued into the plug,
// which IoQueue sorts and merges. Serial: one request per sector per copy,
// each waited for before the next (Linux before it batched mirror writes).
fsio::Status Writer::fat_writes(fsio::IoQueue::Plug& plug) {
  rep_.fat_sectors_per_copy += fat_.dirty_sectors();
  if (opt_.mirror == MirrorMode::batched) {
    rep_.fat_requests += fat_.queue_dirty(plug);
    return {};
  }
  const std::uint64_t ss = l_.sector_size;
  fsio::Status status;
  fat_.for_each_dirty_run([&](std::uint64_t off, std::span<const std::byte> bytes) {
    for (std::uint64_t at = 0; at < bytes.size() && status; at += ss) {
      ++rep_.fat_requests;
      wrote_ = true;
      status = q_.write(off + at, bytes.subspan(at, ss));
    }
  });
  FSIO_TRY_CTX(status, "write FAT");
  return {};
}

// Step 2: the FAT with whatever data the plug holds, then a flush: the
// chains are durable before any entry can point at them.
fsio::Status Writer::write_fat(fsio::IoQueue::Plug& plug) {
  FSIO_TRY(fat_writes(plug));
  FSIO_TRY(finish(plug, "write data and FAT"));
  FSIO_TRY(flush("the FAT"));
  fat_.clear_dirty();
  return {};
}

// Step 3: the entries (with sync, FSInfo too), flushed when sync asks for
// it or a replaced file's old chain is to be freed next.
fsio::Status Writer::write_dirs(const Batch& b, const std::set<std::size_t>& touched) {
  auto plug = q_.plug();
  for (std::size_t d : touched) {
    rep_.dir_sectors += dirs_[d]->dirty_sectors();
    dirs_[d]->queue_dirty(plug);
  }
  if (opt_.sync && !b.replace) queue_fsinfo(plug);
  FSIO_TRY(finish(plug, "write directory"));
  for (std::size_t d : touched) dirs_[d]->clear_dirty();
  if (opt_.sync || b.replace) FSIO_TRY(flush("the directory entries"));
  return {};
}

// Step 4: replaced files' old chains, now that no entry points at them. A
// crash before this leaves them as lost clusters.
fsio::Status Writer::free_old(const Batch& b) {
  for (std::size_t i = b.begin; i < b.end; ++i)
    for (const Extent& e : plan_.items[i].old_extents) {
      for (std::uint32_t c = e.first; c < e.end(); ++c) FSIO_TRY(fat_.set(c, 0));
      free_ += e.count;
    }
  fsinfo_current_ = false;
  auto plug = q_.plug();
  FSIO_TRY(fat_writes(plug));
  if (opt_.sync) queue_fsinfo(plug);
  FSIO_TRY(finish(plug, "free replaced clusters"));
  fat_.clear_dirty();
  if (opt_.sync) FSIO_TRY(flush("freeing replaced clusters"));
  return {};
}

// What a batch takes from the free space, counted once its chains are staged.
void Writer::account(const Batch& b) {
  for (std::size_t i = b.begin; i < b.end; ++i) {
    const Item& it = plan_.items[i];
    free_ -= std::uint32_t(it.growth.size());
    if (!it.growth.empty()) last_ = it.growth.back();
    for (const Extent& e : it.extents) {
      free_ -= e.count;
      last_ = e.end() - 1;
    }
  }
  fsinfo_current_ = false;
}

// The FAT entries an item changes: its chain, the clusters its directory
// grows by, a replaced file's old chain. (The entry a growth links from is
// the directory's last cluster, cached when the directory was opened.)
void Writer::fat_ranges(const Item& it, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  for (const Extent& e : it.extents) out.emplace_back(e.first, e.count);
  for (std::uint32_t g : it.growth) out.emplace_back(g, 1);
  for (const Extent& e : it.old_extents) out.emplace_back(e.first, e.count);
}

// Before the first write: the existing directories the plan adds names to,
// and the FAT blocks every item changes, in one plug of merged reads (as
// many as the cache keeps), so the batches after wait only for writes and
// flushes, as the kernel's writes in lesson 1 did.
fsio::Status Writer::read_ahead() {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  std::vector<bool> parent(plan_.dirs.size(), false);
  for (const Item& it : plan_.items) {
    fat_ranges(it, ranges);
    parent[it.parent] = true;
  }
  for (std::size_t d = 0; d < plan_.dirs.size(); ++d)
    if (parent[d] && !plan_.dirs[d].created) FSIO_TRY(dir(d));
  FSIO_TRY(fat_.prefetch(ranges));
  return {};
}

fsio::Status Writer::run_batch(const Batch& b) {
  auto plug = q_.plug();
  if (auto st = queue_data(b, plug); !st) {
    for (std::size_t i = b.begin; i < b.end; ++i)
      if (plan_.items[i].kind == Item::Kind::directory) dirs_[plan_.items[i].self].reset();
    return st;
  }
  // A new directory's buffer must not change under its queued write, and a
  // growing directory's zeros must be durable before the link to them.
  if (b.growth || b.directories) FSIO_TRY(finish(plug, "zero-fill"));
  if (b.growth) FSIO_TRY(flush("zeroing new directory clusters"));
  // Whatever read_ahead() could not keep: the batch's FAT blocks in one
  // round of reads rather than one by one (none when it kept them all).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  for (std::size_t i = b.begin; i < b.end; ++i) fat_ranges(plan_.items[i], ranges);
  FSIO_TRY(fat_.prefetch(ranges));
  std::set<std::size_t> touched;
  for (std::size_t i = b.begin; i < b.end; ++i) FSIO_TRY(stage(plan_.items[i], touched));
  account(b);
  FSIO_TRY(write_fat(plug));
  FSIO_TRY(write_dirs(b, touched));
  if (b.replace) FSIO_TRY(free_old(b));
  for (std::size_t i = b.begin; i < b.end; ++i) {
    const Item& it = plan_.items[i];
    if (it.kind != Item::Kind::file) continue;
    ++rep_.files_done;
    if (!opt_.zero && progress_) progress_->add(it.size);
  }
  return {};
}

// Step 5: FSInfo for everything committed, and the flush that makes the
// last batch durable.
fsio::Status Writer::finalize() {
  if (!wrote_) return {};
  auto plug = q_.plug();
  queue_fsinfo(plug);
  const bool fsinfo = plug.pending() > 0;
  FSIO_TRY(finish(plug, "write FSInfo"));
  if (!opt_.sync || fsinfo) FSIO_TRY(flush("FSInfo"));
  return {};
}

fsio::Error Writer::after_writing(fsio::Error e) const {
  if (!wrote_) return e;
  return std::move(e).with_note(" (" + std::to_string(rep_.files_done) + " of " + std::to_string(rep_.files.size()) +
                                " files were complete before it; fsck.fat may find lost clusters, which it "
                                "reclaims, but no damaged file)");
}

fsio::Status Writer::run() {
  std::uint64_t biggest = 0;
  for (const Item& it : plan_.items)
    for (const Extent& e : it.extents) biggest = std::max<std::uint64_t>(biggest, e.count * l_.cluster_bytes());
  zeros_ = fsio::AlignedBuffer(
      std::size_t(std::max(l_.cluster_bytes(), opt_.zero ? std::min(biggest, kZeroBufferBytes) : 0)));
  const fsio::IoStats before = q_.stats();
  const auto t0 = std::chrono::steady_clock::now();
  FSIO_TRY(read_ahead());
  rep_.read_ahead_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool interrupted = false;
  for (std::size_t i = 0; i < plan_.items.size();) {
    if (fsio::InterruptGuard::requested()) {
      interrupted = true;
      break;
    }
    const Batch b = next_batch(i);
    if (auto st = run_batch(b); !st) {
      if (st.error().code != Errc::interrupted) return after_writing(st.error());
      interrupted = true;
      break;
    }
    i = b.end;
  }
  if (auto st = finalize(); !st) return after_writing(st.error());
  rep_.write_io = delta(before, q_.stats());
  if (interrupted)
    return make_error(Errc::interrupted, "interrupted after " + std::to_string(rep_.files_done) + " of " +
                                             std::to_string(rep_.files.size()) +
                                             " files; those are complete and the volume is consistent")
        .at(vol_.path());
  return {};
}

}  // namespace

fsio::Status write_plan(Volume& volume, const FillOptions& options, const Plan& plan, FillReport& report,
                        fsio::Progress* progress) {
  return Writer(volume, options, plan, report, progress).run();
}

}  // namespace fat::fill_detail
