// The option table: each entry parses its value with fio's units and sets
// the job. The meaning of each fio option is fio's HOWTO's; where ddbench
// does it differently the help text says how.
#include "cmd/bench/fio_options.hpp"

#include <algorithm>
#include <ctime>
#include <limits>

#include "cmd/bench/fio_option_values.hpp"

namespace bench {
namespace {

using fsio::Errc;
using fsio::make_error;

using namespace detail;

// One function on purpose, although it runs to 320 lines: it is a table, one
// entry per option in the order --help lists them, each its name, argument,
// help text and setter side by side. Split, it would read worse, and the
// order --help shows would be spread over several places.
const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {{"name", FioArg::required, "the job's name; on the command line, starts a new job"},
       SET(j.name = FSIO_TRY(text_of(l)))},
      {{"description", FioArg::required, "text printed with the job"}, SET(j.description = l.value)},
      {{"filename", FioArg::required, "the target: a block device or a file (one per job)"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         auto v = FSIO_TRY(text_of(l));
         std::string out;
         for (std::size_t i = 0; i < v.size(); ++i) {
           if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == ':') continue;
           if (v[i] == ':' && (i == 0 || v[i - 1] != '\\'))
             return bad(l, "several files per job are not supported (use one job per file)");
           out += v[i];
         }
         j.filename = out;
         return {};
       }},
      {{"directory", FioArg::required, "where a job without filename makes NAME.N.0"},
       SET(j.directory = FSIO_TRY(text_of(l)))},
      {{"rw", FioArg::required, "read, write, randread, randwrite, rw (readwrite), randrw"}, apply_rw},
      {{"readwrite", FioArg::required, "the same as rw"}, apply_rw},
      {{"rwmixread", FioArg::required, "percent of a mixed workload that reads (default 50)"},
       SET(j.bench.rwmixread = unsigned(FSIO_TRY(uint_of(l, 0, 100))))},
      {{"rwmixwrite", FioArg::required, "percent of a mixed workload that writes"},
       SET(j.bench.rwmixread = 100 - unsigned(FSIO_TRY(uint_of(l, 0, 100))))},
      {{"bs", FioArg::required, "bytes per request; bs=R,W for reads and writes apart"}, apply_bs},
      {{"blocksize", FioArg::required, "the same as bs"}, apply_bs},
      {{"bssplit", FioArg::required, "request sizes by percentage: 4k/70:64k/30[,writes]"}, apply_bssplit},
      {{"bsrange", FioArg::required, "request sizes drawn from MIN-MAX as fio draws them [,MIN-MAX for writes]"},
       apply_bsrange},
      {{"blocksize_range", FioArg::required, "the same as bsrange"}, apply_bsrange},
      {{"blockalign", FioArg::required,
        "random offsets are multiples of this (another than bs turns off the random map)"},
       apply_blockalign},
      {{"ba", FioArg::required, "the same as blockalign"}, apply_blockalign},
      {{"size", FioArg::required, "bytes to cover, or a percentage of the target"},
       SET(j.size = FSIO_TRY(size_or_percent(l, j.kb_base)))},
      {{"filesize", FioArg::required, "the size of the job's one file; size= then caps the bytes at it"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (l.value.find_first_of("-:") != std::string::npos)
           return bad(l, "a range of file sizes is not supported (ddbench runs one file per job)");
         j.filesize = FSIO_TRY(size_of(l, j.kb_base));
         if (j.filesize == 0) return bad(l, "must be more than 0");
         return {};
       }},
      {{"io_size", FioArg::required, "bytes to transfer (going over the range again if more)"},
       SET(j.io_size = FSIO_TRY(size_or_percent(l, j.kb_base)))},
      {{"io_limit", FioArg::required, "the same as io_size"}, SET(j.io_size = FSIO_TRY(size_or_percent(l, j.kb_base)))},
      {{"offset", FioArg::required, "where the range starts, bytes or a percentage"},
       SET(j.offset = FSIO_TRY(size_or_percent(l, j.kb_base)))},
      {{"ioengine", FioArg::required,
        "io_uring, psync (pvsync, pvsync2), sync (as psync), libaio (as io_uring), null, ftruncate, cpuio, exec, net"},
       apply_engine},
      {{"engine", FioArg::required, "ddbench's name: uring, psync or auto", false}, apply_engine},
      {{"iodepth", FioArg::required, "requests in flight, 1 to 32768"},
       SET(j.bench.iodepth = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"iodepth_batch_submit", FioArg::required, "requests per submit (ddbench's --batch)"},
       SET(j.bench.batch = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"iodepth_batch", FioArg::required, "the same as iodepth_batch_submit"},
       SET(j.bench.batch = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"batch", FioArg::required, "requests per submit, contiguous ones merged", false},
       SET(j.bench.batch = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"no_merge", FioArg::none, "never merge contiguous requests", false},
       SET(j.bench.merge = !FSIO_TRY(bool_of(l)))},
      {{"direct", FioArg::optional, "O_DIRECT (1) or the page cache (0)"}, SET(j.bench.direct = FSIO_TRY(bool_of(l)))},
      {{"buffered", FioArg::optional, "the page cache (1) or O_DIRECT (0)"},
       SET(j.bench.direct = !FSIO_TRY(bool_of(l)))},
      {{"sync", FioArg::optional, "every write carries RWF_DSYNC (fio: 1, sync, dsync)"}, apply_sync},
      {{"fsync", FioArg::required, "fsync after every N writes"},
       SET(j.bench.fsync_every = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 30))); j.bench.fsync_data_only = false)},
      {{"fdatasync", FioArg::required, "fdatasync after every N writes"},
       SET(j.bench.fsync_every = unsigned(FSIO_TRY(uint_of(l, 0, 1u << 30))); j.bench.fsync_data_only = true)},
      {{"end_fsync", FioArg::optional, "fsync when the writes are done"},
       SET(j.bench.end_fsync = FSIO_TRY(bool_of(l)))},
      {{"runtime", FioArg::required, "stop after this long (default unit s)"},
       SET(j.bench.runtime = FSIO_TRY(seconds_of(l)))},
      {{"timeout", FioArg::required, "the same as runtime"}, SET(j.bench.runtime = FSIO_TRY(seconds_of(l)))},
      {{"time_based", FioArg::optional, "go over the range again until runtime is up"},
       SET(j.bench.time_based = FSIO_TRY(bool_of(l)))},
      {{"ramp_time", FioArg::required, "run this long before measuring (default unit s)"},
       SET(j.bench.ramp_time = FSIO_TRY(seconds_of(l)))},
      {{"loops", FioArg::required, "run the job this many times"},
       SET(j.bench.loops = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"numjobs", FioArg::required, "this many copies of the job, running at once"},
       SET(j.numjobs = unsigned(FSIO_TRY(uint_of(l, 1, 256))))},
      {{"stonewall", FioArg::optional, "wait for every earlier job to finish first"},
       SET(j.stonewall = FSIO_TRY(bool_of(l)))},
      {{"wait_for_previous", FioArg::optional, "the same as stonewall"}, SET(j.stonewall = FSIO_TRY(bool_of(l)))},
      {{"wait_for", FioArg::required, "wait for the job of that name, the one just before (as a stonewall)"},
       SET(j.wait_for = l)},
      {{"new_group", FioArg::optional, "start a new reporting group"}, SET(j.new_group = FSIO_TRY(bool_of(l)))},
      {{"group_reporting", FioArg::optional, "report each group as one job"},
       SET(j.group_reporting = FSIO_TRY(bool_of(l)))},
      {{"exitall", FioArg::optional, "when a job ends, end the jobs exit_what names (fio's exitall)"},
       SET(j.exitall = FSIO_TRY(bool_of(l)))},
      {{"exit_what", FioArg::required, "under exitall: group (its reporting group), stonewall (running jobs), all"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (l.value == "group") j.exit_what = ExitWhat::group;
         else if (l.value == "stonewall") j.exit_what = ExitWhat::stonewall;
         else if (l.value == "all") j.exit_what = ExitWhat::all;
         else return bad(l, "expected group, stonewall or all");
         return {};
       }},
      {{"thinktime", FioArg::required, "after each request, wait for those in flight, then sleep this long (us)"},
       SET(j.bench.thinktime_us = std::uint64_t(FSIO_TRY(seconds_of(l, 1e-6)) * 1e6 + 0.5))},
      {{"number_ios", FioArg::required, "stop after this many requests (times loops), if nothing stops the job first"},
       SET(j.bench.number_ios = FSIO_TRY(uint_of(l, 0, std::numeric_limits<std::uint64_t>::max())))},
      {{"latency_target", FioArg::required, "find the largest depth whose requests take no longer (default unit us)"},
       SET(j.bench.latency.target_ns = std::uint64_t(FSIO_TRY(seconds_of(l, 1e-6)) * 1e9 + 0.5))},
      {{"latency_window", FioArg::required, "latency_target: the window each depth is judged over (default unit us)"},
       SET(j.bench.latency.window_ns = std::uint64_t(FSIO_TRY(seconds_of(l, 1e-6)) * 1e9 + 0.5))},
      {{"latency_percentile", FioArg::required, "latency_target: percent of a window's requests that must meet it"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         const auto p = percent_of(l.value);
         if (!p) return bad(l, "expected a number from 0 to 100");
         j.bench.latency.percentile = *p;
         return {};
       }},
      {{"max_latency", FioArg::required, "end the job when a read or write takes longer (default unit us; R,W,T)"},
       apply_max_latency},
      {{"latency_run", FioArg::optional, "latency_target: keep searching to the end, not stop once settled"},
       SET(j.bench.latency.run = FSIO_TRY(bool_of(l)))},
      {{"steadystate", FioArg::required, "end when iops or bw (iops_slope, bw_slope) holds within a limit: iops:10%"},
       apply_steadystate},
      {{"ss", FioArg::required, "the same as steadystate"}, apply_steadystate},
      {{"steadystate_duration", FioArg::required, "steadystate: the seconds judged together (default unit s; 0: off)"},
       apply_ss_duration},
      {{"ss_dur", FioArg::required, "the same as steadystate_duration"}, apply_ss_duration},
      {{"steadystate_ramp_time", FioArg::required, "steadystate: seconds before the first is recorded"},
       SET(j.bench.steadystate.ramp_s = FSIO_TRY(seconds_of(l)))},
      {{"ss_ramp", FioArg::required, "the same as steadystate_ramp_time"},
       SET(j.bench.steadystate.ramp_s = FSIO_TRY(seconds_of(l)))},
      {{"continue_on_error", FioArg::required,
        "go on after failed requests of a kind: none, read, write, io, verify, all"},
       apply_continue_on_error},
      {{"ignore_error", FioArg::required,
        "the errnos to go on after, per kind: READS,WRITES,VERIFY (ENOSPC:EIO or numbers)"},
       apply_ignore_error},
      {{"error_dump", FioArg::optional, "say each failed request gone on after on stderr (default 1)"},
       apply_error_dump},
      {{"thread", FioArg::optional, "accepted: ddbench always runs jobs as threads"},
       SET((void)j; (void)FSIO_TRY(bool_of(l)))},
      {{"threads", FioArg::required,
        "fio's tiobench profile's thread count: without profile=tiobench it does "
        "nothing, in fio as in ddbench"},
       SET((void)j; (void)FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max())))},
      {{"verify", FioArg::optional, "check the data: write, read back and check; read: check the stamps"},
       apply_verify},
      {{"do_verify", FioArg::optional, "0: a verify write only stamps its data (a later job checks it)"},
       SET(j.bench.do_verify = FSIO_TRY(bool_of(l)))},
      {{"zonemode", FioArg::required, "none, or strided: sequential I/O in zones (zbd is refused)"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (l.value != "none" && l.value != "strided")
           return bad(l, "only none and strided are supported (ddbench does not handle zoned devices)");
         j.strided = l.value == "strided";
         return {};
       }},
      {{"zonesize", FioArg::required, "zonemode=strided: bytes done in a zone before the next"},
       SET(j.bench.zone_size = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"zonerange", FioArg::required, "zonemode=strided: a zone's size (default zonesize)"},
       SET(j.bench.zone_range = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"zoneskip", FioArg::required, "zonemode=strided: bytes skipped after a zone"},
       SET(j.bench.zone_skip = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"verify_pattern", FioArg::required, "fill each sector after its stamp with these bytes, and check them"},
       apply_verify_pattern},
      {{"verify_backlog", FioArg::required, "check the writes every N of them, during the job, not after it"},
       SET(j.bench.verify_backlog = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"verify_fatal", FioArg::optional, "stop the job at the first mismatch (default 0: check it all)"},
       SET(j.bench.verify_fatal = FSIO_TRY(bool_of(l)))},
      {{"verify_dump", FioArg::optional, "write a bad block and what it should hold to FILE.OFFSET.received/expected"},
       SET(j.bench.verify_dump = FSIO_TRY(bool_of(l)))},
      {{"verify_interval", FioArg::required,
        "accepted: ddbench checks every 512-byte sector, so every interval fio would check is checked"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         const std::uint64_t v = FSIO_TRY(size_of(l, j.kb_base));
         if (v % 512 != 0)
           j.notes.push_back("verify_interval=" + l.value +
                             ": ddbench checks whole 512-byte sectors; a mismatch is reported by its sector");
         return {};
       }},
      {{"io_submit_mode", FioArg::required, "inline or offload: ddbench submits from the job's thread either way"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (l.value == "offload")
           j.notes.push_back("io_submit_mode=offload: ddbench submits from the job's own thread; the I/O is the same");
         else if (l.value != "inline") return bad(l, "expected inline or offload");
         return {};
       }},
      {{"serialize_overlap", FioArg::optional, "accepted at iodepth=1, where no two requests are in flight"},
       SET(j.bench.serialize_overlap = FSIO_TRY(bool_of(l)))},
      {{"experimental_verify", FioArg::optional, "accepted: either way every block written is read back and checked"},
       SET((void)j; (void)FSIO_TRY(bool_of(l)))},
      {{"invalidate", FioArg::optional, "drop the range from the page cache first (default 1)"},
       SET(j.bench.invalidate = FSIO_TRY(bool_of(l)))},
      {{"fadvise_hint", FioArg::optional, "advise the access pattern (default 1)"},
       SET(j.bench.fadvise = FSIO_TRY(bool_of(l)))},
      {{"norandommap", FioArg::optional, "random offsets may repeat"}, SET(j.bench.norandommap = FSIO_TRY(bool_of(l)))},
      {{"randrepeat", FioArg::optional, "the same random order every run (default 1)"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (!FSIO_TRY(bool_of(l))) j.bench.seed = std::uint64_t(::time(nullptr)) * 0x9e3779b97f4a7c15ULL;
         return {};
       }},
      {{"randseed", FioArg::required, "the seed of the random order and the verify stamps"},
       SET(j.bench.seed = FSIO_TRY(uint_of(l, 0, std::numeric_limits<std::uint64_t>::max())))},
      {{"seed", FioArg::required, "the same as randseed", false},
       SET(j.bench.seed = FSIO_TRY(uint_of(l, 0, std::numeric_limits<std::uint64_t>::max())))},
      {{"random_distribution", FioArg::required, "random, zipf:THETA, pareto:H or zoned:A/R:A/R... (fio's)"},
       apply_distribution},
      {{"create", FioArg::required, "create or extend the target file to SIZE first", false},
       SET(j.bench.create_size = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"unlink", FioArg::optional, "remove a file this run created when the job is done"},
       SET(j.unlink = FSIO_TRY(bool_of(l)))},
      {{"kb_base", FioArg::required, "1024 (k = 1024, the default) or 1000 (k = 1000, ki = 1024)"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         const auto v = FSIO_TRY(uint_of(l, 1000, 1024));
         if (v != 1000 && v != 1024) return bad(l, "must be 1000 or 1024");
         j.kb_base = unsigned(v);
         return {};
       }},
      {{"unit_base", FioArg::required, "0 or 8 (bytes); 1 (bits) is not supported"},
       [](FioJob&, const FioLine& l) -> fsio::Status {
         if (l.value != "0" && l.value != "8") return bad(l, "only byte units (0 or 8) are supported");
         return {};
       }},
      {{"write_bw_log", FioArg::optional, "log bandwidth to PREFIX_bw.N.log"},
       SET(j.bw_log = l.has_value && !l.value.empty() ? l.value : j.name)},
      {{"write_lat_log", FioArg::optional, "log latencies to PREFIX_lat/clat/slat.N.log"},
       SET(j.lat_log = l.has_value && !l.value.empty() ? l.value : j.name)},
      {{"write_iops_log", FioArg::optional, "log IOPS to PREFIX_iops.N.log"},
       SET(j.iops_log = l.has_value && !l.value.empty() ? l.value : j.name)},
      {{"write_iolog", FioArg::required, "append every request to FILE as fio's iolog (version 3) does"},
       SET(j.write_iolog = l.value)},
      {{"log_avg_msec", FioArg::required, "average the logs over windows of this many ms (0: every I/O)"},
       SET(j.bench.log_window_ms = unsigned(FSIO_TRY(uint_of(l, 0, 3600000))))},
      {{"log_offset", FioArg::optional, "log each I/O's offset"}, SET(j.log_offset = FSIO_TRY(bool_of(l)))},
      {{"log_prio", FioArg::optional, "log each I/O's priority value (0x0000: none set), not its realtime bit"},
       SET(j.log_prio = FSIO_TRY(bool_of(l)))},
      {{"prioclass", FioArg::required, "the job's I/O priority class: 1 realtime, 2 best effort, 3 idle"},
       apply_prioclass},
      {{"prio", FioArg::required, "the job's I/O priority level, 0 (highest) to 7"}, apply_prio},
      {{"cmdprio_percentage", FioArg::required, "io_uring, libaio: percent of requests sent at cmdprio_class/cmdprio"},
       apply_cmdprio_percentage},
      {{"cmdprio_class", FioArg::required, "io_uring, libaio: the class of those requests (default 1, realtime)"},
       apply_cmdprio_class},
      {{"cmdprio", FioArg::required, "io_uring, libaio: the level of those requests (default 0)"}, apply_cmdprio},
      {{"cmdprio_bssplit", FioArg::required,
        "io_uring, libaio: per block size, percent of requests at a priority: 64k/25/1/1:64k/75/3/2[,writes]"},
       apply_cmdprio_bssplit},
      {{"per_job_logs", FioArg::optional, "1: PREFIX_bw.N.log per job; 0: one PREFIX_bw.log shared"},
       SET(j.per_job_logs = FSIO_TRY(bool_of(l)))},
      {{"bw_avg_time", FioArg::required, "window of the bw and iops statistics in ms (default 500)"},
       SET(j.bench.stat_window_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"bwavgtime", FioArg::required, "the same as bw_avg_time"},
       SET(j.bench.stat_window_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"iops_avg_time", FioArg::required, "the same window as bw_avg_time (ddbench has one)"},
       SET(j.bench.stat_window_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"iopsavgtime", FioArg::required, "the same as iops_avg_time"},
       SET(j.bench.stat_window_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"offset_increment", FioArg::required, "clone N of numjobs starts N times this further on"},
       SET(j.offset_increment = FSIO_TRY(size_of(l, j.kb_base)))},
      {{"fsync_on_close", FioArg::optional, "the same as end_fsync"}, SET(j.bench.end_fsync = FSIO_TRY(bool_of(l)))},
      {{"disk_util", FioArg::optional, "report the disk's own statistics (default 1)"},
       SET(j.disk_util = FSIO_TRY(bool_of(l)))},
      {{"nrfiles", FioArg::required, "files per job (JOB.N.0, JOB.N.1, ...): more than 1 with a file engine only"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         j.nrfiles = unsigned(FSIO_TRY(uint_of(l, 1, 1u << 24)));
         if (j.nrfiles > 1 && !j.files_line) j.files_line = l;
         return {};
       }},
      {{"openfiles", FioArg::required, "with a file engine: it closes each file before the next, so any value holds"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         (void)FSIO_TRY(uint_of(l, 1, 1u << 24));
         if (!j.files_line) j.files_line = l;
         return {};
       }},
      {{"create_on_open", FioArg::optional, "with a file engine: lay no file out first (fio's setup skips them)"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         j.create_on_open = FSIO_TRY(bool_of(l));
         if (j.create_on_open && !j.files_line) j.files_line = l;
         return {};
       }},
      {{"fallocate", FioArg::required, "none (or 0) only: a file is made with ftruncate and written, as fio's none"},
       [](FioJob&, const FioLine& l) -> fsio::Status {
         if (l.value != "none" && l.value != "0")
           return bad(l, "only none is supported: ddbench makes a file with ftruncate, then writes it");
         return {};
       }},
      {{"allow_file_create", FioArg::optional, "0: a missing file is an error, not made (default 1)"},
       SET(j.allow_file_create = FSIO_TRY(bool_of(l)))},
      {{"random_generator", FioArg::required, "tausworthe, lfsr or tausworthe64: ddbench draws its own order"},
       [](FioJob& j, const FioLine& l) -> fsio::Status {
         if (l.value != "tausworthe" && l.value != "lfsr" && l.value != "tausworthe64")
           return bad(l, "expected tausworthe, lfsr or tausworthe64");
         j.notes.push_back("random_generator=" + l.value +
                           ": ddbench draws random offsets its own way (a keyed permutation), not "
                           "with fio's generator");
         return {};
       }},
      {{"gtod_reduce", FioArg::optional, "report no latencies and no bw/iops windows (all 0), as fio"},
       SET(j.bench.gtod_reduce = FSIO_TRY(bool_of(l)))},
      {{"rate", FioArg::required, "cap bytes per second: R for both directions, R,W, or ,W / R, for one"}, apply_rate},
      {{"rate_min", FioArg::required, "end the job with an error if a rate_cycle falls below this many bytes/s"},
       apply_rate_min},
      {{"ratemin", FioArg::required, "the same as rate_min"}, apply_rate_min},
      {{"rate_iops", FioArg::required, "cap requests per second (R, R,W, ,W or R,)"}, apply_rate_iops},
      {{"rate_iops_min", FioArg::required, "end the job with an error below this many requests/s"},
       apply_rate_iops_min},
      {{"rate_cycle", FioArg::required, "the window rate_min is checked over, ms (default 1000)"},
       SET(j.bench.rate.cycle_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"ratecycle", FioArg::required, "the same as rate_cycle"},
       SET(j.bench.rate.cycle_ms = unsigned(FSIO_TRY(uint_of(l, 1, 3600000))))},
      {{"rate_process", FioArg::required, "linear (even gaps) or poisson (exponential gaps at the rate)"},
       apply_rate_process},
      {{"flow_id", FioArg::required, "the flow group of this job's flow= (default 0)"},
       SET(j.flow_id = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"flow", FioArg::required, "weight 1-1000: jobs of one flow_id do I/O in the ratio of their weights"},
       SET(j.bench.flow.weight = unsigned(FSIO_TRY(uint_of(l, 0, 1000))))},
      {{"flow_sleep", FioArg::required, "us to wait, once in flight I/O is done, when over the flow share"},
       SET(j.bench.flow.sleep_us = unsigned(FSIO_TRY(uint_of(l, 0, std::numeric_limits<unsigned>::max()))))},
      {{"percentile_list", FioArg::required, "completion-latency percentiles, e.g. 50:99:99.9"}, apply_percentiles},
      {{"clat_percentiles", FioArg::optional, "report completion-latency percentiles (default 1)"},
       SET(j.clat_percentiles = FSIO_TRY(bool_of(l)))},
  };
  return t;
}

// The main table, then the engines' (fio_engine_options.cpp), as --help lists them.
const std::vector<const Entry*>& entries() {
  static const std::vector<const Entry*> all = [] {
    std::vector<const Entry*> v;
    for (const auto* t : {&table(), &engine_option_table()})
      for (const auto& e : *t) v.push_back(&e);
    return v;
  }();
  return all;
}

std::string normal_name(std::string_view name) {
  std::string n(name);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

// "--direct --buffered" asks for two things at once (fio would take the
// last; ddbench's terse form always refused it).
fsio::Status check_direct_buffered(const std::vector<FioLine>& lines) {
  const FioLine* direct = nullptr;
  const FioLine* buffered = nullptr;
  for (const auto& l : lines) {
    const std::string n = normal_name(l.key);
    if (n == "direct") direct = &l;
    if (n == "buffered") buffered = &l;
  }
  if (!direct || !buffered) return {};
  auto d = bool_of(*direct);
  auto b = bool_of(*buffered);
  if (d && b && *d == *b)
    return make_error(Errc::invalid_argument, label(*direct) + " and " + label(*buffered) + " contradict each other");
  return {};
}

}  // namespace

const std::vector<FioOptionInfo>& fio_options() {
  static const std::vector<FioOptionInfo> infos = [] {
    std::vector<FioOptionInfo> v;
    for (const Entry* e : entries()) v.push_back(e->info);
    return v;
  }();
  return infos;
}

const FioOptionInfo* find_fio_option(std::string_view name) {
  const std::string n = normal_name(name);
  for (const auto& o : fio_options())
    if (n == o.name) return &o;
  return nullptr;
}

FioJob fio_defaults() {
  FioJob j;
  j.bench.bs = 4096;
  j.bench.iodepth = 1;
  j.bench.engine = fsio::EngineKind::psync;
  j.bench.direct = false;
  j.bench.batch = 1;  // fio's iodepth_batch_submit: each request submitted as soon as it is ready
  j.bench.merge = false;
  j.extend_short_file = true;
  return j;
}

FioJob terse_defaults() {
  FioJob j;  // BenchOptions' own defaults: 1 MiB, iodepth 32, io_uring where it works, direct
  return j;
}

// write_iolog logs the requests of the measured pass; fio logs also what
// ddbench does apart from it or not as a request: the verify read-back, the
// ramp, fsync=N's flushes, the file engines' opens.
fsio::Status check_write_iolog(const FioJob& j) {
  if (j.write_iolog.empty()) return {};
  const char* with = j.bench.verify && j.bench.do_verify && bench_writes(j.bench.rw) ? "a verify read-back"
                     : j.bench.ramp_time > 0                                         ? "ramp_time"
                     : j.bench.fsync_every                                           ? "fsync= or fdatasync="
                     : j.file_op != FileOp::none                                     ? "a file engine"
                                                                                     : nullptr;
  if (!with) return {};
  return make_error(Errc::invalid_argument,
                    "write_iolog with " + std::string(with) +
                        " is not supported (ddbench would leave requests fio logs out of the log)");
}

// fio's init.c: strided zones need a zonesize, and zonerange defaults to
// it. Zone sizes without zonemode=strided are refused rather than guessed.
fsio::Status check_strided(FioJob& j) {
  BenchOptions& o = j.bench;
  if (j.strided && !o.zone_size)
    return make_error(Errc::invalid_argument, "zonemode=strided needs zonesize (as fio says)");
  if (!j.strided && (o.zone_size || o.zone_range || o.zone_skip))
    return make_error(Errc::invalid_argument, "zonesize, zonerange and zoneskip need zonemode=strided");
  if (j.strided && !o.zone_range) o.zone_range = o.zone_size;
  return {};
}

fsio::Status apply_fio_lines(FioJob& job, const std::vector<FioLine>& lines) {
  // kb_base first: "bs=4k" before "kb_base=1000" in a section still means 4000.
  std::vector<const FioLine*> order;
  for (const auto& l : lines)
    if (normal_name(l.key) == "kb_base") order.push_back(&l);
  for (const auto& l : lines)
    if (normal_name(l.key) != "kb_base") order.push_back(&l);
  FSIO_TRY(check_direct_buffered(lines));
  for (const FioLine* l : order) {
    const std::string n = normal_name(l->key);
    const Entry* entry = nullptr;
    for (const Entry* e : entries())
      if (n == e->info.name) entry = e;
    const std::string where = l->where == "command line" ? "" : l->where + ": ";
    if (!entry) {
      for (const auto& [name, reason] : fio_unsupported_options())
        if (n == name)
          return make_error(Errc::invalid_argument,
                            where + label(*l) + ": fio's " + name + " is not supported by ddbench: " + reason);
      return make_error(Errc::invalid_argument, where + label(*l) +
                                                    ": unknown option (not one of fio's that "
                                                    "ddbench knows; see ddbench(1), FIO OPTIONS)");
    }
    if (entry->info.arg == FioArg::required && (!l->has_value || l->value.empty()))
      return make_error(Errc::invalid_argument, where + label(*l) + ": needs a value");
    if (entry->info.arg == FioArg::none && l->has_value)
      return make_error(Errc::invalid_argument, where + label(*l) + ": takes no value");
    FSIO_TRY(entry->apply(job, *l));
  }
  // fio: verify_pattern without verify= is verify=pattern.
  const bool verify_given =
      std::any_of(lines.begin(), lines.end(), [](const FioLine& l) { return normal_name(l.key) == "verify"; });
  if (!job.bench.verify_pattern.empty() && !verify_given) job.bench.verify = true;
  // fio opens a trim job's files without O_DIRECT (filesetup.c, file_open:
  // td_trim skips the open flags), its writes included.
  if (bench_trims(job.bench.rw)) job.bench.direct = false;
  FSIO_TRY(check_priority(job, lines));
  FSIO_TRY(check_write_iolog(job));
  FSIO_TRY(check_strided(job));
  FSIO_TRY(check_task_job(job.task, job.bench.rw));
  FSIO_TRY(check_buffer_contents(job));
  // Several files per job exist here only for the file engines (file_ops.hpp).
  if (job.files_line && job.file_op == FileOp::none)
    return bad(*job.files_line,
               "several files per job are supported with ioengine=filecreate, filestat or "
               "filedelete only (use one job per file)");
  return {};
}

fsio::Status resolve_wait_for(std::vector<FioJob>& jobs) {
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    FioJob& j = jobs[k];
    if (!j.wait_for) continue;
    const FioLine& l = *j.wait_for;
    const bool named =
        std::any_of(jobs.begin(), jobs.begin() + std::ptrdiff_t(k), [&](const FioJob& p) { return p.name == l.value; });
    if (!named) return bad(l, "no job of that name before this one");
    const FioJob& prev = jobs[k - 1];
    const bool alone = k == 1 || prev.stonewall || prev.wait_previous;
    if (prev.name != l.value || !alone)
      return bad(l,
                 "ddbench runs jobs in waves (stonewall); it can wait for a job only when that job is the one "
                 "just before and starts a wave of its own");
    j.wait_previous = true;
  }
  return {};
}

}  // namespace bench
