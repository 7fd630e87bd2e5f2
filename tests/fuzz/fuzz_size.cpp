// The shared parsers of numbers and names users type: sizes (fsio::
// parse_size: --offset, --dirty-limit, mkfat's sizes), fio's sizes, times,
// percentages, booleans and bounded integers, engine and rw names, FAT
// labels and volume ids. Each gets the whole input as its text.
//
// Besides not crashing, one property is checked: a size parse_size accepts
// is what format_size's inverse means, so parse_size(N) for a plain decimal
// N is N (below 2^64) and parse_size of "NK" is N * 1024 when that fits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cmd/bench/fio_units.hpp"
#include "cmd/bench/run.hpp"
#include "fat/label.hpp"
#include "libfsio/engine.hpp"
#include "libfsio/size.hpp"

namespace {

void check_plain_decimal(std::string_view text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string_view::npos) return;
  const std::uint64_t want = std::strtoull(std::string(text).c_str(), nullptr, 10);  // < 10^19: fits
  auto got = fsio::parse_size(text);
  if (!got || *got != want) {
    std::fprintf(stderr, "fuzz_size: parse_size('%.*s') is not %llu\n", int(text.size()), text.data(),
                 (unsigned long long)want);
    std::abort();
  }
  auto k = fsio::parse_size(std::string(text) + "K");
  if (want <= UINT64_MAX / 1024 && (!k || *k != want * 1024)) {
    std::fprintf(stderr, "fuzz_size: parse_size('%.*sK') is not %llu * 1024\n", int(text.size()), text.data(),
                 (unsigned long long)want);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)fsio::parse_size(text);
  check_plain_decimal(text);
  (void)bench::parse_fio_size(text);
  (void)bench::parse_fio_size(text, 1000);
  (void)bench::parse_fio_size_or_percent(text);
  (void)bench::parse_fio_time(text);
  (void)bench::parse_fio_time(text, 1e-6);
  (void)bench::parse_fio_bool(text);
  (void)bench::parse_fio_uint(text, 1, 65536);
  (void)fsio::parse_engine_kind(std::string(text));
  (void)bench::parse_bench_rw(text);
  (void)fat::parse_label(text);
  (void)fat::parse_label(text, true, true);
  (void)fat::parse_volume_id(text);
  return 0;
}
