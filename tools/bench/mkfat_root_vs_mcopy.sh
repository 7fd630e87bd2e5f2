#!/usr/bin/env bash
# mkfat -d against what image builders run today, on the same trees, the
# same preallocated image and the same FAT32 options (-F 32), in one run,
# alternating, REPS times each (default 5): wall-time medians.
#   mkfat        mkfat -F 32 -d TREE IMG (formats and fills; flushed when it exits)
#   mcopy        mkfs.fat -F 32 IMG, then mcopy -s -Q -i IMG TREE/* ::/
#   per-dir      mkfs.fat, then for each directory in sorted order one mmd and
#                one mcopy -p -Q -m of its files, as systemd-repart drives mtools
#                for reproducible images
#   ddbench      the same number of bytes (the tree's files) written to IMG:
#                1 MiB requests, O_DIRECT, iodepth 32, fsync at the end
# mtools leaves its writes in the page cache; each run of every tool is timed
# up to an fdatasync of IMG as well (sync --data), so that every column but
# "mcopy s" and "per-dir s" (mtools' own exit) is "until it is on disk".
# Trees: a copy of /usr/lib/python3 (TREE= another), and a 512 MiB mix of
# four large files and 5,000 small ones in 50 directories. The page cache
# is prepared the same way before every run: CACHE=warm (default) reads
# every file of the tree; CACHE=cold evicts them (posix_fadvise DONTNEED,
# file by file, so nothing else on the machine loses its cache).
# The image is on /var/tmp's disk; TARGET_DIR=/dev/shm puts it on tmpfs, where
# writing costs no device time and what is left is each tool's own work.
# Usage: [REPS=5] [CACHE=warm|cold] [TREE=/usr/lib/python3] [TARGET_DIR=DIR]
#        tools/bench/mkfat_root_vs_mcopy.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
MKFAT=$PWD/$build/cmd/mkfat
DDBENCH=$PWD/$build/cmd/ddbench
REPS=${REPS:-5}
CACHE=${CACHE:-warm}
TREE=${TREE:-/usr/lib/python3}
[ -x "$MKFAT" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mkfs.fat mcopy mmd fsck.fat python3 strace; do
  command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }
done
export MTOOLS_SKIP_CHECK=1 LC_ALL=C.UTF-8

dir=$(mktemp -d /var/tmp/fsio-bench.XXXXXX)
tdir=$(mktemp -d "${TARGET_DIR:-$dir}/fsio-bench-target.XXXXXX")
trap 'rm -rf "$dir" "$tdir"' EXIT

cp -a "$TREE" "$dir/real"
python3 - "$dir/mix" <<'EOF'
import os, random, sys
root = sys.argv[1]
rnd = random.Random(23)
small = 0
for d in range(50):
    sub = os.path.join(root, "dir%02d" % d)
    os.makedirs(sub)
    for i in range(100):
        n = rnd.randint(512, 12 * 1024)
        small += n
        with open(os.path.join(sub, "small file %03d.bin" % i), "wb") as f:
            f.write(rnd.randbytes(n))
big = ((512 << 20) - small) // 4
for i in range(4):
    with open(os.path.join(root, "large-%d.img" % i), "wb") as f:
        for _ in range(big >> 20):
            f.write(os.urandom(1 << 20))
        f.write(os.urandom(big % (1 << 20)))
EOF

prepare() {  # the page cache of TREE, the same way before every run
  python3 - "$1" "$CACHE" <<'EOF'
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for n in files:
        p = os.path.join(root, n)
        if os.path.islink(p): continue
        fd = os.open(p, os.O_RDONLY)
        if sys.argv[2] == "cold":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        else:
            while os.read(fd, 1 << 20): pass
        os.close(fd)
EOF
}
now() { echo "$EPOCHREALTIME"; }  # bash 5: no process started to read the clock
fsync_img() { sync --data "$1"; }
median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c "print('%.1f' % ($1 / $2))"; }

run_mkfat() { "$MKFAT" -q -I -F 32 -d "$1" "$2"; }
run_mcopy() { mkfs.fat -I -F 32 "$2" >/dev/null && mcopy -s -Q -i "$2" "$1"/* ::/; }
run_perdir() {  # systemd-repart's way: mmd each directory, then mcopy its files, in sorted order
  mkfs.fat -I -F 32 "$2" >/dev/null
  python3 - "$1" "$2" <<'EOF'
import os, subprocess, sys
src, img = sys.argv[1], sys.argv[2]
def walk(d, rel):
    names = sorted(os.listdir(d))
    files = [os.path.join(d, n) for n in names if not os.path.isdir(os.path.join(d, n))]
    if files:
        subprocess.run(["mcopy", "-p", "-Q", "-m", "-i", img] + files + ["::" + (rel or "/")], check=True)
    for n in names:
        p = os.path.join(d, n)
        if os.path.isdir(p):
            subprocess.run(["mmd", "-i", img, "::" + rel + "/" + n], check=True)
            walk(p, rel + "/" + n)
walk(src, "")
EOF
}
run_ddbench() {  # the tree's bytes rounded up to 4 KiB, which O_DIRECT needs
  "$DDBENCH" -q -f --rw=write --bs=1M --size="$(( ($3 + 4095) / 4096 * 4096 ))" --direct=1 --iodepth=32 \
    --end_fsync=1 "$2"
}

# time_run TOOL TREE IMG BYTES: seconds to exit, and to exit plus an fsync of IMG
time_run() {
  prepare "$2"
  local t0 t1 t2
  t0=$(now); "run_$1" "$2" "$3" "$4" >/dev/null; t1=$(now); fsync_img "$3"; t2=$(now)
  python3 -c "print('%.4f %.4f' % ($t1 - $t0, $t2 - $t0))"
}

printf '%-34s %10s %10s %10s %10s %10s %10s %10s\n' tree "mkfat s" "mcopy s" "+fsync" "per-dir s" "+fsync" \
  "ddbench s" "x mcopy"
for tree in real mix; do
  src=$dir/$tree
  bytes=$(du -sb --apparent-size "$src" | cut -f1)
  files=$(find "$src" -type f | wc -l)
  # One image size for every tool: what mkfat -C picks for -F 32, and 10% more.
  "$MKFAT" -C --dry-run --json -F 32 --slack 10% -d "$src" "$dir/size.img" > "$dir/size.json"
  size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tree"]["image_bytes"])' "$dir/size.json")
  img=$tdir/target.img
  rm -f "$img"; fallocate -l "$size" "$img"
  tools=(mkfat mcopy perdir ddbench)
  declare -A exit_t=() sync_t=()
  for _ in $(seq "$REPS"); do
    for t in "${tools[@]}"; do
      read -r e s < <(time_run "$t" "$src" "$img" "$bytes")
      exit_t[$t]+="$e "; sync_t[$t]+="$s "
      if [ "$t" != ddbench ] && ! fsck.fat -n "$img" >/dev/null 2>&1; then echo "$t: fsck.fat -n fails" >&2; exit 1; fi
    done
  done
  # shellcheck disable=SC2086
  mk=$(median ${sync_t[mkfat]}); mc=$(median ${exit_t[mcopy]}); mcs=$(median ${sync_t[mcopy]})
  # shellcheck disable=SC2086
  pd=$(median ${exit_t[perdir]}); pds=$(median ${sync_t[perdir]})
  dd=$(median ${sync_t[ddbench]})
  printf '%-34s %10s %10s %10s %10s %10s %10s %10s\n' \
    "$tree: $files files, $((bytes >> 20)) MiB, $((size >> 20)) MiB img" "$mk" "$mc" "$mcs" "$pd" "$pds" "$dd" \
    "$(ratio "$mcs" "$mk")"
  unset exit_t sync_t
done
echo "medians of $REPS alternating runs, cache $CACHE, image on $(df --output=source "$tdir" | tail -1); 'x mcopy' is" \
  "(mcopy+fsync)/mkfat; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Syscalls and peak memory of one run each on the real tree.
for t in mkfat mcopy; do
  prepare "$dir/real"
  strace -f -c -o "$dir/strace.$t" bash -c "$(declare -f "run_$t"); MKFAT=$MKFAT run_$t '$dir/real' '$tdir/target.img'" \
    >/dev/null 2>&1
  echo "$t: $(awk '$NF == "total" {print $4}' "$dir/strace.$t") syscalls (strace -f -c) on the real tree"
done
