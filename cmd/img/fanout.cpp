#include "cmd/img/fanout.hpp"

#include <algorithm>
#include <cstring>

namespace img {
namespace {
constexpr std::uint64_t kUnit = 512;
}

HeadHold::HeadHold(std::uint64_t head_end)
    : end_(head_end), bytes_((head_end + 4095) / 4096 * 4096), kinds_((head_end + kUnit - 1) / kUnit, none) {}

Piece HeadHold::take(const Piece& p) {
  if (p.offset >= end_) return p;
  const std::uint64_t cut = std::min(p.length, end_ - p.offset);
  if (p.data) std::memcpy(bytes_.data() + p.offset, p.data, cut);
  else std::memset(bytes_.data() + p.offset, 0, cut);
  const Kind k = p.data ? data : p.unused ? unused : zero;
  for (std::uint64_t u = p.offset / kUnit; u < (p.offset + cut + kUnit - 1) / kUnit; ++u) kinds_[u] = k;
  filled_ = std::max(filled_, p.offset + cut);
  Piece rest = p;
  rest.offset += cut;
  rest.length -= cut;
  if (rest.data) rest.data += cut;
  return rest;
}

std::vector<HeadHold::Run> HeadHold::runs(bool keep_unused, bool reads_zeros) const {
  auto wanted = [&](Kind k) {
    return k == data || (k == zero && !reads_zeros) || (k == unused && !keep_unused && !reads_zeros);
  };
  std::vector<Run> out;
  for (std::uint64_t u = 0; u < kinds_.size();) {
    if (!wanted(kinds_[u])) {
      ++u;
      continue;
    }
    std::uint64_t v = u;
    while (v < kinds_.size() && wanted(kinds_[v])) ++v;
    const std::uint64_t begin = u * kUnit, end = std::min(v * kUnit, filled_);
    if (end > begin) out.push_back({begin, bytes_.span().subspan(begin, end - begin)});
    u = v;
  }
  return out;
}

bool Lane::push(BatchPtr b) {
  std::unique_lock lock(m_);
  changed_.wait(lock, [&] { return failed_ || q_.size() < kLaneDepth; });
  if (failed_) return false;
  q_.push_back(std::move(b));
  changed_.notify_all();
  return true;
}

void Lane::close(bool complete) {
  std::lock_guard lock(m_);
  closed_ = true;
  complete_ = complete;
  changed_.notify_all();
}

bool Lane::failed() const {
  std::lock_guard lock(m_);
  return failed_;
}

bool Lane::complete() const {
  std::lock_guard lock(m_);
  return complete_;
}

BatchPtr Lane::pop() {
  std::unique_lock lock(m_);
  changed_.wait(lock, [&] { return failed_ || closed_ || !q_.empty(); });
  if (failed_ || q_.empty()) return nullptr;
  BatchPtr b = std::move(q_.front());
  q_.pop_front();
  changed_.notify_all();
  return b;
}

void Lane::fail() {
  std::lock_guard lock(m_);
  failed_ = true;
  q_.clear();
  changed_.notify_all();
}

}  // namespace img
