// The pieces of a restore to several targets: bmaptool's maps (one made by
// bmaptool create 3.6, one by hand whose checksums Python's hashlib gave),
// the checksums (FIPS 180 and RFC 3720 vectors), telling an input's kind,
// cutting all-zero blocks out, the held-back head, the written map, and a
// lane's bound and failure.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "cmd/img/bmap.hpp"
#include "cmd/img/feed.hpp"
#include "cmd/img/input.hpp"
#include "cmd/img/written.hpp"

namespace {

using img::Piece;

// What `bmaptool create` (bmap-tools 3.6) wrote for an 8 MiB FAT image
// holding one file: its comments, its own checksum and one range.
const char* kToolBmap = R"(<?xml version="1.0" ?>
<!-- This file contains the block map for an image file, which is basically
     a list of useful (mapped) block numbers in the image file. In other words,
     it lists only those blocks which contain data (boot sector, partition
     table, file-system metadata, files, directories, extents, etc). These
     blocks have to be copied to the target device. The other blocks do not
     contain any useful data and do not have to be copied to the target
     device.

     The block map an optimization which allows to copy or flash the image to
     the image quicker than copying of flashing the entire image. This is
     because with bmap less data is copied: <MappedBlocksCount> blocks instead
     of <BlocksCount> blocks.

     Besides the machine-readable data, this file contains useful commentaries
     which contain human-readable information like image size, percentage of
     mapped data, etc.

     The 'version' attribute is the block map file format version in the
     'major.minor' format. The version major number is increased whenever an
     incompatible block map format change is made. The minor number changes
     in case of minor backward-compatible changes. -->

<bmap version="2.0">
    <!-- Image size in bytes: 8.0 MiB -->
    <ImageSize> 8388608 </ImageSize>

    <!-- Size of a block in bytes -->
    <BlockSize> 4096 </BlockSize>

    <!-- Count of blocks in the image file -->
    <BlocksCount> 2048 </BlocksCount>

    <!-- Count of mapped blocks: 324.0 KiB or 4.0%   -->
    <MappedBlocksCount> 81   </MappedBlocksCount>

    <!-- Type of checksum used in this file -->
    <ChecksumType> sha256 </ChecksumType>

    <!-- The checksum of this bmap file. When it is calculated, the value of
         the checksum has be zero (all ASCII "0" symbols).  -->
    <BmapFileChecksum> 53b96b00230894fcc5b2918d7e0af1eb27ee408e522d137e91a3fa319e0d2e01 </BmapFileChecksum>

    <!-- The block map which consists of elements which may either be a
         range of blocks or a single block. The 'chksum' attribute
         (if present) is the checksum of this blocks range. -->
    <BlockMap>
        <Range chksum="9b35d1d714480f545960f2a8e900b4969f52c7c4c6d6405c42a0b378b7e6a88f"> 0-80 </Range>
    </BlockMap>
</bmap>
)";

// By hand: a 10000-byte image, block 0 all 'a', block 2 (1808 bytes) all
// 'b'. The checksums are hashlib.sha256 of those bytes and of this text
// with the file checksum as 64 '0's, as bmaptool computes it.
std::string hand_bmap(const std::string& file_sum = "df243bbf780d1078ebb580cb80f5480923322b84fd9e30cbd2b0a8cba26e8129",
                      const std::string& second = "2-2") {
  return std::string(R"(<?xml version="1.0" ?>
<bmap version="2.0">
  <ImageSize> 10000 </ImageSize>
  <BlockSize> 4096 </BlockSize>
  <BlocksCount> 3 </BlocksCount>
  <MappedBlocksCount> 2 </MappedBlocksCount>
  <ChecksumType> sha256 </ChecksumType>
  <BmapFileChecksum> )") +
         file_sum + R"( </BmapFileChecksum>
  <BlockMap>
    <Range chksum="c93eee2d0db02f10acc7460d9576e122dcf8cd53c4bf8dfcae1b3e74ebcfff5a"> 0 </Range>
    <Range chksum="d27d18c3f7e58fb5b92aa3cf23d816ecbcaf97aecb34dd68ddd04facab6e6a30"> )" +
         second + R"( </Range>
  </BlockMap>
</bmap>
)";
}

TEST(Bmap, HandMadeMapParsesWithItsRangesAndChecksums) {
  const std::string text = hand_bmap();
  auto m = img::parse_bmap(text, "hand.bmap");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->image_size, 10000u);
  EXPECT_EQ(m->block_size, 4096u);
  EXPECT_EQ(m->checksum_type, "sha256");
  ASSERT_EQ(m->ranges.size(), 2u);
  EXPECT_EQ(m->ranges[0].first, 0u);
  EXPECT_EQ(m->ranges[0].last, 0u);
  EXPECT_EQ(m->ranges[1].first, 2u);
  EXPECT_EQ(m->ranges[1].last, 2u);
  // The ranges' checksums are of the bytes the image holds there.
  auto d = img::Digest::make("sha256");
  ASSERT_TRUE(d);
  const std::string a(4096, 'a'), b(10000 - 8192, 'b');
  d->update(std::as_bytes(std::span(a)));
  EXPECT_EQ(d->finish(), m->ranges[0].checksum);
  d->update(std::as_bytes(std::span(b)));
  EXPECT_EQ(d->finish(), m->ranges[1].checksum);
}

// XML lets a value be spelled with character references; expat hands the
// parser "df24...", but that text is nowhere in the file, so bmaptool's
// check (the file with the value as '0's) cannot be made: an error, not a
// crash (an assertion stopped fsimg here before; found writing the bmap fuzz target).
TEST(Bmap, AFileChecksumSpelledWithCharacterReferencesIsRefused) {
  const std::string text = hand_bmap("&#x64;f243bbf780d1078ebb580cb80f5480923322b84fd9e30cbd2b0a8cba26e8129");
  auto m = img::parse_bmap(text, "refs.bmap");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, fsio::Errc::corrupt);
  EXPECT_NE(m.error().message().find("not written out as plain text"), std::string::npos) << m.error().message();
}

TEST(Bmap, WhatBmaptoolCreateWroteParsesWithItsOwnChecksum) {
  auto m = img::parse_bmap(std::string_view(kToolBmap), "tool.bmap");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->version, "2.0");
  EXPECT_EQ(m->image_size, 8388608u);
  EXPECT_EQ(m->blocks_count, 2048u);
  EXPECT_EQ(m->mapped_blocks, 81u);
  ASSERT_EQ(m->ranges.size(), 1u);
  EXPECT_EQ(m->ranges[0].last, 80u);
  EXPECT_EQ(m->ranges[0].checksum, "9b35d1d714480f545960f2a8e900b4969f52c7c4c6d6405c42a0b378b7e6a88f");
}

TEST(Bmap, AnyChangeAfterTheFileChecksumIsRefused) {
  // A range changed, the file checksum left: bmaptool's own check fails.
  std::string text = hand_bmap();
  text.replace(text.find("> 2-2 <"), 7, "> 1-2 <");
  auto m = img::parse_bmap(text, "x.bmap");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("MappedBlocksCount"), std::string::npos) << m.error().message();
  auto c = img::parse_bmap(hand_bmap(std::string(64, 'e')), "x.bmap");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("the bmap was changed after bmaptool made it"), std::string::npos)
      << c.error().message();
}

TEST(Bmap, RangesOutOfOrderOrPastTheImageAreRefusedByName) {
  auto past = img::parse_bmap(hand_bmap(std::string(64, '0'), "3-3"), "x.bmap");
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message().find("range 1 (blocks 3-3): past BlocksCount 3"), std::string::npos)
      << past.error().message();
  auto back = img::parse_bmap(hand_bmap(std::string(64, '0'), "0-0"), "x.bmap");
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message().find("overlaps or precedes"), std::string::npos) << back.error().message();
  auto junk = img::parse_bmap(std::string("<bmap version=\"2.0\"><ImageSize>1"), "x.bmap");
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message().find("x.bmap: line 1"), std::string::npos) << junk.error().message();
  auto v3 = img::parse_bmap(std::string("<bmap version=\"3.0\"><ImageSize>1</ImageSize><BlockSize>4096</BlockSize>"
                                        "<BlocksCount>1</BlocksCount><MappedBlocksCount>0</MappedBlocksCount>"
                                        "<BlockMap/></bmap>"),
                            "x.bmap");
  ASSERT_FALSE(v3);
  EXPECT_EQ(v3.error().code, fsio::Errc::unsupported);
}

TEST(Digest, Fips180VectorsForAbc) {
  const std::string abc = "abc";
  auto s256 = img::Digest::make("sha256");
  auto s1 = img::Digest::make("sha1");
  ASSERT_TRUE(s256 && s1);
  s256->update(std::as_bytes(std::span(abc)));
  s1->update(std::as_bytes(std::span(abc)));
  EXPECT_EQ(s256->finish(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(s1->finish(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_FALSE(img::Digest::make("md5"));
}

// A StreamReader over a memfd holding `bytes`.
struct Memfd {
  explicit Memfd(const std::string& bytes) : fd(::memfd_create("input", 0)) {
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    ::lseek(fd, 0, SEEK_SET);
  }
  ~Memfd() { ::close(fd); }
  int fd;
};

img::InputKind kind_of(const std::string& bytes) {
  Memfd m(bytes);
  img::StreamReader in(m.fd, "input");
  auto k = img::detect_input(in);
  EXPECT_TRUE(k) << (k ? "" : k.error().message());
  EXPECT_EQ(in.offset(), 0u);  // nothing read away
  return k ? *k : img::InputKind::raw;
}

TEST(DetectInput, MagicsOfEachKind) {
  using K = img::InputKind;
  EXPECT_EQ(kind_of(std::string("\x28\xB5\x2F\xFD", 4) + "rest"), K::zstd);          // RFC 8878 3.1.1
  EXPECT_EQ(kind_of(std::string("\x50\x2A\x4D\x18\0\0\0\0", 8) + "data"), K::zstd);  // another skippable frame
  EXPECT_EQ(kind_of(std::string("\xFD"
                                "7zXZ\0",
                                6) +
                    "rest"),
            K::xz);  // .xz 2.1.1.1
  EXPECT_EQ(kind_of(std::string("\x5F\x2A\x4D\x18\x80\0\0\0", 8) + "FSIH"), K::fsimg);
  EXPECT_EQ(kind_of(std::string("\x5F\x2A", 2)), K::fsimg);                             // a cut fsimg header
  EXPECT_EQ(kind_of(std::string("\x00\x2A\x4D\x18\x80\0\0\0", 8) + "FSIH"), K::fsimg);  // a damaged one
  EXPECT_EQ(kind_of(std::string(512, '\0')), K::raw);
  EXPECT_EQ(kind_of("\xEB\x3C\x90mkfs.fat"), K::raw);
  Memfd empty("");
  img::StreamReader in(empty.fd, "empty");
  EXPECT_FALSE(img::detect_input(in));
}

TEST(SplitZeros, WholeBlocksOfZerosBecomeZeroPiecesAndTheShortTailStaysData) {
  std::vector<std::byte> d(4 * 512 + 100);
  d[512 * 1 + 7] = std::byte{1};   // block 1 holds data
  d[4 * 512 + 99] = std::byte{2};  // the 100-byte tail too
  auto p = img::split_zeros(d.data(), d.size(), 1 << 20, 512);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].offset, 1u << 20);
  EXPECT_EQ(p[0].length, 512u);
  EXPECT_EQ(p[0].data, nullptr);
  EXPECT_EQ(p[1].offset, (1u << 20) + 512);
  EXPECT_EQ(p[1].data, d.data() + 512);
  EXPECT_EQ(p[2].offset, (1u << 20) + 1024);
  EXPECT_EQ(p[2].length, 1024u);  // blocks 2 and 3, joined
  EXPECT_EQ(p[2].data, nullptr);
  EXPECT_EQ(p[3].length, 100u);
  EXPECT_FALSE(p[0].unused || p[2].unused);  // zeros of the image, never unused
}

TEST(HeadHold, TakesTheHeadAsideAndWritesItByKind) {
  img::HeadHold head(8192);
  std::vector<std::byte> data(4096, std::byte{0xAB});
  // data [0, 4096), unused [4096, 6144), image zeros [6144, 8192), and past the head
  EXPECT_EQ(head.take({0, 4096, data.data(), false}).length, 0u);
  EXPECT_EQ(head.take({4096, 2048, nullptr, true}).length, 0u);
  Piece rest = head.take({6144, 4096, nullptr, false});
  EXPECT_EQ(rest.offset, 8192u);
  EXPECT_EQ(rest.length, 2048u);
  auto all = head.runs(false, false);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].offset, 0u);
  EXPECT_EQ(all[0].bytes.size(), 8192u);
  EXPECT_EQ(all[0].bytes[100], std::byte{0xAB});
  EXPECT_EQ(all[0].bytes[5000], std::byte{0});
  auto keep = head.runs(true, false);  // the unused part left alone
  ASSERT_EQ(keep.size(), 2u);
  EXPECT_EQ(keep[0].bytes.size(), 4096u);
  EXPECT_EQ(keep[1].offset, 6144u);
  auto fresh = head.runs(false, true);  // a new file: only the data
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].bytes.size(), 4096u);
}

TEST(WrittenMap, Rfc3720VectorsAndExtentsJoinedOnlyOnWholeChunks) {
  // RFC 3720 B.4: CRC-32C of 32 bytes of zeros is 0x8A9136AA, of 32 of 0xFF 0x62A8AB43.
  std::vector<std::byte> zeros(32), ones(32, std::byte{0xFF});
  EXPECT_EQ(img::WrittenMap::chunk_crc(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(img::WrittenMap::chunk_crc(ones.data(), 32), 0x62A8AB43u);
  std::vector<std::byte> d(3 * 4096, std::byte{7});
  img::WrittenMap m;
  m.add({0, 4096, d.data(), false}, false);
  m.add({4096, 4096 + 100, d.data(), false}, false);  // joins: 4096 is a whole chunk
  m.add({8292, 100, d.data(), false}, false);         // does not: 8292 is not
  m.add({8392, 1000, nullptr, true}, true);           // unused, kept: not written, not checked
  m.add({9392, 1000, nullptr, false}, true);          // image zeros
  ASSERT_EQ(m.extents().size(), 3u);
  EXPECT_EQ(m.extents()[0].length, 8292u);
  EXPECT_EQ(m.crcs().size(), 4u);  // 4096, 4096, 100 | 100
  EXPECT_EQ(m.extents()[1].first_crc, 3u);
  EXPECT_TRUE(m.extents()[2].zero);
  EXPECT_EQ(m.bytes(), 8292u + 100 + 1000);
}

TEST(Lane, HoldsAtMostItsDepthAndAFailedLaneTakesNothingMore) {
  img::Lane lane;
  for (std::size_t i = 0; i < img::kLaneDepth; ++i) ASSERT_TRUE(lane.push(std::make_shared<img::Batch>()));
  std::atomic<bool> pushed{false};
  std::thread input([&] { pushed = lane.push(std::make_shared<img::Batch>()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(pushed);  // waiting for the target
  ASSERT_NE(lane.pop(), nullptr);
  input.join();
  EXPECT_TRUE(pushed);
  lane.fail();
  EXPECT_FALSE(lane.push(std::make_shared<img::Batch>()));
  EXPECT_EQ(lane.pop(), nullptr);
  EXPECT_TRUE(lane.failed());
}

}  // namespace
