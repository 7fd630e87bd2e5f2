// fio's log files (fio HOWTO, "Log File Formats"): one line per entry,
// "time, value, data direction, block size, priority", or with log_offset
// "time, value, data direction, block size, offset, priority". Time is in
// ms from the job's (measured) start; bandwidth in KiB/s, IOPS in I/Os per
// second, latencies in ns. With log_avg_msec, one line per window and
// direction holding the window's average (block size 0); without it, one
// line per request.
#pragma once

#include <string>

#include "cmd/bench/run.hpp"

namespace bench {

enum class BenchLogKind { bw, iops, lat, clat, slat };

// "bw", "iops", "lat", "clat", "slat": the middle of fio's file name
// (PREFIX_bw.N.log).
const char* bench_log_suffix(BenchLogKind kind);

// The log's text. `windowed`: from result.log_samples (log_avg_msec =
// result.log_window_ms), else from result.io_events.
// `log_prio`: the last column is the request's priority value as fio's
// log_prio prints it (0x6000; 0x0000 when none is set), not its
// high-priority bit (1 for the realtime class, else 0).
std::string format_bench_log(const BenchResult& result, BenchLogKind kind, bool windowed, bool log_offset,
                             bool log_prio = false);

// fio's write_iolog (iolog.c in fio 3.33, "fio version 3 iolog"): the
// version line, "TIME FILE add" and "TIME FILE open", one "TIME FILE DIR
// OFFSET LENGTH" per request in the order they were queued (fio logs in
// td_io_queue), then "TIME FILE close"; TIME in microseconds from the job's
// start. From result.io_events, so the run must keep every request.
std::string format_fio_iolog(const BenchResult& result, const std::string& file);

}  // namespace bench
