// Owner maps for a tree copy: --uid-map and --gid-map FROM:TO:COUNT, a
// user namespace's uid_map seen from the source's side (the source's ids
// FROM .. FROM+COUNT-1 become the image's TO .. TO+COUNT-1; newuidmap(1)
// writes the inside id first: its "0 100000 65536" is 100000:0:65536).
// Ranges may not overlap on either side, so no two owners of the source
// become one. An id
// no range covers has no owner in the image (the kernel shows it as the
// overflow id 65534 in a namespace, and refuses to create a file with it):
// the copy refuses it, naming the file, rather than keep a host's id.
//
//   ext::IdMap m;
//   FSIO_TRY(m.add("1000:0:1", "--uid-map"));
//   m.map(1000) == 0, m.map(1001) == std::nullopt
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libfsio/result.hpp"

namespace ext {

struct IdRange {
  std::uint32_t from = 0, to = 0, count = 0;
};

class IdMap {
 public:
  // One FROM:TO:COUNT, each a decimal number; COUNT at least 1, each range's
  // last id at most 4294967294 (4294967295 is (uid_t)-1, "no owner"), and
  // neither side overlapping a range added before. Errc::invalid_argument
  // naming `option` and the text.
  fsio::Status add(const std::string& spec, const std::string& option);
  std::optional<std::uint32_t> map(std::uint32_t id) const;
  const std::vector<IdRange>& ranges() const { return ranges_; }

 private:
  std::vector<IdRange> ranges_;
};

}  // namespace ext
