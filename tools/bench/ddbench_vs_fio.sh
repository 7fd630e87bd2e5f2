#!/usr/bin/env bash
# ddbench against fio on the same targets in one run, alternating (the order
# flips every repetition), REPS times each; prints medians and ddbench/fio.
# Each row is one fio job file, and both tools run that same file
# (`fio JOB` and `ddbench JOB`): ddbench reads fio's job files, so the two
# measure exactly what the file says, and both JSON reports are read by
# the same code.
#
# Targets: a 1 GiB image under DIR, read and written directly, and a loop
# device over it with --direct-io=on. Rows: sequential read/write at 1 MiB
# iodepth 32, 4 KiB iodepth 1 and 4 KiB iodepth 32, random read 4 KiB
# iodepth 32, random 70/30 read/write 4 KiB iodepth 32, two jobs of random
# read 4 KiB iodepth 32 at once (numjobs=2, group_reporting) (all io_uring,
# O_DIRECT), 4 KiB iodepth 1 with psync, and the readpages lesson: buffered
# 1 MiB sequential reads of the raw loop device against the same bytes read
# as a file, page cache dropped before each run.
# Every run is capped at RUNTIME seconds (default 2), so the whole script
# takes about twenty minutes on two cores. Needs root (loop device, drop_caches).
#
# DIR (default /var/tmp) is where the image lives. The default puts it on the
# machine's disk, which is what a user meets; DIR=/dev/shm puts it in RAM
# (tmpfs takes O_DIRECT since Linux 6.6), which leaves the virtual disk's
# swings out and shows what each tool itself costs per I/O.
#
# FIO_ARGS is added to every fio command line: FIO_ARGS=--mem=shmhuge (with
# enough pages in /proc/sys/vm/nr_hugepages) gives fio huge-page buffers, as
# ddbench takes for itself when its buffers come to 2 MiB or more.
#
# TIME_BASED=1 puts time_based in the job files: both tools run for the
# whole RUNTIME, going over the image again as needed, so the fast rows are
# timed over seconds rather than a fraction of one.
#
# PIN=CPUS runs both tools under taskset -c CPUS, so the scheduler cannot
# place one tool next to the loop worker and the other away from it (at
# queue depth 1 that placement alone moved the rate by 10-30% here).
#
# Usage: tools/bench/ddbench_vs_fio.sh [BUILD_DIR]
#        env: REPS=6 RUNTIME=2 SIZE=1G DIR=/var/tmp FIO_ARGS= ROWS= PIN= TIME_BASED=
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
DDBENCH=$build/cmd/ddbench
REPS=${REPS:-6}
RUNTIME=${RUNTIME:-2}
SIZE=${SIZE:-1G}
DIR=${DIR:-/var/tmp}
FIO_ARGS=${FIO_ARGS:-}
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
[ -x "$DDBENCH" ] || { echo "build ddbench first (tools/setup.sh $build)" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root for the loop device and drop_caches" >&2; exit 1; }

dir=$(mktemp -d "$DIR/fsio-bench.XXXXXX")
loop=""
cleanup() { [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

img=$dir/bench.img
"$DDBENCH" --quiet --create "$SIZE" --rw write --bs 1M --force "$img"  # real blocks, not holes
loop=$(losetup -f --show --direct-io=on "$img")
results=$dir/results.tsv
: >"$results"

# One row: NAME|TARGET|RW|BS|IODEPTH|ENGINE|DIRECT(1/0)|EXTRA (more job-file lines, ';'-separated)
rows=()
for t in "loop:$loop" "file:$img"; do
  name=${t%%:*} target=${t#*:}
  rows+=("$name seq read 1M qd32|$target|read|1M|32|io_uring|1|"
         "$name seq write 1M qd32|$target|write|1M|32|io_uring|1|"
         "$name seq read 4K qd1|$target|read|4K|1|io_uring|1|"
         "$name seq write 4K qd1|$target|write|4K|1|io_uring|1|"
         "$name seq read 4K qd32|$target|read|4K|32|io_uring|1|"
         "$name seq write 4K qd32|$target|write|4K|32|io_uring|1|"
         "$name rand read 4K qd32|$target|randread|4K|32|io_uring|1|"
         "$name randrw 70/30 4K qd32|$target|randrw|4K|32|io_uring|1|rwmixread=70"
         "$name rand read 4K qd32 x2|$target|randread|4K|32|io_uring|1|numjobs=2;group_reporting"
         "$name seq read 4K qd1 psync|$target|read|4K|1|psync|1|")
done
rows+=("loop buffered seq read 1M|$loop|read|1M|1|psync|0|"
       "file buffered seq read 1M|$img|read|1M|1|psync|0|")
# ROWS, a bash regular expression, keeps only the rows whose name matches.
if [ -n "${ROWS:-}" ]; then
  keep=()
  for r in "${rows[@]}"; do [[ ${r%%|*} =~ $ROWS ]] && keep+=("$r"); done
  [ ${#keep[@]} -gt 0 ] || { echo "ROWS=$ROWS matches no row" >&2; exit 1; }
  rows=("${keep[@]}")
fi

# job_file ROW FILE: the fio job file both tools run for ROW.
job_file() {
  local name target rw bs qd engine direct extra
  IFS='|' read -r name target rw bs qd engine direct extra <<<"$1"
  {
    echo "; $name"
    echo "[global]"
    echo "filename=$target"
    echo "size=$SIZE"
    echo "runtime=$RUNTIME"
    if [ -n "${TIME_BASED:-}" ]; then echo "time_based"; fi
    echo "ioengine=$engine"
    echo "direct=$direct"
    echo "invalidate=1"
    echo "[row]"
    echo "rw=$rw"
    echo "bs=$bs"
    echo "iodepth=$qd"
    if [ -n "$extra" ]; then tr ';' '\n' <<<"$extra"; fi
  } >"$2"
}

# run_one TOOL ROW -> appends "row<TAB>tool<TAB>bw_bytes<TAB>iops<TAB>p99_ns"
run_one() {
  local tool=$1 row=$2 name direct out=$dir/out.json job=$dir/row.fio
  name=${row%%|*}
  direct=$(cut -d'|' -f7 <<<"$row")
  job_file "$row" "$job"
  [ "$direct" = 0 ] && { sync; echo 1 >/proc/sys/vm/drop_caches; }
  if [ "$tool" = ddbench ]; then
    "${pin[@]}" "$DDBENCH" --force --output-format=json --output="$out" "$job" >/dev/null
  else
    # shellcheck disable=SC2086 # FIO_ARGS is a list of options
    "${pin[@]}" fio --output-format=json --output="$out" $FIO_ARGS "$job" >/dev/null
  fi
  # Both write fio's JSON: one reader. A mixed row adds its reads and writes;
  # numjobs=2 with group_reporting is one entry for the group.
  python3 - "$out" "$name" "$tool" <<'PY' >>"$results"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r, w = j["read"], j["write"]
bw, iops = r["bw_bytes"] + w["bw_bytes"], r["iops"] + w["iops"]
d = r if r["total_ios"] else w
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{bw}\t{iops}\t{d['clat_ns']['percentile']['99.000000']}")
PY
}

echo "ddbench vs fio: the same job file for both, $REPS repetitions, ${RUNTIME}s cap per run, $SIZE image on $(df --output=fstype "$DIR" | tail -1) ($img), $loop with --direct-io=on; $(nproc) CPUs, $(uname -r)${FIO_ARGS:+; fio $FIO_ARGS}${PIN:+; both on CPUs $PIN}${TIME_BASED:+; time based}" >&2
# Each pair is preceded by an untimed warm-up of the same row, so neither tool
# pays alone for what the previous row left behind (the host's cache under a
# virtual disk, a dirty page cache): measured on this machine, the first run
# after a row of writes could be several times slower (the same buffered read:
# 484, then 3303 MiB/s), whichever tool it was. The order
# inside the pair alternates every repetition.
for rep in $(seq 1 "$REPS"); do
  for row in "${rows[@]}"; do
    warm=$dir/warm.tsv; results_keep=$results; results=$warm
    run_one fio "$row"; results=$results_keep
    if [ $((rep % 2)) -eq 1 ]; then run_one ddbench "$row"; run_one fio "$row"
    else run_one fio "$row"; run_one ddbench "$row"; fi
  done
  echo "repetition $rep/$REPS done" >&2
done

python3 - "$results" "${rows[@]}" <<'PY'
import statistics, sys
rows = [r.split("|")[0] for r in sys.argv[2:]]
data = {}
for line in open(sys.argv[1]):
    name, tool, bw, iops, p99 = line.rstrip("\n").split("\t")
    data.setdefault((name, tool), []).append((float(bw), float(iops), float(p99)))
def med(name, tool, k):
    return statistics.median(v[k] for v in data[(name, tool)])
print(f"| {'row':<30} | {'ddbench':>14} | {'fio':>14} | {'ddbench/fio':>11} | {'paired':>6} | {'p99 clat dd/fio (us)':>22} |")
print(f"|{'-'*32}|{'-'*16}|{'-'*16}|{'-'*13}|{'-'*8}|{'-'*24}|")
worst = None
for name in rows:
    big = " 1M" in name
    k = 0 if big else 1
    d, f = med(name, "ddbench", k), med(name, "fio", k)
    unit = "MiB/s" if big else "IOPS"
    scale = 1 / 1048576 if big else 1
    ratio = d / f if f else float("nan")
    worst = ratio if worst is None else min(worst, ratio)
    lat = f"{med(name, 'ddbench', 2) / 1e3:.0f} / {med(name, 'fio', 2) / 1e3:.0f}"
    # The two runs of a repetition are back to back, so their ratio shares
    # whatever the host was doing then; the median of those ratios is less
    # swayed by a slow minute than the ratio of the medians.
    pairs = statistics.median(dv[k] / fv[k] for dv, fv in zip(data[(name, "ddbench")], data[(name, "fio")]))
    print(f"| {name:<30} | {d * scale:>8.0f} {unit:<5} | {f * scale:>8.0f} {unit:<5} | {ratio:>11.3f} | {pairs:>6.3f} | {lat:>22} |")
n = len(data[(rows[0], "ddbench")])
print(f"\nmedians of {n} runs each; paired = median over repetitions of ddbench/fio run back to back;\n"
      f"worst ddbench/fio ratio of medians {worst:.3f} (goal: >= 0.95 on every row)")
if ("loop buffered seq read 1M", "ddbench") in data and ("file buffered seq read 1M", "ddbench") in data:
    lo, fi = med("loop buffered seq read 1M", "ddbench", 0), med("file buffered seq read 1M", "ddbench", 0)
    print(f"readpages lesson (ddbench, buffered 1 MiB reads): raw loop device {lo / 1048576:.0f} MiB/s, "
          f"same bytes as a file {fi / 1048576:.0f} MiB/s, device/file {lo / fi:.2f}")
PY
