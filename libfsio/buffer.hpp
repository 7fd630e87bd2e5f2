// Aligned buffers for direct I/O, and a pool that recycles them.
//
// O_DIRECT needs the buffer address, the file offset and the length aligned
// to the device's direct-I/O alignment (statx STATX_DIOALIGN, usually the
// logical sector size). AlignedBuffer aligns to at least 4096 so it suits any
// device we meet. Not thread-safe; a buffer is owned by one request at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace fsio {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Zero-filled, address aligned to `alignment` (a power of two >= 4096 is used).
  explicit AlignedBuffer(std::size_t size, std::size_t alignment = 4096);
  AlignedBuffer(AlignedBuffer&&) noexcept = default;
  AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_.get(), size_}; }
  std::span<const std::byte> span() const { return {data_.get(), size_}; }
  void zero();

 private:
  struct Free {
    std::size_t mapped;  // (value-initialised: 0) bytes mapped with mmap (a huge buffer); 0: from aligned_alloc
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t size_ = 0;
};

// Hands out buffers of one size; returned buffers are reused rather than freed.
// A reused buffer holds whatever its last user left in it (zero() if needed);
// put() of a buffer of another size is a bug (asserted).
class BufferPool {
 public:
  BufferPool(std::size_t buffer_size, std::size_t alignment = 4096) : size_(buffer_size), alignment_(alignment) {}
  AlignedBuffer get();
  void put(AlignedBuffer buf);
  std::size_t buffer_size() const { return size_; }

 private:
  std::size_t size_;
  std::size_t alignment_;
  std::vector<AlignedBuffer> free_;
};

}  // namespace fsio
