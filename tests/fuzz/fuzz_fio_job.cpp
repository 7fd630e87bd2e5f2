// ddbench's fio job files: the input is a job file, given to ddbench's
// command-line parser (bench::parse_ddbench_command) as fio would get it,
// so the ini reader, ${VAR} expansion, includes, [global] inheritance and
// every job option's value parser (sizes, times, percentages, bs splits,
// rw mixes) run on it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "cmd/bench/command_line.hpp"
#include "tests/fuzz/mem_image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto& image = fsio::fuzz::MemImage::load({data, size});
  // ${VAR}: a few names have values, the rest are unset.
  const bench::FioEnv env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "SIZE") return "64k";
    if (name == "BS") return "4k";
    if (name == "EMPTY") return "";
    return std::nullopt;
  };
  (void)bench::parse_ddbench_command({"--parse-only", image.path()}, env);
  (void)bench::parse_ddbench_command({"--readonly", "--rw=randrw", "--section=job1", image.path()}, env);
  return 0;
}
