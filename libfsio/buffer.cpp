#include "libfsio/buffer.hpp"

#include <sys/mman.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "libfsio/result.hpp"

namespace fsio {

void AlignedBuffer::Free::operator()(std::byte* p) const {
  if (mapped) (void)::munmap(p, mapped);
  else std::free(p);
}

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;

// A buffer of a huge page or more: mapped on its own, 2 MiB-aligned and
// advised for transparent huge pages (Debian's default is THP on madvise
// only): direct I/O pins the pages of every request, and one 2 MiB folio
// pins and maps into a bio as one segment where 4 KiB pages take 512. A new
// anonymous mapping reads as zeros, so nothing is written to it here: the
// kernel clears each page at its first touch, and a tail shorter than a
// huge page stays in 4 KiB pages, so 2.1 MiB costs 2.1 MiB of clearing, not
// 4 MiB twice (the rounding up and a memset).
std::byte* map_huge(std::size_t size, std::size_t* mapped) {
  const std::size_t len = (size + 4095) / 4096 * 4096;
  void* raw = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();  // out of memory is not an expected failure
  const auto at = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (at + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > at) (void)::munmap(raw, aligned - at);
  if (const std::size_t tail = at + len + kHugePage - (aligned + len))
    (void)::munmap(reinterpret_cast<void*>(aligned + len), tail);
  auto* p = reinterpret_cast<std::byte*>(aligned);
  (void)::madvise(p, len, MADV_HUGEPAGE);  // advisory: 4 KiB pages still work
  *mapped = len;
  return p;
}

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t size, std::size_t alignment) : size_(size) {
  // 4096 covers every logical sector size and DIO alignment we meet (4Kn
  // disks, loop devices with --sector-size 4096); larger powers of two are
  // honoured for callers that want page-multiple or huge alignment.
  if (alignment < 4096) alignment = 4096;
  FSIO_ASSERT(std::has_single_bit(alignment));
  if (size == 0) return;
  if (size >= kHugePage && alignment <= kHugePage) {
    std::size_t mapped = 0;
    std::byte* p = map_huge(size, &mapped);
    data_ = std::unique_ptr<std::byte[], Free>(p, Free{mapped});
    return;
  }
  // aligned_alloc wants the size to be a multiple of the alignment.
  const std::size_t alloc = (size + alignment - 1) / alignment * alignment;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(alignment, alloc));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, alloc);
  data_.reset(p);
}

void AlignedBuffer::zero() {
  if (size_ != 0) std::memset(data_.get(), 0, size_);
}

AlignedBuffer BufferPool::get() {
  if (free_.empty()) return AlignedBuffer(size_, alignment_);
  AlignedBuffer buf = std::move(free_.back());
  free_.pop_back();
  return buf;
}

void BufferPool::put(AlignedBuffer buf) {
  // A buffer of another size came from somewhere else: a caller bug.
  FSIO_ASSERT(buf.size() == size_);
  free_.push_back(std::move(buf));
}

}  // namespace fsio
