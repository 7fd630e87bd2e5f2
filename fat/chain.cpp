// Chain walking with Brent's cycle detection, and reading a file's chain
// (see chain.hpp).
#include "fat/chain.hpp"

#include <algorithm>

namespace fat {

namespace {

using fsio::Errc;
using fsio::make_error;

// Brent's algorithm found a cycle of length `lambda`; find where it starts
// (mu, the position of the first repeated cluster) and the last cluster
// before the chain repeats (position mu + lambda - 1).
fsio::Status close_loop(FatTable& fat, std::uint32_t first, std::uint64_t lambda, Chain& c) {
  std::uint32_t a = first, b = first;
  for (std::uint64_t i = 0; i < lambda; ++i) b = FSIO_TRY(fat.get(b));
  std::uint64_t mu = 0;
  while (a != b) {
    a = FSIO_TRY(fat.get(a));
    b = FSIO_TRY(fat.get(b));
    ++mu;
  }
  std::uint32_t last = a;  // x_mu
  for (std::uint64_t i = 1; i < lambda; ++i) last = FSIO_TRY(fat.get(last));
  c.length = std::uint32_t(mu + lambda);
  c.last = last;
  c.stop = a;
  c.end = ChainEnd::loop;
  return {};
}

// The walk itself: length, last, end and stop, no visitor.
fsio::Status follow(FatTable& fat, Chain& c) {
  const Layout& l = fat.layout();
  std::uint32_t cur = c.first, prev = 0, tortoise = c.first;
  std::uint64_t power = 1, lam = 0, length = 1;
  for (;;) {
    const std::uint32_t v = FSIO_TRY(fat.get(cur));
    const EntryKind kind = classify(l.type, v);
    if (kind == EntryKind::end_of_chain || kind == EntryKind::free || kind == EntryKind::bad) {
      const bool keep = kind == EntryKind::end_of_chain;  // a free or bad cluster is not kept
      c.length = std::uint32_t(keep ? length : length - 1);
      c.last = keep ? cur : prev;
      c.stop = keep ? v : cur;
      c.end = keep ? ChainEnd::end_of_chain : kind == EntryKind::free ? ChainEnd::free_cluster : ChainEnd::bad_cluster;
      return {};
    }
    if (kind != EntryKind::next || !l.is_cluster(v)) {
      c.length = std::uint32_t(length);
      c.last = cur;
      c.stop = v;
      c.end = ChainEnd::out_of_range;
      return {};
    }
    prev = cur;
    cur = v;
    ++lam;
    if (cur == tortoise) return close_loop(fat, c.first, lam, c);
    if (lam == power) {  // Brent: move the tortoise to the hare, double the window
      tortoise = cur;
      power *= 2;
      lam = 0;
    }
    ++length;
  }
}

}  // namespace

const char* chain_end_name(ChainEnd end) {
  switch (end) {
    case ChainEnd::end_of_chain: return "end of chain";
    case ChainEnd::free_cluster: return "free cluster";
    case ChainEnd::bad_cluster: return "bad cluster";
    case ChainEnd::out_of_range: return "out-of-range entry";
    case ChainEnd::loop: return "loop";
    case ChainEnd::bad_start: return "bad first cluster";
  }
  return "?";
}

std::string describe(const Chain& c) {
  const std::string head = "chain from " + std::to_string(c.first) + ": ";
  const std::string n = std::to_string(c.length) + " cluster" + (c.length == 1 ? "" : "s");
  switch (c.end) {
    case ChainEnd::end_of_chain: return head + n + ", ending at " + std::to_string(c.last);
    case ChainEnd::free_cluster:
    case ChainEnd::bad_cluster:
      return head + "reaches " + (c.end == ChainEnd::free_cluster ? "free" : "bad") + " cluster " +
             std::to_string(c.stop) + " after " + n;
    case ChainEnd::out_of_range:
      return head + "cluster " + std::to_string(c.last) + " points to " + std::to_string(c.stop) +
             ", which is not a cluster, after " + n;
    case ChainEnd::loop:
      return head + "loop after " + n + " (cluster " + std::to_string(c.last) + " points back to " +
             std::to_string(c.stop) + ")";
    case ChainEnd::bad_start: return head + "the first cluster is not a cluster";
  }
  return head;
}

fsio::Result<Chain> walk_chain(FatTable& fat, std::uint32_t first, const RunVisitor& visit) {
  Chain c;
  c.first = first;
  if (!fat.layout().is_cluster(first)) {
    c.end = ChainEnd::bad_start;
    c.stop = first;
    return c;
  }
  FSIO_TRY(follow(fat, c));
  if (!visit || c.length == 0) return c;
  std::uint32_t run_first = first, run_count = 1, cur = first;
  for (std::uint32_t i = 1; i < c.length; ++i) {
    const std::uint32_t next = FSIO_TRY(fat.get(cur));
    if (next == cur + 1) {
      ++run_count;
    } else {
      if (!visit(run_first, run_count)) return c;
      run_first = next;
      run_count = 1;
    }
    cur = next;
  }
  visit(run_first, run_count);
  return c;
}

fsio::Status read_file(Volume& volume, std::uint32_t first, std::uint64_t size,
                       const std::function<bool(std::span<const std::byte>)>& sink, std::size_t max_read) {
  if (size == 0) return {};
  const Layout& l = volume.layout();
  const std::uint64_t cb = l.cluster_bytes();
  if (first == 0) return make_error(Errc::corrupt, "file of " + std::to_string(size) + " bytes has no first cluster");
  // No bigger a buffer than the file needs: a small file's read must not
  // allocate and zero max_read bytes.
  const std::uint64_t clusters = size / cb + (size % cb != 0);
  const std::uint64_t per_read = std::clamp<std::uint64_t>(max_read / cb, 1, clusters);
  fsio::AlignedBuffer buf(per_read * cb);
  std::uint64_t left = size;
  fsio::Status status;
  bool stopped = false;
  auto visit = [&](std::uint32_t run, std::uint32_t count) {
    for (std::uint32_t done = 0; done < count && left > 0;) {
      const std::uint32_t n = std::uint32_t(std::min<std::uint64_t>(per_read, count - done));
      status = volume.read_clusters(run + done, n, buf.span());
      if (!status) return false;
      const std::uint64_t take = std::min(left, n * cb);
      left -= take;
      done += n;
      if (!sink(buf.span().first(take))) {
        stopped = true;
        return false;
      }
    }
    return left > 0;
  };
  const Chain c = FSIO_TRY(walk_chain(volume.fat(), first, visit));
  FSIO_TRY(status);
  if (left > 0 && !stopped)
    return make_error(Errc::corrupt, "file of " + std::to_string(size) + " bytes: " + describe(c) + ", " +
                                         std::to_string(left) + " bytes short");
  return {};
}

}  // namespace fat
