#!/usr/bin/env bash
# fsimg against the peers that image a filesystem by its used blocks, in one
# run, REPS times each (default 5), medians; the order of the tools is the
# same every repetition.
#
# Sources (made once): an ext4 image of SIZE (default 2G) with about USED
# (default 1300M) of real files copied from /usr by mke2fs -d, and a FAT32
# image of SIZE filled by mcopy with the same files, up to USED.
#
# Save rows: fsimg save -l LEVEL -T 0; partclone.<fs> -c | zstd -T0 -LEVEL;
# e2image -ra | zstd -T0 -LEVEL (ext4); fsarchiver savefs -Z LEVEL -j NPROC
# (ext4, through a loop device, since it mounts the filesystem). Each row:
# seconds, output bytes, peak RSS of the pipeline (GNU time, the largest
# process). Every tool reads the same image file; fsimg reads it with
# O_DIRECT, the others through the page cache, which is warm after the
# first repetition (their advantage).
# Restore rows: fsimg restore onto a fresh file of SIZE; zstd -dc |
# partclone -r onto the same; and the file's sequential write limit as
# ddbench measures it (1 MiB writes, iodepth 32, O_DIRECT, end_fsync);
# and fsimg restore --dry-run, which decompresses and checks every frame
# and writes nothing: on a machine where that is slower than the disk, it
# is the bound on any restore, not the disk. Each row also gives the CPU
# time the whole machine left idle while it ran (/proc/stat).
# Every row ends with the data on disk (fsimg flushes; partclone is followed
# by sync; ddbench flushes at the end): on a virtual disk whose host caches
# writes, ddbench without that flush wrote 2 GiB at 5.8 GB/s, into the
# host's memory, against 1.7 GB/s to the disk.
# A tool that is not installed is left out, and said so.
#
# Usage: tools/bench/fsimg_vs_peers.sh [BUILD_DIR]
#        env: REPS=5 SIZE=2G USED=1300M LEVEL=3 DIR=/var/tmp
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
FSIMG=$PWD/$build/cmd/fsimg
DDBENCH=$PWD/$build/cmd/ddbench
REPS=${REPS:-5}
SIZE=${SIZE:-2G}
USED=${USED:-1300M}
LEVEL=${LEVEL:-3}
DIR=${DIR:-/var/tmp}
export MTOOLS_SKIP_CHECK=1
[ "$(id -u)" -eq 0 ] || { echo "needs root (loop device for fsarchiver)" >&2; exit 1; }
dir=$(mktemp -d "$DIR/fsimg-bench.XXXXXX")
loop=""
cleanup() { [ -z "$loop" ] || losetup -d "$loop"; rm -rf "$dir"; }
trap cleanup EXIT
have() { command -v "$1" >/dev/null || { echo "note: $1 is not installed; its rows are left out" >&2; return 1; }; }
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
bytes() { numfmt --from=iec "${1%B}"; }

# A tree of real files from /usr, about USED bytes.
python3 - "$dir/tree" "$(bytes "$USED")" <<'PY'
import os, shutil, sys
dst, budget = sys.argv[1], int(sys.argv[2])
total = 0
for root in ('/usr/lib', '/usr/share', '/usr/bin', '/usr/include'):
    for path, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            src = os.path.join(path, f)
            if os.path.islink(src) or not os.path.isfile(src):
                continue
            size = os.path.getsize(src)
            if total + size > budget:
                continue
            out = os.path.join(dst, os.path.relpath(src, '/'))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copyfile(src, out)
            total += size
            if total > budget * 0.995:
                sys.exit(0)
PY
mke2fs -q -F -t ext4 -d "$dir/tree" "$dir/ext.img" "$SIZE"
truncate -s "$SIZE" "$dir/fat.img"; mkfs.fat -F 32 -s 8 "$dir/fat.img" >/dev/null
mcopy -s -i "$dir/fat.img" "$dir/tree/usr" ::/
echo "sources: ext4 $(du -sh --apparent-size "$dir/tree" | cut -f1) of files from /usr in a $SIZE image; the same in a $SIZE FAT32 (4 KiB clusters)" >&2

# idle_ticks: the machine's idle and iowait time so far, in clock ticks
idle_ticks() { awk '/^cpu /{print $5 + $6}' /proc/stat; }
tick=$(getconf CLK_TCK)

# run NAME CMD: time one pipeline (bash -c), its output's size, peak RSS,
# and the CPU time the whole machine left idle meanwhile (all CPUs: near
# zero means the row was bound by CPU, not by the disk)
declare -A secs size rss idle
run() {
  local name=$1 cmd=$2 t0 t1 i0 i1
  rm -f "$dir/out"
  i0=$(idle_ticks); t0=$(date +%s.%N)
  /usr/bin/time -f %M -o "$dir/rss" bash -c "$cmd" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; echo "$name failed" >&2; exit 1; }
  t1=$(date +%s.%N); i1=$(idle_ticks)
  secs[$name]+="$(python3 -c "print($t1 - $t0)") "
  idle[$name]+="$(python3 -c "print(($i1 - $i0) / $tick)") "
  size[$name]=$( [ -e "$dir/out" ] && stat -c %s "$dir/out" || echo 0)
  rss[$name]=$(cat "$dir/rss")
}

rows=()
for r in $(seq 1 "$REPS"); do
  for fs in ext fat; do
    src=$dir/$fs.img
    run "$fs: fsimg save" "'$FSIMG' save -q -f -l $LEVEL -T 0 '$src' '$dir/out'"
    if [ "$fs" = ext ]; then pc=partclone.ext4; else pc=partclone.fat32; fi
    if have "$pc"; then
      run "$fs: $pc -c | zstd -T0" "$pc -q -c -s '$src' -o - 2>/dev/null | zstd -q -T0 -$LEVEL > '$dir/out'"
      [ "$r" = 1 ] && cp "$dir/out" "$dir/$fs.pc.zst"
    fi
    if [ "$fs" = ext ] && have e2image; then
      run "ext: e2image -ra | zstd -T0" "e2image -ra '$src' - | zstd -q -T0 -$LEVEL > '$dir/out'"
    fi
    if [ "$fs" = ext ] && have fsarchiver; then
      [ -n "$loop" ] || loop=$(losetup -f --show -r "$src")
      run "ext: fsarchiver savefs" "fsarchiver -o -Z $LEVEL -j $(nproc) savefs '$dir/out.fsa' $loop >/dev/null; mv '$dir/out.fsa' '$dir/out'"
    fi
    # Restore onto a fresh file of the source's size. The stream just saved
    # is synced first: its writeback would otherwise land inside the timed
    # restore's flushes (the peer's stream was written in the first
    # repetition only).
    "$FSIMG" save -q -f -l "$LEVEL" "$src" "$dir/$fs.fsimg"
    sync
    rm -f "$dir/tgt"; truncate -s "$SIZE" "$dir/tgt"
    run "$fs: fsimg restore" "'$FSIMG' restore -q --force '$dir/$fs.fsimg' '$dir/tgt'"
    # The same restore without a single write: decompression and checks
    # only. No restore can be faster than this on the machine.
    run "$fs: fsimg restore --dry-run" "'$FSIMG' restore -q --force --dry-run '$dir/$fs.fsimg' '$dir/tgt'"
    if [ -e "$dir/$fs.pc.zst" ]; then
      rm -f "$dir/tgt"; truncate -s "$SIZE" "$dir/tgt"; sync
      run "$fs: zstd -d | $pc -r" "zstd -q -dc '$dir/$fs.pc.zst' | $pc -q -r -s - -o '$dir/tgt' 2>/dev/null; sync '$dir/tgt'"
    fi
  done
  rm -f "$dir/tgt"; sync
  run "ddbench sequential write limit" "'$DDBENCH' -q --create $SIZE --rw write --bs 1M --iodepth 32 --end-fsync '$dir/tgt'"
  [ "$r" = 1 ] && for k in "${!secs[@]}"; do rows+=("$k"); done
done

limit=$(median ${secs["ddbench sequential write limit"]})
printf '\n%s images, zstd level %s, %s CPUs; medians of %s runs\n\n' "$SIZE" "$LEVEL" "$(nproc)" "$REPS"
printf '| %-36s | %8s | %14s | %9s | %10s |\n' row seconds "output bytes" "peak RSS" "idle CPU s"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..38})" ---------- ---------------- ----------- ------------
for k in $(printf '%s\n' "${rows[@]}" | sort | tr ' ' '\a'); do
  k=${k//$'\a'/ }
  out=${size[$k]}; [ "$out" != 0 ] || out=-
  printf '| %-36s | %8.2f | %14s | %6s MB | %10.2f |\n' "${k//|/\\|}" "$(median ${secs[$k]})" "$out" "$(( ${rss[$k]} / 1024 ))" \
    "$(median ${idle[$k]})"
done
echo
wlimit=$(python3 -c "print($(bytes "$SIZE") / $limit / 1e6)")
printf 'sequential write limit (ddbench, 1 MiB, iodepth 32, end_fsync): %.0f MB/s\n' "$wlimit"
for fs in ext fat; do
  m=$(median ${secs["$fs: fsimg restore"]})
  used=$("$FSIMG" info --json "$dir/$fs.fsimg" | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["mapped_bytes"])')
  rate=$(python3 -c "print($used / $m / 1e6)")
  printf '%s: fsimg restore writes the %s used bytes at %.0f MB/s = %.0f%% of the limit (the rest: holes punched)\n' \
    "$fs" "$used" "$rate" "$(python3 -c "print(100 * $rate / $wlimit)")"
  d=$(median ${secs["$fs: fsimg restore --dry-run"]})
  printf '%s: decompressing and checking alone (--dry-run) runs at %.0f MB/s = %.0f%% of the limit: the most a restore can reach here\n' \
    "$fs" "$(python3 -c "print($used / $d / 1e6)")" "$(python3 -c "print(100 * $used / $d / 1e6 / $wlimit)")"
done
