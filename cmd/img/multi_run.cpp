// restore_many(), part two: a thread and a queue per target, the input fed
// once to all of them, then the read-back (multi.hpp, fanout.hpp).
#include "cmd/img/multi_run.hpp"

#include <chrono>
#include <thread>

#include "cmd/img/feed.hpp"
#include "cmd/img/restore.hpp"
#include "cmd/img/wipe.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/size.hpp"

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One target's side while writing.
struct LaneState {
  Opened* target = nullptr;
  std::size_t index = 0;
  Lane lane;
  std::optional<fsio::IoQueue> queue;
  std::optional<LaneWriter> writer;
  std::optional<fsio::Error> error;
  bool written = false;
  double seconds = 0;
};

void show(const ManyOptions& o, std::size_t i, std::uint64_t done) {
  if (o.progress) o.progress->counter(i).store(done, std::memory_order_relaxed);
}

// The target's thread: wipe (--force), every batch as it comes, then the
// tail and the head once the input has ended whole.
fsio::Status write_lane(LaneState& s, const HeadHold& head, const std::uint64_t& image_end, const Image& im,
                        const ManyOptions& o) {
  fsio::Device& dev = s.target->dev;
  if (!o.dry_run) {
    s.queue.emplace(FSIO_TRY(fsio::IoQueue::create(dev, {.engine = o.engine})));
    FSIO_TRY(wipe_signatures(*s.queue, s.target->sigs, im.size.value_or(dev.size())));
  }
  s.writer.emplace(dev, s.queue ? &*s.queue : nullptr, o.keep_unused, s.target->created);
  while (auto b = s.lane.pop()) {
    if (fsio::InterruptGuard::requested()) return make_error(Errc::interrupted, "interrupted");
    FSIO_TRY(s.writer->batch(*b));
    show(o, s.index, s.writer->position());
  }
  if (!s.lane.complete()) return {};  // the input stopped: its error is the report's
  FSIO_TRY(s.writer->finish(head, image_end));
  s.written = true;
  show(o, s.index, s.writer->position());
  return {};
}

fsio::Status feed(Image& im, const ManyOptions& o, Sender& s) {
  if (im.stream) return feed_stream(*im.stream, o.threads, s);
  if (im.bmap) return feed_bmap(*im.raw, *im.bmap, s);
  return feed_raw(*im.raw, im.block, s);
}

// What a target that was not written whole holds now.
std::string holds_note(const LaneState& s, const Image& im) {
  const std::string head = fsio::format_size(std::min(kHeadBytes, im.size.value_or(kHeadBytes)));
  if (s.writer && s.writer->writing_head())
    return "everything after the first " + head + " was written, and it stopped in the first " + head +
           ", which is written last: it may hold part of a filesystem; run fsimg restore --force again";
  const std::uint64_t pos = s.writer ? s.writer->position() : 0;
  return "nothing was written past byte " + std::to_string(pos) + " of " +
         (im.size ? std::to_string(*im.size) : std::string("the image")) + ", and the first " + head +
         " (where a filesystem's signature lives) is written last, so it holds no filesystem: run fsimg restore again";
}

TargetReport target_report(const LaneState& s, const Image& im, const ManyOptions& o) {
  TargetReport r;
  r.path = s.target->dev.path();
  r.written = s.written;
  if (s.writer) r.counts = s.writer->counts();
  r.wiped_signatures = s.target->sigs.size();
  r.direct = s.target->dev.direct();
  r.created = s.target->created;
  r.seconds = s.seconds;
  r.error = s.error;
  if (!r.written && !o.dry_run) r.holds = holds_note(s, im);
  return r;
}

}  // namespace

void run_targets(Image& im, std::vector<Opened>& targets, const ManyOptions& o, ManyReport& rep, WrittenMap* written) {
  const auto start = Clock::now();
  HeadHold head(std::min(kHeadBytes, im.size.value_or(kHeadBytes)));
  std::uint64_t image_end = 0;  // set before the lanes close; read by them after
  std::vector<std::unique_ptr<LaneState>> lanes;
  std::vector<Lane*> queues;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    lanes.push_back(std::make_unique<LaneState>());
    lanes.back()->target = &targets[i];
    lanes.back()->index = i;
    queues.push_back(&lanes.back()->lane);
  }
  fsio::Status fed;
  {
    std::vector<std::jthread> threads;
    for (auto& l : lanes)
      threads.emplace_back([&, s = l.get()] {
        if (auto st = write_lane(*s, head, image_end, im, o); !st) {
          s->error = std::move(st).error();
          s->lane.fail();
        }
        s->seconds = since(start);
      });
    Sender sender(queues, head, written, o.keep_unused);
    fed = feed(im, o, sender);
    image_end = sender.end();
    rep.read_bytes = sender.end();
    for (auto& l : lanes) l->lane.close(fed.has_value());
  }  // every target's thread joined
  // "Every target has failed" is theirs, each named; anything else stopped them all.
  const bool all_failed = std::all_of(lanes.begin(), lanes.end(), [](const auto& l) { return l->error.has_value(); });
  if (fsio::InterruptGuard::requested()) rep.input_error = make_error(Errc::interrupted, "interrupted");
  else if (!fed && !all_failed) rep.input_error = std::move(fed).error();
  for (const auto& l : lanes) rep.targets.push_back(target_report(*l, im, o));
}

void verify_targets(const std::vector<Opened>& targets, const ManyOptions& o, const WrittenMap& written,
                    ManyReport& rep) {
  if (o.before_verify) o.before_verify();
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      TargetReport& t = rep.targets[i];
      if (!t.written) continue;
      if (o.progress) o.progress->phase(i, "verify", written.bytes());
      threads.emplace_back([&o, &written, &t, i] {
        auto rb = read_back(t.path, o.offset, written, o.engine, o.progress ? &o.progress->counter(i) : nullptr);
        if (rb) t.readback = std::move(*rb);
        else t.verify_error = std::move(rb).error();
      });
    }
  }
  // A difference found by checksum, named to the byte by a target that verified.
  const auto good = std::find_if(rep.targets.begin(), rep.targets.end(), [](const auto& t) { return t.verified(); });
  for (auto& t : rep.targets) {
    if (!t.readback || !t.readback->difference || t.readback->difference->exact || good == rep.targets.end()) continue;
    if (auto st = pinpoint(t.path, good->path, o.offset, *t.readback->difference); !st)
      t.readback->difference->text += " (the byte could not be named: " + st.error().message() + ")";
  }
}

void remove_failed_creations(std::vector<Opened>& targets, ManyReport& rep) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i].created || (rep.targets[i].written && !rep.dry_run)) continue;
    const auto st = targets[i].dev.remove_created();
    rep.targets[i].holds =
        st ? "removed " + rep.targets[i].path + ", which --create had made"
           : "could not remove " + rep.targets[i].path + ", which --create had made: " + st.error().message();
  }
}

}  // namespace img
