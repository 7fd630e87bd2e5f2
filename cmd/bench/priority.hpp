// fio's I/O priorities (fio 3.33 HOWTO "prio", "prioclass", and the
// io_uring/libaio engine options "cmdprio_*"): the job's own priority, set
// for its thread with ioprio_set as fio does, and per-request priorities
// that travel in the request itself (fsio::IoRequest::ioprio, io_uring's
// sqe->ioprio). A priority is the kernel's value, class << 13 | level
// (linux/ioprio.h IOPRIO_PRIO_VALUE): class 1 realtime, 2 best effort,
// 3 idle; level 0 (highest) to 7.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace bench {

inline constexpr unsigned ioprio_class_rt = 1;
inline constexpr unsigned ioprio_class_be = 2;

// fio's ioprio_value: a class of 0 (none given) is best effort.
inline std::uint16_t ioprio_value(unsigned cls, unsigned level) {
  return std::uint16_t(((cls == 0 ? ioprio_class_be : cls) << 13) | level);
}
inline unsigned ioprio_class(std::uint16_t v) { return v >> 13; }
inline unsigned ioprio_level(std::uint16_t v) { return v & 7; }

// One entry of cmdprio_bssplit: `percent` of the requests of `bs` bytes use
// `ioprio`, or without one (BS/PERCENT) cmdprio_class and cmdprio.
struct CmdPrioSplit {
  std::uint64_t bs = 0;
  unsigned percent = 0;
  std::optional<std::uint16_t> ioprio;
};

// The options as the job gives them; [0] reads, [1] writes (fio's R,W).
struct PriorityOptions {
  std::optional<unsigned> prioclass, prio;  // the job's own (prioclass=, prio=)
  std::array<unsigned, 2> cmd_percent{};    // cmdprio_percentage
  std::array<unsigned, 2> cmd_class{};      // cmdprio_class (0: fio's default, realtime)
  std::array<unsigned, 2> cmd_level{};      // cmdprio
  // cmdprio_bssplit, zero-percent entries dropped (fio skips them).
  std::array<std::vector<CmdPrioSplit>, 2> bssplit;
  bool bssplit_given = false;

  // The job's priority value, or 0 when neither prioclass nor prio is given
  // (the thread keeps what it has; fio's td->ioprio stays 0).
  std::uint16_t job_ioprio() const {
    return prioclass || prio ? ioprio_value(prioclass.value_or(0), prio.value_or(0)) : 0;
  }
  bool per_request() const { return bssplit_given || cmd_percent[0] || cmd_percent[1]; }
};

// Parses one direction of cmdprio_bssplit: "BS/PERCENT[/CLASS/LEVEL]:...",
// fio's split_parse_prio_ddir (sizes in fio's units; a percent above 100 is
// 100, a class above 3 is 3, a level above 7 is 7, as fio clamps them).
fsio::Result<std::vector<CmdPrioSplit>> parse_cmdprio_split(std::string_view text, unsigned kb_base);

// The priorities a job's requests use, per direction, as fio's cmdprio.c
// lays them out: values(d)[0] is the job's own, then each cmdprio value in
// the order the options name it, once. pick() gives a request its index.
class PriorityPlan {
 public:
  PriorityPlan() = default;
  // `reads`, `writes`: whether the job makes requests in that direction (fio
  // gives a direction it does not use no per-request priorities).
  PriorityPlan(const PriorityOptions& o, bool reads, bool writes);
  bool per_request() const { return per_request_; }
  const std::vector<std::uint16_t>& values(unsigned dir) const { return values_[dir]; }
  // The index into values(dir) for a request of `bs` bytes, given a draw
  // uniform in [0, 100) (fio's fio_cmdprio_set_ioprio). Trims (dir 2) and
  // directions without cmdprio keep the job's own, index 0.
  unsigned pick(unsigned dir, std::uint64_t bs, unsigned draw) const;

 private:
  struct Choice {
    std::uint64_t bs = 0;  // 0: any size (cmdprio_percentage)
    unsigned percent = 0;
    unsigned index = 0;
  };
  unsigned index_of(unsigned dir, std::uint16_t value);
  bool per_request_ = false;
  std::array<std::vector<std::uint16_t>, 3> values_;
  std::array<std::vector<Choice>, 2> choices_;
};

// ioprio_set(IOPRIO_WHO_PROCESS, 0, value) for the calling thread for as
// long as the guard lives, the thread's earlier priority restored after
// (a job may run on the main thread). value 0: nothing is changed.
class ThreadPriority {
 public:
  static fsio::Result<ThreadPriority> set(std::uint16_t value);
  ThreadPriority(ThreadPriority&& o) noexcept : old_(o.old_) { o.old_ = -1; }
  ThreadPriority(const ThreadPriority&) = delete;
  ThreadPriority& operator=(const ThreadPriority&) = delete;
  ThreadPriority& operator=(ThreadPriority&&) = delete;
  ~ThreadPriority();

 private:
  explicit ThreadPriority(int old) : old_(old) {}
  int old_ = -1;  // the priority to restore, -1: none
};

}  // namespace bench
