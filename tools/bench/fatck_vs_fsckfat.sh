#!/usr/bin/env bash
# fatck -n against fsck.fat -n on sparse FAT32 images made by mkfs.fat: 2 TiB
# and 32 GiB empty, and 32 GiB holding 3000 files in 30 directories (mcopy).
# REPS (default 5) alternating runs of each; the table gives median wall
# time and peak RSS (/usr/bin/time), and fatck/fsck.fat for both (< 1 is
# better). fatck reads with O_DIRECT, fsck.fat through the page cache: with
# COLD=1 (root) the page cache is dropped before every run, so both read the
# disk; by default fsck.fat's second and later runs find the image cached.
# Usage: tools/bench/fatck_vs_fsckfat.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
FATCK=$PWD/$build/cmd/fatck
REPS=${REPS:-5}
COLD=${COLD:-0}
[ -x "$FATCK" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mkfs.fat fsck.fat mcopy python3 /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }; done
[ "$COLD" = 0 ] || [ "$(id -u)" -eq 0 ] || { echo "COLD=1 needs root (drop_caches)" >&2; exit 1; }

dir=$(mktemp -d /var/tmp/fsio-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export MTOOLS_SKIP_CHECK=1

truncate -s 2T "$dir/2t.img"; mkfs.fat -F 32 "$dir/2t.img" >/dev/null
truncate -s 32G "$dir/32g.img"; mkfs.fat -F 32 "$dir/32g.img" >/dev/null
cp --sparse=always "$dir/32g.img" "$dir/files.img"
mkdir "$dir/tree"
for d in $(seq 1 30); do
  mkdir "$dir/tree/dir $d"
  for f in $(seq 1 100); do printf 'file %d in directory %d\n' "$f" "$d" > "$dir/tree/dir $d/a file named $f.txt"; done
done
mcopy -s -i "$dir/files.img" "$dir/tree/"* ::
rows=("2 TiB, empty|$dir/2t.img" "32 GiB, empty|$dir/32g.img" "32 GiB, 3000 files|$dir/files.img")

# run CMD...: prints "seconds KiB" for one run (exit 0 or 1 expected from both)
run() {
  [ "$COLD" = 0 ] || { sync; echo 3 > /proc/sys/vm/drop_caches; }
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >/dev/null 2>&1 || true
  tail -1 "$dir/time"
}
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

printf '%-22s %10s %10s %7s %12s %12s %7s\n' row "fsck.fat s" "fatck s" ratio "fsck.fat MB" "fatck MB" ratio
for row in "${rows[@]}"; do
  IFS='|' read -r name img <<<"$row"
  # Both must agree the image is clean before it is timed.
  fsck.fat -n "$img" >/dev/null || { echo "$name: fsck.fat -n finds damage" >&2; exit 1; }
  "$FATCK" -n -q "$img" || { echo "$name: fatck -n finds damage" >&2; exit 1; }
  tp=(); to=(); mp=(); mo=()
  for _ in $(seq "$REPS"); do
    read -r t m <<<"$(run fsck.fat -n "$img")"; tp+=("$t"); mp+=("$m")
    read -r t m <<<"$(run "$FATCK" -n "$img")"; to+=("$t"); mo+=("$m")
  done
  a=$(median "${tp[@]}"); b=$(median "${to[@]}"); ma=$(median "${mp[@]}"); mb=$(median "${mo[@]}")
  printf '%-22s %10.2f %10.2f %7.2f %12.1f %12.1f %7.3f\n' "$name" "$a" "$b" "$(python3 -c "print($b / $a)")" \
    "$(python3 -c "print($ma / 1000)")" "$(python3 -c "print($mb / 1000)")" "$(python3 -c "print($mb / $ma)")"
done
echo "medians of $REPS alternating runs; MB = peak RSS (10^6 bytes); $([ "$COLD" = 1 ] && echo "page cache dropped before every run" || echo "page cache left as it is")"
