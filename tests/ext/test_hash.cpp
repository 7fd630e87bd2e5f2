// The htree hash against debugfs's dx_hash for every version, signed and
// unsigned chars (a name with bytes >= 0x80 tells them apart), names shorter
// and longer than one 32-byte (half-MD4) or 16-byte (TEA) block, zero and
// non-zero seeds.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "ext/hash.hpp"
#include "tests/support/support.hpp"

namespace ext {
namespace {

namespace test = fsio::test;

struct Peer {
  std::uint32_t major = 0, minor = 0;
};

Peer debugfs_hash(const std::string& img, int version, const std::string& seed, const std::string& name) {
  const auto r = test::run("debugfs -R \"dx_hash -h " + std::to_string(version) + (seed.empty() ? "" : " -s " + seed) +
                           " " + name + "\" " + img);
  Peer p;
  const auto at = r.output.find(" is 0x");
  if (at == std::string::npos) throw std::runtime_error("debugfs dx_hash: " + r.output);
  std::sscanf(r.output.c_str() + at, " is 0x%x (minor 0x%x)", &p.major, &p.minor);
  return p;
}

TEST(DxHash, MatchesDebugfsForEveryVersion) {
  if (!test::have_tool("debugfs") || !test::have_tool("mke2fs")) GTEST_SKIP() << "debugfs/mke2fs not installed";
  test::TempDir dir;
  const std::string img = dir / "h.img";
  ASSERT_EQ(test::run("mke2fs -q -F -t ext4 " + img + " 8M").exit_code, 0);
  const std::string seed_text = "44521542-87e2-4a39-8c26-edc72732503f";
  // The UUID's bytes read as four little-endian words, as s_hash_seed is stored.
  const std::uint32_t seed[4] = {0x42155244, 0x394ae287, 0xc7ed268c, 0x3f503227};
  const std::uint32_t zero[4] = {};
  const std::string names[] = {"a",
                               "hello",
                               "h\xc3\xa9llo",
                               "file-with-a-longer-name-4242",
                               "exactly-sixteen!",
                               "a-name-of-forty-bytes-for-two-md4-blocks",
                               std::string(100, 'x') + "\xff\x80"};
  for (int v = DX_HASH_LEGACY; v <= DX_HASH_TEA_UNSIGNED; ++v) {
    for (const auto& name : names) {
      for (bool seeded : {true, false}) {
        const Peer want = debugfs_hash(img, v, seeded ? seed_text : "", name);
        auto got = dx_hash(name, std::uint8_t(v), seeded ? seed : zero);
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(got->major, want.major) << "version " << v << " name '" << name << "' seeded " << seeded;
        if (v != DX_HASH_LEGACY && v != DX_HASH_LEGACY_UNSIGNED) {
          EXPECT_EQ(got->minor, want.minor) << "version " << v << " name '" << name << "' seeded " << seeded;
        }
      }
    }
  }
}

TEST(DxHash, SiphashIsRefused) {
  const std::uint32_t seed[4] = {};
  EXPECT_EQ(dx_hash("x", DX_HASH_SIPHASH, seed).error().code, fsio::Errc::unsupported);
}

}  // namespace
}  // namespace ext
