#!/usr/bin/env bash
# Lesson 1's table for fatfill: --mirror serial (one request per FAT sector
# per copy, each waited for, as Linux did before batching) against batched
# (every copy's dirty sectors in one plug), on a FAT32 image on a loop
# device with direct I/O, --sync --no-zero, 16 files of 1 MiB and 256 MiB
# with 512-byte and 4 KiB clusters, the kernel's ratios beside ours. Medians
# of REPS (5) alternating runs, each from the same freshly formatted state.
#
# "write" is the writing phase fatfill reports (write_seconds), which
# begins by reading the directories and FAT blocks the run changes in one
# round ("read-ahead", read_ahead_seconds, shown for batched); "run" is the
# whole process (open, the refusal checks, the FAT scan, the plan).
# The floor writes the same FAT bytes, directory and FSInfo sectors and
# nothing else (tools/bench/fatfill_floor.py, which first proves the ranges
# cover every sector the run changed): once with O_DSYNC on each write, as
# the issue defines it, and once with a fdatasync after the FAT and after
# the entry, the fewest flushes --sync's order allows; batched/floor is
# against the faster of the two.
#
# Then the default zero fill against writing the same bytes with ddbench
# (fallocate + dd style: 1 MiB direct writes, depth 32), whole runs.
# Usage (root): [REPS=5] [ROWS=1M|256M] [ZERO=0] tools/bench/fatfill_serial_vs_batched.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
FATFILL=$PWD/$build/cmd/fatfill
DDBENCH=$PWD/$build/cmd/ddbench
FLOOR=$PWD/tools/bench/fatfill_floor.py
REPS=${REPS:-5}
COUNT=16
[ -x "$FATFILL" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (loop devices)" >&2; exit 1; }
for c in mkfs.fat python3 losetup; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }; done

dir=$(mktemp -d /var/tmp/fsio-bench.XXXXXX)
loops=()
cleanup() { for l in "${loops[@]:+${loops[@]}}"; do losetup -d "$l" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# Private copies: a rebuild while the benchmark runs must not swap them.
mkdir "$dir/bin" && cp "$FATFILL" "$DDBENCH" "$dir/bin/"
FATFILL=$dir/bin/fatfill DDBENCH=$dir/bin/ddbench

median() { python3 -c 'import sys,statistics; print("%.4f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c "print('%.1f' % ($1 / $2))"; }
now() { date +%s.%N; }
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

# image NAME SPC: a 4400 MiB FAT32 (room for 16 x 256 MiB) on a direct-I/O
# loop device, left in $LOOP_MADE (not printed: a $(...) subshell would lose
# it from the cleanup list); NAME.meta keeps its first bytes (boot area,
# FATs, root cluster) so every run starts from the same state.
image() {
  local name=$1 spc=$2
  truncate -s 4400M "$dir/$name.img"
  mkfs.fat -F 32 -s "$spc" "$dir/$name.img" >/dev/null
  local l; l=$(losetup -f --show --direct-io=on "$dir/$name.img")
  loops+=("$l")
  local data; data=$(python3 - "$dir/$name.img" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read(512)
le = lambda o, n: int.from_bytes(b[o:o + n], 'little')
print((le(14, 2) + b[16] * le(36, 4)) * le(11, 2) + le(11, 2) * b[13])
PY
)
  head -c "$data" "$dir/$name.img" > "$dir/$name.meta"
  LOOP_MADE=$l
}
restore() { dd if="$2" of="$1" bs=4M oflag=direct conv=notrunc status=none; }

# fill LOOP META MODE SIZE OUT: one run from the fresh state; prints "run write read-ahead".
fill() {
  restore "$1" "$2"
  local t0 t1; t0=$(now)
  "$FATFILL" --json --sync --no-zero --count $COUNT --size "$4" --mirror "$3" "$1" > "$5"
  t1=$(now)
  echo "$(python3 -c "print($t1 - $t0)") $(jget "$5" '["write_seconds"]') $(jget "$5" '["read_ahead_seconds"]')"
}

declare -A LOOP META
image s512 1; LOOP[512]=$LOOP_MADE; META[512]=$dir/s512.meta
image s4k 8; LOOP[4096]=$LOOP_MADE; META[4096]=$dir/s4k.meta

rows=("256M 512 4.06" "1M 512 3.50" "256M 4096 4.31" "1M 4096 2.60")
# ROWS=1M (or 256M) keeps only the rows of that file size; ZERO=0 skips the
# zero-fill table.
if [ -n "${ROWS:-}" ]; then
  keep=(); for r in "${rows[@]}"; do [ "${r%% *}" = "$ROWS" ] && keep+=("$r"); done; rows=("${keep[@]}")
fi
printf '| row | kernel | serial write s | batched write s | of which read-ahead s | ratio (write) | serial run s | batched run s | ratio (run) | floor O_DSYNC s | floor fdatasync s | batched/floor |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for row in "${rows[@]}"; do
  read -r size cb kernel <<<"$row"
  l=${LOOP[$cb]} m=${META[$cb]}
  sw=(); bw=(); sr=(); br=(); ba=()
  for _ in $(seq "$REPS"); do
    read -r r w _ <<<"$(fill "$l" "$m" serial "$size" "$dir/serial.json")"; sr+=("$r"); sw+=("$w")
    read -r r w a <<<"$(fill "$l" "$m" batched "$size" "$dir/batched.json")"; br+=("$r"); bw+=("$w"); ba+=("$a")
  done
  cmp -s <(jget "$dir/serial.json" '["files"]') <(jget "$dir/batched.json" '["files"]') ||
    { echo "serial and batched allocated differently" >&2; exit 1; }
  # The device now holds the batched run's result: the floor's source.
  python3 "$FLOOR" check "$l" "$m" "$dir/batched.json" >&2
  fd=(); ff=()
  for _ in $(seq "$REPS"); do
    fd+=("$(python3 "$FLOOR" replay "$l" "$m" "$dir/batched.json" dsync)")
    ff+=("$(python3 "$FLOOR" replay "$l" "$m" "$dir/batched.json" flush)")
  done
  msw=$(median "${sw[@]}"); mbw=$(median "${bw[@]}"); msr=$(median "${sr[@]}"); mbr=$(median "${br[@]}")
  mfd=$(median "${fd[@]}"); mff=$(median "${ff[@]}")
  floor=$(python3 -c "print(min($mfd, $mff))")
  printf '| %s x %s, %s B clusters | %sx | %s | %s | %s | %sx | %s | %s | %sx | %s | %s | %s |\n' \
    "$COUNT" "$size" "$cb" "$kernel" "$msw" "$mbw" "$(median "${ba[@]}")" "$(ratio "$msw" "$mbw")" "$msr" "$mbr" "$(ratio "$msr" "$mbr")" \
    "$mfd" "$mff" "$(python3 -c "print('%.2f' % ($mbw / $floor))")"
done
echo
echo "medians of $REPS alternating runs; FAT sectors per copy per run: see --json fat.sectors_per_copy"

[ "${ZERO:-1}" = 0 ] && exit 0
# The default zero fill against ddbench writing the same bytes.
printf '\n| row | fatfill (zero fill) s | ddbench write s | fatfill/ddbench | fatfill MB/s | ddbench MB/s |\n|---|---|---|---|---|---|\n'
l=${LOOP[4096]} m=${META[4096]}
data_off=$(stat -c %s "$m")
for size in 64M 1M; do
  bytes=$(python3 -c "print($COUNT * ($(numfmt --from=iec "$size")))")
  ft=(); dt=()
  for _ in $(seq "$REPS"); do
    restore "$l" "$m"
    t0=$(now); "$FATFILL" -q --count $COUNT --size "$size" "$l"; t1=$(now); ft+=("$(python3 -c "print($t1 - $t0)")")
    restore "$l" "$m"
    t0=$(now); "$DDBENCH" -q --force --rw write --bs 1M --iodepth 32 --offset "$data_off" --size "$bytes" "$l"; t1=$(now)
    dt+=("$(python3 -c "print($t1 - $t0)")")
  done
  mf=$(median "${ft[@]}"); md=$(median "${dt[@]}")
  printf '| %s x %s, 4 KiB clusters | %s | %s | %s | %.0f | %.0f |\n' "$COUNT" "$size" "$mf" "$md" \
    "$(python3 -c "print('%.2f' % ($mf / $md))")" "$(python3 -c "print($bytes / $mf / 1e6)")" \
    "$(python3 -c "print($bytes / $md / 1e6)")"
done
echo "whole runs; fatfill also scans and checks the FAT, plans, and flushes; ddbench only writes"
