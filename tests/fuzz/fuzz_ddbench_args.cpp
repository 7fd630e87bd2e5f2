// ddbench's command line (bench::parse_ddbench_command): the input is the
// argument list, one argument per line or NUL-separated: fio's --name jobs
// and --key=value options, ddbench's terse form, tool options. A positional
// argument names a file as it would on a real command line (the parser
// reads the head of a regular file to tell a job file from a target).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "cmd/bench/command_line.hpp"
#include "tests/fuzz/mem_image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto args = fsio::fuzz::split_words({data, size});
  if (args.size() > 256) return 0;
  const bench::FioEnv env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  (void)bench::parse_ddbench_command(args, env);
  return 0;
}
