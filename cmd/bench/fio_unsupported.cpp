// fio 3.33's job options (fio --cmdhelp=all) that ddbench refuses, each with
// the reason a user gets in the error. An option in neither this list nor
// the table of fio_options.cpp is refused as unknown.
#include "cmd/bench/fio_options.hpp"

namespace bench {

// One function on purpose, although it runs to 90 lines: it is a list of
// names with their reasons, read from top to bottom against fio's
// --cmdhelp=all; nothing in it is a step to name apart.
const std::vector<std::pair<const char*, const char*>>& fio_unsupported_options() {
  static const char* const rate = "ddbench runs as fast as the device goes; it does not throttle";
  static const char* const files = "ddbench runs one target per job (use one job per file)";
  static const char* const buffers = "ddbench fills write buffers with one incompressible pattern";
  static const char* const verify = "ddbench's verify stamps every sector and checks it all; it has no knobs";
  static const char* const replay = "ddbench does not record or replay I/O logs";
  static const char* const zones = "ddbench does not handle zoned devices";
  static const char* const trim = "ddbench does not trim";
  static const char* const sched = "ddbench leaves CPU and I/O scheduling to the system";
  static const char* const timing = "ddbench always measures submission, completion and total latency";
  static const char* const uring = "io_uring tuning options are not supported (ddbench sets up its own ring)";
  static const std::vector<std::pair<const char*, const char*>> list = {
      {"rate", rate}, {"rate_min", rate}, {"rate_iops", rate}, {"rate_iops_min", rate}, {"rate_process", rate},
      {"rate_cycle", rate}, {"rate_ignore_thinktime", rate}, {"thinktime", rate}, {"thinktime_spin", rate},
      {"thinktime_blocks", rate}, {"thinktime_blocks_type", rate}, {"thinktime_iotime", rate},
      {"latency_target", rate}, {"latency_window", rate}, {"latency_percentile", rate}, {"latency_run", rate},
      {"max_latency", rate}, {"flow", rate}, {"flow_id", rate}, {"flow_sleep", rate},
      {"nrfiles", files}, {"openfiles", files}, {"file_service_type", files}, {"filesize", files},
      {"filename_format", files}, {"unique_filename", files}, {"opendir", files}, {"lockfile", files},
      {"file_append", files}, {"create_serialize", files}, {"create_fsync", files}, {"create_on_open", files},
      {"create_only", files}, {"fallocate", "ddbench --create extends a file with ftruncate, then writes it"},
      {"pre_read", "ddbench always reads from the device (invalidate drops the cache)"},
      {"allow_mounted_write", "ddbench never writes to a mounted target"},
      {"overwrite", files}, {"wait_for", "use stonewall to order jobs"},
      {"startdelay", "jobs start together, or after a stonewall"},
      {"fill_device", "give size= or use the whole target"}, {"number_ios", "use io_size="},
      {"offset_align", "offsets are multiples of the smallest block size"},
      {"ba", "offsets are multiples of the smallest block size"}, {"blockalign", "offsets are multiples of the smallest block size"},
      {"bsrange", "use bssplit= for several block sizes"}, {"blocksize_range", "use bssplit= for several block sizes"},
      {"bs_unaligned", "block sizes must suit direct I/O"},
      {"random_generator", "ddbench's random order is its own keyed permutation"},
      {"percentage_random", "a job is either sequential or random"}, {"allrandrepeat", "use randseed="},
      {"rw_sequencer", "offset modifiers are not supported"},
      {"iodepth_batch_complete_min", "ddbench reaps a whole batch with --batch, else one at a time"},
      {"iodepth_batch_complete", "ddbench reaps a whole batch with --batch, else one at a time"},
      {"iodepth_batch_complete_max", "ddbench reaps a whole batch with --batch, else one at a time"},
      {"iodepth_low", "ddbench refills the queue as soon as requests complete"},
      {"io_submit_mode", "ddbench submits from the job's own thread"}, {"serialize_overlap", "ddbench does not serialize"},
      {"verify_only", verify}, {"verify_interval", verify}, {"verify_offset", verify}, {"verify_pattern", verify},
      {"verify_fatal", verify}, {"verify_dump", verify}, {"verify_async", verify}, {"verify_backlog", verify},
      {"verify_backlog_batch", verify}, {"experimental_verify", verify}, {"verify_state_load", verify},
      {"verify_state_save", verify}, {"trim_percentage", trim}, {"trim_verify_zero", trim}, {"trim_backlog", trim},
      {"trim_backlog_batch", trim},
      {"write_iolog", replay}, {"read_iolog", replay}, {"read_iolog_chunked", replay}, {"replay_no_stall", replay},
      {"replay_redirect", replay}, {"replay_scale", replay}, {"replay_align", replay}, {"replay_time_scale", replay},
      {"replay_skip", replay}, {"merge_blktrace_file", replay}, {"merge_blktrace_scalars", replay},
      {"merge_blktrace_iters", replay},
      {"zonemode", zones}, {"zonesize", zones}, {"zonecapacity", zones}, {"zonerange", zones}, {"zoneskip", zones},
      {"read_beyond_wp", zones}, {"max_open_zones", zones}, {"job_max_open_zones", zones},
      {"ignore_zone_limits", zones}, {"zone_reset_threshold", zones}, {"zone_reset_frequency", zones},
      {"write_barrier", "use fsync= or fdatasync="}, {"sync_file_range", "use fsync= or fdatasync="},
      {"atomic", "ddbench does not ask for atomic writes"}, {"write_hint", "ddbench sends no write hints"},
      {"clocksource", "ddbench uses CLOCK_MONOTONIC"}, {"gtod_reduce", timing}, {"gtod_cpu", timing},
      {"disable_lat", timing}, {"disable_clat", timing}, {"disable_slat", timing},
      {"disable_bw_measurement", timing}, {"stats", timing},
      {"lat_percentiles", "ddbench reports completion-latency percentiles (clat)"},
      {"slat_percentiles", "ddbench reports completion-latency percentiles (clat)"},
      {"significant_figures", "the normal output uses fio's default of 4"},
      {"block_error_percentiles", trim}, {"unified_rw_reporting", "ddbench reports reads and writes apart"},
      {"log_entries", "logs are kept in memory until the end"}, {"log_max_value", "logs hold window averages"},
      {"log_hist_msec", "use write_lat_log"}, {"log_hist_coarseness", "use write_lat_log"},
      {"write_hist_log", "use write_lat_log"}, {"log_prio", "ddbench sets no I/O priorities"},
      {"log_compression", "logs are plain text"}, {"log_compression_cpus", "logs are plain text"},
      {"log_store_compressed", "logs are plain text"}, {"log_unix_epoch", "log times count from the job's start"},
      {"log_alternate_epoch", "log times count from the job's start"},
      {"log_alternate_epoch_clock_id", "log times count from the job's start"},
      {"mem", "buffers are aligned anonymous memory, on huge pages from 2 MiB"}, {"iomem", "buffers are ddbench's own"},
      {"mem_align", "buffers are aligned for the device"}, {"iomem_align", "buffers are aligned for the device"},
      {"hugepage-size", "buffers of 2 MiB or more use transparent huge pages"}, {"lockmem", sched},
      {"zero_buffers", buffers}, {"refill_buffers", buffers}, {"scramble_buffers", buffers}, {"buffer_pattern", buffers},
      {"buffer_compress_percentage", buffers}, {"buffer_compress_chunk", buffers}, {"dedupe_percentage", buffers},
      {"dedupe_mode", buffers}, {"dedupe_working_set_percentage", buffers}, {"dedupe_global", buffers},
      {"ignore_error", "an I/O error ends the job"}, {"continue_on_error", "an I/O error ends the job"},
      {"error_dump", "an I/O error ends the job"},
      {"exec_prerun", "ddbench runs no commands"}, {"exec_postrun", "ddbench runs no commands"},
      {"ioscheduler", "ddbench does not change the device's scheduler"},
      {"nice", sched}, {"prio", sched}, {"prioclass", sched}, {"cpumask", sched}, {"cpus_allowed", sched},
      {"cpus_allowed_policy", sched}, {"numa_cpu_nodes", sched}, {"numa_mem_policy", sched}, {"cgroup", sched},
      {"cgroup_nodelete", sched}, {"cgroup_weight", sched}, {"uid", sched}, {"gid", sched},
      {"exitall", "jobs end on their own"}, {"exit_what", "jobs end on their own"},
      {"exitall_on_error", "an I/O error ends the job"}, {"unlink_each_loop", "use unlink="},
      {"profile", "fio's profiles are not supported"}, {"steadystate", "ddbench runs for runtime or size"},
      {"steadystate_duration", "ddbench runs for runtime or size"},
      {"steadystate_ramp_time", "ddbench runs for runtime or size"},
      {"hipri", uring}, {"fixedbufs", uring}, {"registerfiles", uring}, {"sqthread_poll", uring},
      {"sqthread_poll_cpu", uring}, {"nonvectored", uring}, {"uncached", uring}, {"nowait", uring},
      {"force_async", uring}, {"cmdprio_percentage", uring}, {"cmdprio_class", uring}, {"cmdprio", uring},
      {"cmdprio_bssplit", uring}, {"userspace_reap", "libaio runs on io_uring here"},
  };
  return list;
}

}  // namespace bench
