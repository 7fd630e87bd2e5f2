// Little-endian integer fields stored as byte arrays (after mold's
// lib/integers.h). On-disk structs are plain lists of these: alignment 1,
// no packing pragmas, no casts, and load<T>/store<T> are plain memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>

namespace fsio {

template <class T, std::size_t N>
class LittleEndian {
 public:
  LittleEndian() = default;
  LittleEndian(T v) { set(v); }         // NOLINT: implicit like a plain integer
  operator T() const { return get(); }  // NOLINT
  LittleEndian& operator=(T v) {
    set(v);
    return *this;
  }
  T get() const {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < N; ++i) v |= std::uint64_t(b_[i]) << (8 * i);
    return T(v);
  }
  void set(T v) {
    for (std::size_t i = 0; i < N; ++i) b_[i] = std::uint8_t(std::uint64_t(v) >> (8 * i));
  }

 private:
  std::uint8_t b_[N] = {};
};

using le16 = LittleEndian<std::uint16_t, 2>;
using le32 = LittleEndian<std::uint32_t, 4>;
using le64 = LittleEndian<std::uint64_t, 8>;
static_assert(sizeof(le16) == 2 && alignof(le16) == 1);
static_assert(sizeof(le32) == 4 && alignof(le32) == 1);
static_assert(sizeof(le64) == 8 && alignof(le64) == 1);

// Decode a T from the front of bytes; the caller has checked the size
// (FSIO_ASSERT'd here: a short span is a bug, not bad input).
template <class T>
T load(std::span<const std::byte> bytes, std::size_t offset = 0) {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) == 1);
  T out;
  if (offset + sizeof(T) > bytes.size()) std::abort();
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return out;
}

template <class T>
void store(std::span<std::byte> bytes, const T& value, std::size_t offset = 0) {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) == 1);
  if (offset + sizeof(T) > bytes.size()) std::abort();
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

}  // namespace fsio
