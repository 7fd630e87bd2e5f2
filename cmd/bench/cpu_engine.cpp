// fio's cpuio engine (engines/cpu.c in fio 3.33): a request keeps one CPU
// busy, then the job sleeps so that the busy share is cpuload percent.
// noop spins for cpuchunks us; qsort sorts 256 Ki 32-bit numbers up, down,
// byte by byte and down again, and the next sleep follows from how long
// that took (fio measures each sort and sets its thinktime from it).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "cmd/bench/runner.hpp"
#include "cmd/bench/task_engines.hpp"

namespace bench {
namespace {

constexpr std::size_t sort_count = 256 * 1024;  // fio's qsort_size: 1 MiB of int32

void spin_us(std::uint64_t us) {
  const std::uint64_t end = detail::now_ns() + us * 1000;
  while (detail::now_ns() < end) {
  }
}

// Marsaglia's multiply-with-carry generator, from the seeds fio starts its
// qsort data at, so the numbers sorted have the same spread as fio's.
std::vector<std::int32_t> sort_data() {
  std::uint32_t z = 362436069u, w = 521288629u;
  std::vector<std::int32_t> v(sort_count);
  for (auto& x : v) {
    z = 36969 * (z & 65535) + (z >> 16);
    w = 18000 * (w & 65535) + (w >> 16);
    x = std::int32_t((z << 16) + w);
  }
  return v;
}

int up(const void* a, const void* b) {
  const auto x = *static_cast<const std::int32_t*>(a), y = *static_cast<const std::int32_t*>(b);
  return x > y ? 1 : x < y ? -1 : 0;
}
int down(const void* a, const void* b) { return up(b, a); }
int byte_up(const void* a, const void* b) {
  return *static_cast<const std::int8_t*>(a) - *static_cast<const std::int8_t*>(b);
}

// The four sorts of one qsort request, in fio's order. Through the C
// library's qsort and a comparison call per step, as fio sorts: the point is
// the CPU it takes (std::sort, inlined, does the same in a twentieth).
void sort_four_ways(std::vector<std::int32_t>& v) {
  std::qsort(v.data(), v.size(), sizeof(std::int32_t), up);
  std::qsort(v.data(), v.size(), sizeof(std::int32_t), down);
  std::qsort(v.data(), v.size() * sizeof(std::int32_t), 1, byte_up);
  std::qsort(v.data(), v.size(), sizeof(std::int32_t), down);
}

}  // namespace

std::uint64_t cpu_think_us(std::uint64_t busy_us, unsigned load) {
  load = std::clamp(load, 1u, 100u);
  return busy_us * (100 - load) / load;
}

fsio::Result<BenchResult> run_cpuio(const CpuOptions& cpu, const TaskRun& run) {
  if (cpu.mode == CpuMode::noop)
    return run_task_loop(run, "cpuio", false, [&](std::uint64_t) -> fsio::Result<std::optional<TaskStep>> {
      spin_us(cpu.chunk_us);
      return std::optional{TaskStep{.think_us = cpu_think_us(cpu.chunk_us, cpu.load)}};
    });
  std::vector<std::int32_t> data = sort_data();  // sorted on from where the last request left it, as in fio
  return run_task_loop(run, "cpuio", false, [&](std::uint64_t) -> fsio::Result<std::optional<TaskStep>> {
    const std::uint64_t t = detail::now_ns();
    sort_four_ways(data);
    return std::optional{TaskStep{.think_us = cpu_think_us((detail::now_ns() - t) / 1000, cpu.load)}};
  });
}

}  // namespace bench
