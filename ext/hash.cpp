// htree hashes, written from the published algorithms: the MD4 compression
// function reduced to 3 rounds of 8 steps over 8 input words (half-MD4),
// 16 cycles of TEA over 4 words, and the "dx hack" hash of ext3's first
// htree. Names are packed into words 4 chars at a time, big-endian within
// the word, padded with a pattern of the length.
#include "ext/hash.hpp"

#include <bit>

namespace ext {
namespace {

using u32 = std::uint32_t;

// Packs up to 4*words chars of `name` into `out`. Every word starts from the
// pad (the length in each byte); chars shift in from the right.
void pack(std::string_view name, bool is_unsigned, u32* out, int words) {
  const u32 len = u32(name.size());
  u32 pad = len | len << 8;
  pad |= pad << 16;
  u32 val = pad;
  const std::size_t n = std::min<std::size_t>(name.size(), std::size_t(words) * 4);
  int w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int c = is_unsigned ? int(static_cast<unsigned char>(name[i])) : int(static_cast<signed char>(name[i]));
    val = u32(c) + (val << 8);
    if (i % 4 == 3) {
      out[w++] = val;
      val = pad;
    }
  }
  if (w < words) out[w++] = val;
  while (w < words) out[w++] = pad;
}

u32 f(u32 x, u32 y, u32 z) { return z ^ (x & (y ^ z)); }
u32 g(u32 x, u32 y, u32 z) { return (x & y) + ((x ^ y) & z); }
u32 h(u32 x, u32 y, u32 z) { return x ^ y ^ z; }

void half_md4(u32 (&s)[4], const u32 (&in)[8]) {
  constexpr u32 k2 = 013240474631u, k3 = 015666365641u;
  u32 a = s[0], b = s[1], c = s[2], d = s[3];
  auto step = [](auto fn, u32& w, u32 x, u32 y, u32 z, u32 data, int shift) {
    w = std::rotl(w + fn(x, y, z) + data, shift);
  };
  // Round 1: words in order, shifts 3 7 11 19.
  for (int i = 0; i < 8; i += 4) {
    step(f, a, b, c, d, in[i + 0], 3);
    step(f, d, a, b, c, in[i + 1], 7);
    step(f, c, d, a, b, in[i + 2], 11);
    step(f, b, c, d, a, in[i + 3], 19);
  }
  // Round 2: words 1 3 5 7 0 2 4 6, shifts 3 5 9 13.
  const int r2[8] = {1, 3, 5, 7, 0, 2, 4, 6};
  for (int i = 0; i < 8; i += 4) {
    step(g, a, b, c, d, in[r2[i + 0]] + k2, 3);
    step(g, d, a, b, c, in[r2[i + 1]] + k2, 5);
    step(g, c, d, a, b, in[r2[i + 2]] + k2, 9);
    step(g, b, c, d, a, in[r2[i + 3]] + k2, 13);
  }
  // Round 3: words 3 7 2 6 1 5 0 4, shifts 3 9 11 15.
  const int r3[8] = {3, 7, 2, 6, 1, 5, 0, 4};
  for (int i = 0; i < 8; i += 4) {
    step(h, a, b, c, d, in[r3[i + 0]] + k3, 3);
    step(h, d, a, b, c, in[r3[i + 1]] + k3, 9);
    step(h, c, d, a, b, in[r3[i + 2]] + k3, 11);
    step(h, b, c, d, a, in[r3[i + 3]] + k3, 15);
  }
  s[0] += a;
  s[1] += b;
  s[2] += c;
  s[3] += d;
}

void tea(u32 (&s)[4], const u32 (&in)[4]) {
  constexpr u32 delta = 0x9E3779B9;
  u32 sum = 0, b0 = s[0], b1 = s[1];
  for (int n = 0; n < 16; ++n) {
    sum += delta;
    b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
    b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
  }
  s[0] += b0;
  s[1] += b1;
}

u32 legacy(std::string_view name, bool is_unsigned) {
  u32 h0 = 0x12a3fe2d, h1 = 0x37abe8f9;
  for (char ch : name) {
    const int c = is_unsigned ? int(static_cast<unsigned char>(ch)) : int(static_cast<signed char>(ch));
    u32 x = h1 + (h0 ^ u32(c * 7152373));
    if (x & 0x80000000u) x -= 0x7fffffff;
    h1 = h0;
    h0 = x;
  }
  return h0 << 1;
}

}  // namespace

fsio::Result<DxHash> dx_hash(std::string_view name, std::uint8_t version, const std::uint32_t (&seed)[4]) {
  u32 s[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  if (seed[0] | seed[1] | seed[2] | seed[3])
    for (int i = 0; i < 4; ++i) s[i] = seed[i];
  DxHash out;
  switch (version) {
    case DX_HASH_LEGACY:
    case DX_HASH_LEGACY_UNSIGNED: out.major = legacy(name, version == DX_HASH_LEGACY_UNSIGNED); break;
    case DX_HASH_HALF_MD4:
    case DX_HASH_HALF_MD4_UNSIGNED: {
      for (std::string_view p = name; !p.empty(); p.remove_prefix(std::min<std::size_t>(32, p.size()))) {
        u32 in[8];
        pack(p, version == DX_HASH_HALF_MD4_UNSIGNED, in, 8);
        half_md4(s, in);
      }
      out.major = s[1];
      out.minor = s[2];
      break;
    }
    case DX_HASH_TEA:
    case DX_HASH_TEA_UNSIGNED: {
      for (std::string_view p = name; !p.empty(); p.remove_prefix(std::min<std::size_t>(16, p.size()))) {
        u32 in[4];
        pack(p, version == DX_HASH_TEA_UNSIGNED, in, 4);
        tea(s, in);
      }
      out.major = s[0];
      out.minor = s[1];
      break;
    }
    default:
      return fsio::make_error(fsio::Errc::unsupported,
                              "ext: htree hash version " + std::to_string(version) +
                                  " is not supported (siphash is for casefolded or encrypted directories)");
  }
  out.major &= ~1u;
  if (out.major == (0x7fffffffu << 1)) out.major = (0x7fffffffu - 1) << 1;  // EXT4_HTREE_EOF_32BIT is reserved
  return out;
}

}  // namespace ext
