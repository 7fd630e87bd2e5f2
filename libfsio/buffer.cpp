#include "libfsio/buffer.hpp"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

#include "libfsio/result.hpp"

namespace fsio {

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(std::size_t size, std::size_t alignment) : size_(size) {
  // 4096 covers every logical sector size and DIO alignment we meet (4Kn
  // disks, loop devices with --sector-size 4096); larger powers of two are
  // honoured for callers that want page-multiple or huge alignment.
  if (alignment < 4096) alignment = 4096;
  FSIO_ASSERT(std::has_single_bit(alignment));
  if (size == 0) return;
  // A buffer of a huge page or more is placed and advised for transparent
  // huge pages (Debian's default is THP on madvise only): direct I/O pins
  // the pages of every request, and one 2 MiB folio pins and maps into a bio
  // as one segment where 4 KiB pages take 512.
  constexpr std::size_t kHugePage = std::size_t(2) << 20;
  const bool huge = size >= kHugePage;
  if (huge && alignment < kHugePage) alignment = kHugePage;
  // aligned_alloc wants the size to be a multiple of the alignment.
  std::size_t alloc = (size + alignment - 1) / alignment * alignment;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(alignment, alloc));
  if (p == nullptr) throw std::bad_alloc();          // out of memory is not an expected failure
  if (huge) (void)madvise(p, alloc, MADV_HUGEPAGE);  // advisory: 4 KiB pages still work
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
