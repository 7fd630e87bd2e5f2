// Reading bmaptool's block map with expat, and the checksums it names
// (bmap.hpp).
#include "cmd/img/bmap.hpp"

#include <expat.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

constexpr std::uint64_t kMaxBmapBytes = 256u << 20;  // a bmap lists ranges: ~100 bytes each

// What the parser collects: the text of the element being read, and the
// fields once their elements close.
struct Collect {
  Bmap bmap;
  std::string text;
  std::string range_checksum;
  std::string file_checksum;
  std::string error;
  bool have[4] = {};  // ImageSize, BlockSize, BlocksCount, MappedBlocksCount
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool parse_u64(const std::string& text, std::uint64_t* out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && end == t.data() + t.size();
}

void on_start(void* data, const XML_Char* name, const XML_Char** attrs) {
  auto& c = *static_cast<Collect*>(data);
  c.text.clear();
  if (std::strcmp(name, "bmap") == 0) {
    for (int i = 0; attrs[i]; i += 2)
      if (std::strcmp(attrs[i], "version") == 0) c.bmap.version = attrs[i + 1];
  } else if (std::strcmp(name, "Range") == 0) {
    c.range_checksum.clear();
    // Format 1.3 names the attribute sha1; 1.4 and 2.0 chksum.
    for (int i = 0; attrs[i]; i += 2)
      if (std::strcmp(attrs[i], "chksum") == 0 || std::strcmp(attrs[i], "sha1") == 0) c.range_checksum = attrs[i + 1];
  }
}

void on_text(void* data, const XML_Char* s, int len) {
  auto& c = *static_cast<Collect*>(data);
  if (c.text.size() < 4096) c.text.append(s, std::size_t(len));  // no field of a bmap is longer
}

// "0-80" or "12": the blocks of one range.
void add_range(Collect& c) {
  const std::string t = trim(c.text);
  const auto dash = t.find('-');
  BmapRange r;
  if (!parse_u64(t.substr(0, dash), &r.first) ||
      !parse_u64(dash == std::string::npos ? t.substr(0, dash) : t.substr(dash + 1), &r.last) || r.first > r.last) {
    if (c.error.empty()) c.error = "range " + std::to_string(c.bmap.ranges.size()) + ": '" + t + "' is not FIRST-LAST";
    return;
  }
  r.checksum = trim(c.range_checksum);
  for (auto& ch : r.checksum) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  c.bmap.ranges.push_back(std::move(r));
}

void on_end(void* data, const XML_Char* name) {
  auto& c = *static_cast<Collect*>(data);
  static const char* kNumbers[] = {"ImageSize", "BlockSize", "BlocksCount", "MappedBlocksCount"};
  std::uint64_t* fields[] = {&c.bmap.image_size, &c.bmap.block_size, &c.bmap.blocks_count, &c.bmap.mapped_blocks};
  for (int i = 0; i < 4; ++i) {
    if (std::strcmp(name, kNumbers[i]) != 0) continue;
    if (!parse_u64(c.text, fields[i]) && c.error.empty())
      c.error = std::string(kNumbers[i]) + ": '" + trim(c.text) + "' is not a number";
    c.have[i] = true;
  }
  if (std::strcmp(name, "ChecksumType") == 0) c.bmap.checksum_type = trim(c.text);
  if (std::strcmp(name, "BmapFileChecksum") == 0 || std::strcmp(name, "BmapFileSHA1") == 0)
    c.file_checksum = trim(c.text);
  if (std::strcmp(name, "Range") == 0) add_range(c);
  c.text.clear();
}

// The fields against each other, as bmaptool checks them and more.
fsio::Status check_fields(const Collect& c) {
  const Bmap& b = c.bmap;
  static const char* kNumbers[] = {"ImageSize", "BlockSize", "BlocksCount", "MappedBlocksCount"};
  for (int i = 0; i < 4; ++i)
    if (!c.have[i]) return make_error(Errc::corrupt, std::string("no <") + kNumbers[i] + ">");
  if (b.block_size < 512 || b.block_size > (1u << 20) || (b.block_size & (b.block_size - 1)))
    return make_error(Errc::corrupt,
                      "BlockSize " + std::to_string(b.block_size) + ": not a power of two from 512 to 1 MiB");
  if (b.blocks_count != (b.image_size + b.block_size - 1) / b.block_size)
    return make_error(Errc::corrupt, "BlocksCount " + std::to_string(b.blocks_count) + " is not ImageSize " +
                                         std::to_string(b.image_size) + " in blocks of " +
                                         std::to_string(b.block_size));
  std::uint64_t mapped = 0, next = 0;
  for (std::size_t i = 0; i < b.ranges.size(); ++i) {
    const BmapRange& r = b.ranges[i];
    const std::string what =
        "range " + std::to_string(i) + " (blocks " + std::to_string(r.first) + "-" + std::to_string(r.last) + ")";
    if (r.first < next) return make_error(Errc::corrupt, what + ": overlaps or precedes the range before it");
    if (r.last >= b.blocks_count)
      return make_error(Errc::corrupt, what + ": past BlocksCount " + std::to_string(b.blocks_count));
    mapped += r.last - r.first + 1;
    next = r.last + 1;
  }
  if (mapped != b.mapped_blocks)
    return make_error(Errc::corrupt, "the ranges hold " + std::to_string(mapped) + " blocks, MappedBlocksCount says " +
                                         std::to_string(b.mapped_blocks));
  return {};
}

// bmaptool's own check of the file: the checksum of the whole text with
// the stated value replaced by as many '0's.
fsio::Status check_file_checksum(std::span<const char> text, const Collect& c) {
  auto d = FSIO_TRY(Digest::make(c.bmap.checksum_type));
  if (c.file_checksum.size() != d.hex_length())
    return make_error(Errc::corrupt, "BmapFileChecksum '" + c.file_checksum + "' is not a " + c.bmap.checksum_type);
  const std::string_view all(text.data(), text.size());
  const auto at = all.find(c.file_checksum);
  // XML may spell the value with character references (&#x30; for '0'):
  // bmaptool replaces the text as written, so such a file is not its.
  if (at == std::string_view::npos)
    return make_error(Errc::corrupt, "BmapFileChecksum is not written out as plain text (character references?)");
  std::string copy(all);
  std::memset(copy.data() + at, '0', c.file_checksum.size());
  d.update(std::as_bytes(std::span(copy)));
  const std::string got = d.finish();
  if (got != c.file_checksum)
    return make_error(Errc::corrupt, "the file's " + c.bmap.checksum_type + " is " + got + ", BmapFileChecksum says " +
                                         c.file_checksum + ": the bmap was changed after bmaptool made it");
  return {};
}

fsio::Status check_checksums(std::span<const char> text, Collect& c) {
  Bmap& b = c.bmap;
  const auto dot = b.version.find('.');
  std::uint64_t major = 0, minor = 0;
  if (dot == std::string::npos || !parse_u64(b.version.substr(0, dot), &major) ||
      !parse_u64(b.version.substr(dot + 1), &minor))
    return make_error(Errc::corrupt, "version '" + b.version + "' is not MAJOR.MINOR");
  if (major > 2) return make_error(Errc::unsupported, "format version " + b.version + ": only up to 2.x is known");
  if (major == 1 && minor == 3) b.checksum_type = "sha1";  // 1.3: SHA-1, before ChecksumType existed
  if (major == 1 && minor < 3) {
    b.checksum_type.clear();  // no checksums at all before 1.3
    return {};
  }
  if (b.checksum_type.empty()) return make_error(Errc::corrupt, "no <ChecksumType>");
  const std::size_t hex = FSIO_TRY(Digest::make(b.checksum_type)).hex_length();
  for (std::size_t i = 0; i < b.ranges.size(); ++i)
    if (b.ranges[i].checksum.size() != hex ||
        b.ranges[i].checksum.find_first_not_of("0123456789abcdef") != std::string::npos)
      return make_error(Errc::corrupt, "range " + std::to_string(i) + ": checksum '" + b.ranges[i].checksum +
                                           "' is not a " + b.checksum_type);
  return check_file_checksum(text, c);
}

}  // namespace

fsio::Result<Bmap> parse_bmap(std::span<const char> text, const std::string& name) {
  Collect c;
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> p(XML_ParserCreate(nullptr), XML_ParserFree);
  if (!p) return make_error(Errc::io, name + ": cannot create an XML parser");
  XML_SetUserData(p.get(), &c);
  XML_SetElementHandler(p.get(), on_start, on_end);
  XML_SetCharacterDataHandler(p.get(), on_text);
  if (XML_Parse(p.get(), text.data(), int(text.size()), XML_TRUE) != XML_STATUS_OK)
    return make_error(Errc::corrupt, name + ": line " + std::to_string(XML_GetCurrentLineNumber(p.get())) + ": " +
                                         XML_ErrorString(XML_GetErrorCode(p.get())));
  if (!c.error.empty()) return make_error(Errc::corrupt, name + ": " + c.error);
  if (c.bmap.version.empty()) return make_error(Errc::corrupt, name + ": not a bmap (no <bmap version=...>)");
  FSIO_TRY_CTX(check_fields(c), name);
  FSIO_TRY_CTX(check_checksums(text, c), name);
  return std::move(c.bmap);
}

fsio::Result<Bmap> read_bmap(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fsio::errno_error(path + ": open");
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto e = fsio::errno_error(path + ": read");
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    text.append(buf, std::size_t(n));
    if (text.size() > kMaxBmapBytes) {
      ::close(fd);
      return make_error(Errc::corrupt, path + ": larger than 256 MiB: not a bmap");
    }
  }
  ::close(fd);
  return parse_bmap(text, path);
}

struct Digest::Impl {
  const EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Digest::Digest(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;
Digest::~Digest() = default;

fsio::Result<Digest> Digest::make(const std::string& type) {
  auto impl = std::make_unique<Impl>();
  if (type == "sha256") impl->md = EVP_sha256();
  else if (type == "sha1") impl->md = EVP_sha1();
  else return make_error(Errc::unsupported, "checksum type '" + type + "': only sha256 and sha1 are known");
  impl->ctx = EVP_MD_CTX_new();
  if (!impl->ctx || EVP_DigestInit_ex(impl->ctx, impl->md, nullptr) != 1)
    return make_error(Errc::io, "cannot start a " + type + " digest (libcrypto)");
  return Digest(std::move(impl));
}

void Digest::update(std::span<const std::byte> data) {
  FSIO_ASSERT(EVP_DigestUpdate(impl_->ctx, data.data(), data.size()) == 1);
}

std::string Digest::finish() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  FSIO_ASSERT(EVP_DigestFinal_ex(impl_->ctx, md, &n) == 1);
  FSIO_ASSERT(EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr) == 1);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::size_t Digest::hex_length() const { return std::size_t(EVP_MD_get_size(impl_->md)) * 2; }

}  // namespace img
