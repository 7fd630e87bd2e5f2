#!/usr/bin/env bash
# ddbench against fio on the same targets in one run, alternating (the order
# flips every repetition), REPS times each; prints medians and ddbench/fio.
#
# Targets: a 1 GiB image under DIR, read and written directly, and a loop
# device over it with --direct-io=on. Rows: sequential read/write at 1 MiB
# iodepth 32, 4 KiB iodepth 1 and 4 KiB iodepth 32, random read 4 KiB
# iodepth 32 (all io_uring, O_DIRECT), 4 KiB iodepth 1 with psync, and the
# readpages lesson: buffered 1 MiB sequential reads of the raw loop device
# against the same bytes read as a file, page cache dropped before each run.
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
# TIME_BASED=1 runs both tools for the whole RUNTIME, going over the image
# again as needed (fio's --time_based, ddbench's --time-based), so the fast
# rows are timed over seconds rather than a fraction of one.
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
dd_tb=() fio_tb=()
[ -n "${TIME_BASED:-}" ] && { dd_tb=(--time-based); fio_tb=(--time_based); }
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

# One row: NAME TARGET RW BS IODEPTH ENGINE DIRECT(1/0)
rows=()
for t in "loop:$loop" "file:$img"; do
  name=${t%%:*} target=${t#*:}
  rows+=("$name seq read 1M qd32|$target|read|1M|32|uring|1"
         "$name seq write 1M qd32|$target|write|1M|32|uring|1"
         "$name seq read 4K qd1|$target|read|4K|1|uring|1"
         "$name seq write 4K qd1|$target|write|4K|1|uring|1"
         "$name seq read 4K qd32|$target|read|4K|32|uring|1"
         "$name seq write 4K qd32|$target|write|4K|32|uring|1"
         "$name rand read 4K qd32|$target|randread|4K|32|uring|1"
         "$name seq read 4K qd1 psync|$target|read|4K|1|psync|1")
done
rows+=("loop buffered seq read 1M|$loop|read|1M|1|psync|0"
       "file buffered seq read 1M|$img|read|1M|1|psync|0")
# ROWS, a bash regular expression, keeps only the rows whose name matches.
if [ -n "${ROWS:-}" ]; then
  keep=()
  for r in "${rows[@]}"; do [[ ${r%%|*} =~ $ROWS ]] && keep+=("$r"); done
  [ ${#keep[@]} -gt 0 ] || { echo "ROWS=$ROWS matches no row" >&2; exit 1; }
  rows=("${keep[@]}")
fi

# run_one TOOL ROW -> appends "row<TAB>tool<TAB>bw_bytes<TAB>iops<TAB>p99_ns"
run_one() {
  local tool=$1 row=$2 name target rw bs qd engine direct out=$dir/out.json
  IFS='|' read -r name target rw bs qd engine direct <<<"$row"
  [ "$direct" = 0 ] && { sync; echo 1 >/proc/sys/vm/drop_caches; }
  if [ "$tool" = ddbench ]; then
    local mode=--direct; [ "$direct" = 0 ] && mode=--buffered
    "${pin[@]}" "$DDBENCH" --rw "$rw" --bs "$bs" --iodepth "$qd" --engine "$engine" $mode --size "$SIZE" \
      --runtime "$RUNTIME" "${dd_tb[@]}" --force --json "$target" >"$out"
    python3 - "$out" "$name" <<'PY' >>"$results"
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}\tddbench\t{j['bw_bytes']}\t{j['iops']}\t{j['clat_ns']['p99']}")
PY
  else
    local ioengine=io_uring; [ "$engine" = psync ] && ioengine=psync
    "${pin[@]}" fio --name=b --filename="$target" --rw="$rw" --bs="$bs" --iodepth="$qd" --ioengine="$ioengine" \
      --direct="$direct" --size="$SIZE" --runtime="$RUNTIME" "${fio_tb[@]}" --invalidate=1 \
      --output-format=json --output="$out" $FIO_ARGS >/dev/null
    python3 - "$out" "$name" "$rw" <<'PY' >>"$results"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["write" if "write" in sys.argv[3] else "read"]
print(f"{sys.argv[2]}\tfio\t{d['bw_bytes']}\t{d['iops']}\t{d['clat_ns']['percentile']['99.000000']}")
PY
  fi
}

echo "ddbench vs fio: $REPS repetitions, ${RUNTIME}s cap per run, $SIZE image on $(df --output=fstype "$DIR" | tail -1) ($img), $loop with --direct-io=on; $(nproc) CPUs, $(uname -r)${FIO_ARGS:+; fio $FIO_ARGS}${PIN:+; both on CPUs $PIN}${TIME_BASED:+; time based}" >&2
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
print(f"| {'row':<28} | {'ddbench':>14} | {'fio':>14} | {'ddbench/fio':>11} | {'paired':>6} | {'p99 clat dd/fio (us)':>22} |")
print(f"|{'-'*30}|{'-'*16}|{'-'*16}|{'-'*13}|{'-'*8}|{'-'*24}|")
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
    print(f"| {name:<28} | {d * scale:>8.0f} {unit:<5} | {f * scale:>8.0f} {unit:<5} | {ratio:>11.3f} | {pairs:>6.3f} | {lat:>22} |")
n = len(data[(rows[0], "ddbench")])
print(f"\nmedians of {n} runs each; paired = median over repetitions of ddbench/fio run back to back;\n"
      f"worst ddbench/fio ratio of medians {worst:.3f} (goal: >= 0.95 on every row)")
if ("loop buffered seq read 1M", "ddbench") in data and ("file buffered seq read 1M", "ddbench") in data:
    lo, fi = med("loop buffered seq read 1M", "ddbench", 0), med("file buffered seq read 1M", "ddbench", 0)
    print(f"readpages lesson (ddbench, buffered 1 MiB reads): raw loop device {lo / 1048576:.0f} MiB/s, "
          f"same bytes as a file {fi / 1048576:.0f} MiB/s, device/file {lo / fi:.2f}")
PY
