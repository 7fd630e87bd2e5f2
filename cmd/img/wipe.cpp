// wipe_signatures() (wipe.hpp), moved here from restore.cpp so that the
// restore to several targets wipes each target the same way.
#include "cmd/img/wipe.hpp"

#include <algorithm>
#include <cstring>

namespace img {
namespace {

using fsio::Errc;
using fsio::make_error;

// Zeroes the magic bytes of the signatures given (window offsets; each has
// a magic, which wipe_signatures() checks), by reading the sectors that hold them and
// writing them back.
fsio::Status zero_magics(fsio::IoQueue& q, const std::vector<fsio::Signature>& sigs) {
  const std::uint64_t unit = std::max<std::uint64_t>(4096, q.device().topology().dio_offset_align);
  for (const auto& s : sigs) {
    const std::uint64_t begin = s.offset / unit * unit;
    const std::uint64_t end = std::min((s.offset + s.length + unit - 1) / unit * unit, q.device().size());
    fsio::AlignedBuffer buf(end - begin);
    FSIO_TRY(q.read(begin, buf.span()));
    std::memset(buf.data() + (s.offset - begin), 0, s.length);
    FSIO_TRY(q.write(begin, buf.span()));
  }
  if (!sigs.empty()) FSIO_TRY(q.flush());
  return {};
}

}  // namespace

// Wipes every signature in the filesystem's range, so that a restore
// stopped before its head is written leaves no filesystem: libblkid names
// one magic of a filesystem at a time (FAT has three: the type string at
// 0x36, the jump at 0 and 0x55AA at 510, and is still recognised by the
// last two), so after each wipe the range is probed again, as wipefs -a
// does. A magic that is found again where it was zeroed is an error.
fsio::Status wipe_signatures(fsio::IoQueue& q, std::vector<fsio::Signature> sigs, std::uint64_t length) {
  const fsio::Device& dev = q.device();
  std::vector<std::uint64_t> zeroed;
  while (!sigs.empty()) {
    for (const auto& s : sigs) {
      const std::string what = "the " + fsio::describe(s) + " at byte " + std::to_string(s.offset);
      if (s.length == 0)
        return make_error(Errc::unsupported, what + " has no magic that libblkid names; wipe it first (wipefs -a)")
            .at(dev.path());
      if (std::find(zeroed.begin(), zeroed.end(), s.offset) != zeroed.end())
        return make_error(Errc::io, what + " is still found after its magic was zeroed").at(dev.path());
    }
    FSIO_TRY(zero_magics(q, sigs));
    for (const auto& s : sigs) zeroed.push_back(s.offset);
    sigs = FSIO_TRY(fsio::check_overwrite(dev.path(), dev.offset(), length, true, "restoring"));
  }
  return {};
}

}  // namespace img
