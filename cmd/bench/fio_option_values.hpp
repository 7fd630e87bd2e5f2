// Internal to the option table: parsers for fio's option values, with
// errors that name the line and the option.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/bench/fio_options.hpp"

namespace bench::detail {

// One entry of an option table: the option and what it does to a job.
using Apply = fsio::Status (*)(FioJob&, const FioLine&);
struct Entry {
  FioOptionInfo info;
  Apply apply;
};

// A setter whose body needs no more than one statement or two.
#define SET(body)                                   \
  [](FioJob& j, const FioLine& l) -> fsio::Status { \
    body;                                           \
    return {};                                      \
  }

// The options of the engines that have no target (cpuio, exec, net), of
// what write buffers hold, and startdelay (fio_engine_options.cpp).
const std::vector<Entry>& engine_option_table();
// The checks of buffer_compress_percentage and the dedupe options, once the job is read.
fsio::Status check_buffer_contents(const FioJob& j);

// "--bs" on the command line, "bs" in a job file.
std::string label(const FioLine& l);
fsio::Error bad(const FioLine& l, const std::string& why);
// The reason part of a units error ("size '4Q': unknown unit 'Q'" -> "unknown unit 'Q'").
std::string why(const fsio::Error& e);

fsio::Result<std::uint64_t> size_of(const FioLine& l, unsigned kb_base);
fsio::Result<FioSize> size_or_percent(const FioLine& l, unsigned kb_base);
fsio::Result<std::uint64_t> uint_of(const FioLine& l, std::uint64_t min, std::uint64_t max);
fsio::Result<double> seconds_of(const FioLine& l, double unit = 1.0);
// A bare flag ("direct", "--time_based") is true, as fio's bool options are.
fsio::Result<bool> bool_of(const FioLine& l);
fsio::Result<std::string> text_of(const FioLine& l);
// A value per direction as bs= and rate= take them: "V" for reads and
// writes, "R,W", ",W" or "R," (an empty part is 0); a third part, for
// trims, is read past.
enum class Unit { bytes, count };
fsio::Result<std::array<std::uint64_t, 2>> per_direction(const FioLine& l, Unit unit, unsigned kb_base);
// A percentage, fio's float from 0 to 100 ("99.9"); nullopt if not one.
std::optional<double> percent_of(std::string_view text);
fsio::Result<std::vector<BsSplit>> split_of(const FioLine& l, std::string_view text, unsigned kb_base);

// Options whose values need more than one parser.
fsio::Status apply_bs(FioJob& j, const FioLine& l);
fsio::Status apply_bssplit(FioJob& j, const FioLine& l);
fsio::Status apply_verify_pattern(FioJob& j, const FioLine& l);
fsio::Status apply_bsrange(FioJob& j, const FioLine& l);
fsio::Status apply_distribution(FioJob& j, const FioLine& l);
fsio::Status apply_rw(FioJob& j, const FioLine& l);
fsio::Status apply_engine(FioJob& j, const FioLine& l);
fsio::Status apply_verify(FioJob& j, const FioLine& l);
fsio::Status apply_sync(FioJob& j, const FioLine& l);
fsio::Status apply_percentiles(FioJob& j, const FioLine& l);
// fio_rate_options.cpp: rate=R[,W], rate_min, rate_iops, rate_iops_min.
fsio::Status apply_rate(FioJob& j, const FioLine& l);
fsio::Status apply_rate_min(FioJob& j, const FioLine& l);
fsio::Status apply_rate_iops(FioJob& j, const FioLine& l);
fsio::Status apply_rate_iops_min(FioJob& j, const FioLine& l);
fsio::Status apply_rate_process(FioJob& j, const FioLine& l);
fsio::Status apply_blockalign(FioJob& j, const FioLine& l);
// fio_prio_options.cpp: prioclass, prio and the cmdprio options.
fsio::Status apply_prioclass(FioJob& j, const FioLine& l);
fsio::Status apply_prio(FioJob& j, const FioLine& l);
fsio::Status apply_cmdprio_percentage(FioJob& j, const FioLine& l);
fsio::Status apply_cmdprio_class(FioJob& j, const FioLine& l);
fsio::Status apply_cmdprio(FioJob& j, const FioLine& l);
fsio::Status apply_cmdprio_bssplit(FioJob& j, const FioLine& l);
// fio_error_options.cpp: continue_on_error, ignore_error, error_dump.
fsio::Status apply_continue_on_error(FioJob& j, const FioLine& l);
fsio::Status apply_ignore_error(FioJob& j, const FioLine& l);
fsio::Status apply_error_dump(FioJob& j, const FioLine& l);
// max_latency=R[,W[,T]]: one time for all, or one per direction.
fsio::Status apply_max_latency(FioJob& j, const FioLine& l);
// steadystate=, ss_dur= (steadystate.hpp).
fsio::Status apply_steadystate(FioJob& j, const FioLine& l);
fsio::Status apply_ss_duration(FioJob& j, const FioLine& l);
// After every line: cmdprio needs an engine that carries a priority per request.
fsio::Status check_priority(const FioJob& j, const std::vector<FioLine>& lines);

}  // namespace bench::detail
