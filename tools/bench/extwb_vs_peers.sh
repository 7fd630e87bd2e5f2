#!/usr/bin/env bash
# extwb put against the other ways of getting a file into an ext4 image, in
# one run, REPS times each (default 5), medians:
#   - the same SIZE (default 4G) of NON-ZERO data (all-zero blocks would
#     become holes for debugfs and mke2fs -d and flatter them), piped in
#     8 KiB writes where the tool reads a pipe (extwb, e2cp, the kernel);
#     mke2fs -d and debugfs write read the file;
#   - into a fresh IMG-sized (default 6G) mke2fs -t ext4 image each time;
#   - the kernel on a loop mount (dd bs=8K conv=fsync), with the default
#     loop device and with losetup --direct-io=on;
#   - the raw limit: dd oflag=direct bs=1M of the same bytes into a file.
# Then FILES (default 10000) files of 4 KiB into one directory: extwb put
# of the tree, mke2fs -d, debugfs with a command file, e2cp, the kernel.
# Requests: extwb's own count (--json); the loop device's write I/Os for
# the kernel (/sys/block/loopN/stat); write-type syscalls (strace -f -c,
# one extra run) for the other userspace tools. Peak memory: the tool's
# maximum RSS (/usr/bin/time), "-" for the kernel's page cache.
# Usage: tools/bench/extwb_vs_peers.sh [BUILD]   (root: loop mounts)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
EXTWB=$PWD/$build/cmd/extwb
REPS=${REPS:-5}
SIZE=${SIZE:-4G}
IMG=${IMG:-6G}
FILES=${FILES:-10000}
DIR=${DIR:-/var/tmp}
[ -x "$EXTWB" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mke2fs debugfs e2fsck e2cp e2mkdir strace python3 /usr/bin/time losetup; do
  command -v "$c" >/dev/null || { echo "missing $c (apt-get install e2tools strace time)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "needs root for the loop mounts" >&2; exit 1; }

dir=$(mktemp -d "$DIR/fsio-bench.XXXXXX")
loop=""
cleanup() {
  mountpoint -q "$dir/mnt" 2>/dev/null && umount "$dir/mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$dir/mnt" "$dir/src" "$dir/small"

echo "generating $SIZE of non-zero data and $FILES files of 4 KiB..." >&2
head -c "$SIZE" /dev/urandom | tr '\0' '\1' > "$dir/src/data"
bytes=$(stat -c %s "$dir/src/data")
mkdir "$dir/small/many"
python3 - "$dir/small/many" "$FILES" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/f{i}", "wb") as f:
        f.write(os.urandom(4096).replace(b"\0", b"\1"))
PY

now() { date +%s.%N; }
median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
fresh() { rm -f "$dir/img"; mke2fs -q -F -t ext4 "$dir/img" "$IMG" >/dev/null 2>&1; sync; }
syscalls() {  # write-type syscalls of a command, from strace -f -c
  strace -f -c -o "$dir/strace" "$@" >/dev/null 2>&1 || true
  awk '$NF ~ /^(pwrite64|pwritev|pwritev2|write|io_uring_enter)$/ {n += $4} END {print n+0}' "$dir/strace"
}
loop_writes() { awk '{print $5}' "/sys/block/$(basename "$loop")/stat"; }

# Each runner does one timed run on a fresh target and prints "seconds requests peak_kib".
run_raw() {
  fallocate -l "$bytes" "$dir/raw"; sync
  local t0 t1; t0=$(now)
  /usr/bin/time -f %M -o "$dir/rss" dd if="$dir/src/data" of="$dir/raw" bs=1M oflag=direct conv=notrunc status=none
  t1=$(now); echo "$(python3 -c "print($t1 - $t0)") $(( (bytes + 1048575) / 1048576 )) $(cat "$dir/rss")"
  rm -f "$dir/raw"
}
run_extwb() {
  fresh
  local t0 t1; t0=$(now)
  dd if="$dir/src/data" bs=8K status=none | /usr/bin/time -f %M -o "$dir/rss" "$EXTWB" put --json "$dir/img" /data > "$dir/out.json"
  t1=$(now)
  echo "$(python3 -c "print($t1 - $t0)") $(python3 -c "import json; print(json.load(open('$dir/out.json'))['stats']['requests_submitted'])") $(cat "$dir/rss")"
}
run_kernel() {  # run_kernel [--direct-io=on]
  fresh
  loop=$(losetup -f --show "$@" "$dir/img")
  mount "$loop" "$dir/mnt"
  local w0 t0 t1; w0=$(loop_writes); t0=$(now)
  dd if="$dir/src/data" bs=8K status=none | dd of="$dir/mnt/data" bs=8K conv=fsync status=none
  t1=$(now)
  umount "$dir/mnt"; local w1; w1=$(loop_writes); losetup -d "$loop"; loop=""
  echo "$(python3 -c "print($t1 - $t0)") $((w1 - w0)) -"
}
run_mke2fs() {
  local t0 t1; t0=$(now)
  rm -f "$dir/img"; /usr/bin/time -f %M -o "$dir/rss" mke2fs -q -F -t ext4 -d "$dir/src" "$dir/img" "$IMG" >/dev/null 2>&1
  t1=$(now); echo "$(python3 -c "print($t1 - $t0)") - $(cat "$dir/rss")"
}
run_debugfs() {
  fresh
  local t0 t1; t0=$(now)
  /usr/bin/time -f %M -o "$dir/rss" debugfs -w -R "write $dir/src/data data" "$dir/img" >/dev/null 2>&1
  t1=$(now); echo "$(python3 -c "print($t1 - $t0)") - $(cat "$dir/rss")"
}
run_e2cp() {
  fresh
  local t0 t1; t0=$(now)
  dd if="$dir/src/data" bs=8K status=none | /usr/bin/time -f %M -o "$dir/rss" e2cp - "$dir/img:/data"
  t1=$(now); echo "$(python3 -c "print($t1 - $t0)") - $(cat "$dir/rss")"
}

# The same for the small files (seconds only; peak for the userspace tools).
small_extwb() { fresh; local t0; t0=$(now); /usr/bin/time -f %M -o "$dir/rss" "$EXTWB" put -q "$dir/img" /many "$dir/small/many"; echo "$(python3 -c "print($(now) - $t0)") $(cat "$dir/rss")"; }
small_mke2fs() { rm -f "$dir/img"; local t0; t0=$(now); /usr/bin/time -f %M -o "$dir/rss" mke2fs -q -F -t ext4 -d "$dir/small" "$dir/img" "$IMG" >/dev/null 2>&1; echo "$(python3 -c "print($(now) - $t0)") $(cat "$dir/rss")"; }
small_debugfs() {
  fresh
  { echo "mkdir many"; for f in "$dir"/small/many/*; do echo "write $f many/${f##*/}"; done; } > "$dir/cmds"
  local t0; t0=$(now); /usr/bin/time -f %M -o "$dir/rss" debugfs -w -f "$dir/cmds" "$dir/img" >/dev/null 2>&1
  echo "$(python3 -c "print($(now) - $t0)") $(cat "$dir/rss")"
}
small_e2cp() {
  fresh; e2mkdir "$dir/img:/many"
  local t0; t0=$(now); (cd "$dir/small/many" && /usr/bin/time -f %M -o "$dir/rss" e2cp -- * "$dir/img:/many")
  echo "$(python3 -c "print($(now) - $t0)") $(cat "$dir/rss")"
}
small_kernel() {
  fresh; loop=$(losetup -f --show "$dir/img"); mount "$loop" "$dir/mnt"
  local t0; t0=$(now); cp -r "$dir/small/many" "$dir/mnt/"; sync -f "$dir/mnt"; local t1; t1=$(now)
  umount "$dir/mnt"; losetup -d "$loop"; loop=""
  echo "$(python3 -c "print($t1 - $t0)") -"
}

tools=(raw extwb kernel kernel_dio mke2fs debugfs e2cp)
declare -A secs reqs rss
for t in "${tools[@]}"; do secs[$t]=""; done
for rep in $(seq "$REPS"); do
  for t in "${tools[@]}"; do
    case $t in
      kernel_dio) r=$(run_kernel --direct-io=on) ;;
      *) r=$(run_"$t") ;;
    esac
    read -r s q m <<<"$r"
    secs[$t]="${secs[$t]} $s"; reqs[$t]=$q; rss[$t]=$m
    echo "rep $rep $t: $s s" >&2
  done
done
# Request counts for the userspace peers, from one strace run each.
fresh; reqs[debugfs]=$(syscalls debugfs -w -R "write $dir/src/data data" "$dir/img")
fresh; reqs[e2cp]=$(syscalls e2cp "$dir/src/data" "$dir/img:/data")
reqs[mke2fs]=$(syscalls mke2fs -q -F -t ext4 -d "$dir/src" "$dir/img" "$IMG")
raw_median=$(median ${secs[raw]})

printf '\n%s of non-zero data into a fresh %s ext4 image; medians of %s runs\n\n' "$SIZE" "$IMG" "$REPS"
printf '| %-34s | %8s | %9s | %8s | %10s | %13s | %12s |\n' tool seconds "MB/s" "of raw" requests "avg request" "peak RSS KiB"
printf '|%s|\n' "------------------------------------|----------|-----------|----------|------------|---------------|--------------"
label() {
  case $1 in
    raw) echo "raw: dd oflag=direct bs=1M" ;;
    extwb) echo "extwb put (dd bs=8K pipe)" ;;
    kernel) echo "kernel, loop (dd bs=8K conv=fsync)" ;;
    kernel_dio) echo "kernel, loop --direct-io=on" ;;
    mke2fs) echo "mke2fs -d (includes mkfs)" ;;
    debugfs) echo "debugfs -w write" ;;
    e2cp) echo "e2cp (dd bs=8K pipe)" ;;
  esac
}
for t in "${tools[@]}"; do
  m=$(median ${secs[$t]})
  q=${reqs[$t]}
  avg="-"; [ "$q" != "-" ] && [ "$q" -gt 0 ] && avg="$(python3 -c "print('%.0f KiB' % ($bytes / $q / 1024))")"
  printf '| %-34s | %8s | %9.0f | %7.0f%% | %10s | %13s | %12s |\n' "$(label "$t")" "$m" \
    "$(python3 -c "print($bytes / $m / 1e6)")" "$(python3 -c "print(100 * $raw_median / $m)")" "$q" "$avg" "${rss[$t]}"
done
echo "requests: extwb's submitted requests; the loop device's write I/Os for the kernel; write-type syscalls (strace) for the others"

printf '\n%s files of 4 KiB into one directory; medians of %s runs\n\n' "$FILES" "$REPS"
printf '| %-34s | %8s | %12s |\n' tool seconds "peak RSS KiB"
printf '|%s|\n' "------------------------------------|----------|--------------"
for t in extwb mke2fs debugfs e2cp kernel; do
  s=""
  for rep in $(seq "$REPS"); do read -r x m <<<"$(small_"$t")"; s="$s $x"; done
  printf '| %-34s | %8s | %12s |\n' "$t" "$(median $s)" "$m"
done
