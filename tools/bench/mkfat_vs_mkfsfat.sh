#!/usr/bin/env bash
# mkfat against mkfs.fat, side by side in one run, alternating, REPS times each
# (default 5): wall-time medians and the ratio mkfat/mkfs.fat (< 1 is faster),
# then one strace -c run each for write syscalls, and peak RSS.
# Rows: a 4 GiB preallocated image with -F 32 -s 1, a 64 GiB sparse image, a
# loop device with direct I/O. Usage: tools/bench/mkfat_vs_mkfsfat.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
MKFAT=$PWD/$build/cmd/mkfat
REPS=${REPS:-5}
[ -x "$MKFAT" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mkfs.fat strace python3 /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }; done

dir=$(mktemp -d /var/tmp/fsio-bench.XXXXXX)
loop=""
cleanup() { [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

# Each row: name, target, setup command, extra args for both tools.
fallocate -l 4G "$dir/prealloc.img"
truncate -s 64G "$dir/sparse.img"
rows=("4 GiB prealloc -F 32 -s 1|$dir/prealloc.img|-F 32 -s 1"
      "64 GiB sparse|$dir/sparse.img|")
if [ "$(id -u)" -eq 0 ]; then
  fallocate -l 2G "$dir/loop.img"
  loop=$(losetup -f --show --direct-io=on "$dir/loop.img")
  rows+=("2 GiB loop, direct I/O|$loop|")
fi

now() { date +%s.%N; }
timeit() { local t0; t0=$(now); "$@" >/dev/null 2>&1; python3 -c "print($(now) - $t0)"; }
median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
writes() {  # write-type syscalls in an strace -c summary
  strace -f -c -o "$dir/strace" "$@" >/dev/null 2>&1
  awk '$NF ~ /^(pwrite64|pwritev|pwritev2|write|io_uring_enter|fsync|fdatasync)$/ {n += $4} END {print n+0}' "$dir/strace"
}
peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

printf '%-30s %12s %12s %7s %14s %14s %10s %10s\n' row "mkfs.fat s" "mkfat s" ratio "mkfs.fat sysc" "mkfat sysc" "mkfs KiB" "mkfat KiB"
for row in "${rows[@]}"; do
  IFS='|' read -r name target args <<<"$row"
  # shellcheck disable=SC2206
  a=($args)
  peer=(mkfs.fat -I "${a[@]}" "$target")
  ours=("$MKFAT" --force -q "${a[@]}" "$target")
  tp=(); to=()
  for _ in $(seq "$REPS"); do
    tp+=("$(timeit "${peer[@]}")")
    to+=("$(timeit "${ours[@]}")")
  done
  mp=$(median "${tp[@]}"); mo=$(median "${to[@]}")
  printf '%-30s %12s %12s %7.2f %14s %14s %10s %10s\n' "$name" "$mp" "$mo" \
    "$(python3 -c "print($mo / $mp)")" "$(writes "${peer[@]}")" "$(writes "${ours[@]}")" \
    "$(peak "${peer[@]}")" "$(peak "${ours[@]}")"
done
echo "medians of $REPS alternating runs; syscalls = write/pwrite*/io_uring_enter/fsync counted by strace -f -c"
