#!/usr/bin/env bash
# Flashing one image onto four cards at once: fsimg restore to four targets
# against one target, and against the peers a production line uses:
# `bmaptool copy` run once per card in turn, and `zstd -dc | tee` into four
# `dd oflag=direct`. In one run, REPS times each (default 3), medians; the
# order of the rows is the same every repetition.
#
# The cards: four loop devices over files of SIZE (default 512M), each
# throttled by a cgroup of this script's to WBPS bytes/s of writes (default
# 20000000, an SD card's sequential write) and RBPS of reads (default
# 40000000): blkio.throttle.*_bps_device on cgroup v1, io.max on v2. Every
# command runs inside that cgroup. The image: ext4 of SIZE holding about
# USED (default 205M, 40%) of real files copied from /usr by mke2fs -d,
# published as .img.zst (zstd -T0 -LEVEL, default 3) with a map made by
# `bmaptool create` of the raw image; fsimg also restores its own stream.
#
# Rows: seconds (wall), CPU seconds (user + system of the whole pipeline,
# GNU time), and for --verify the read-back rate of each target (from
# fsimg's --json) against RBPS. fsimg writes the mapped ranges only, with
# --keep-unused, as bmaptool does (bmaptool leaves unmapped blocks as they
# were); the dd rows write the whole image, zeros included, as
# `zstd -dc | tee | dd` does.
# bmaptool writes through the page cache and fsyncs every 6 MiB: the writes
# its own fsync submits are charged to its cgroup; any that the kernel's
# flusher threads write back before that are not (cgroup v1), which can
# only make its row faster than the throttle allows.
#
# Usage: tools/bench/fsimg_flash.sh [BUILD_DIR]
#        env: REPS=3 SIZE=512M USED=205M LEVEL=3 WBPS=20000000 RBPS=40000000 DIR=/var/tmp
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
FSIMG=$PWD/$build/cmd/fsimg
REPS=${REPS:-3}
SIZE=${SIZE:-512M}
USED=${USED:-205M}
LEVEL=${LEVEL:-3}
WBPS=${WBPS:-20000000}
RBPS=${RBPS:-40000000}
DIR=${DIR:-/var/tmp}
[ "$(id -u)" -eq 0 ] || { echo "needs root (loop devices, cgroups)" >&2; exit 1; }
for c in bmaptool zstd mke2fs e2fsck python3; do command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 1; }; done
dir=$(mktemp -d "$DIR/fsimg-flash.XXXXXX")
loops=()
cg=""
cleanup() {
  for l in "${loops[@]:+${loops[@]}}"; do losetup -d "$l" 2>/dev/null || true; done
  [ -z "$cg" ] || rmdir "$cg" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
bytes() { numfmt --from=iec "${1%B}"; }

# A tree of real files from /usr, about USED bytes, as the image's content.
python3 - "$dir/tree" "$(bytes "$USED")" <<'PY'
import os, shutil, sys
dst, budget = sys.argv[1], int(sys.argv[2])
total = 0
for root in ('/usr/lib', '/usr/share', '/usr/bin'):
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
mke2fs -q -F -t ext4 -d "$dir/tree" "$dir/card.img" "$SIZE"
rm -rf "$dir/tree"
zstd -q -T0 -"$LEVEL" "$dir/card.img" -o "$dir/card.img.zst"
bmaptool create -o "$dir/card.bmap" "$dir/card.img" 2>/dev/null
"$FSIMG" save -q "$dir/card.img" "$dir/card.fsimg"
mapped=$(python3 -c "
import xml.etree.ElementTree as E, sys
r = E.parse(sys.argv[1]).getroot()
print(int(r.find('MappedBlocksCount').text) * int(r.find('BlockSize').text))" "$dir/card.bmap")
size=$(stat -c %s "$dir/card.img")
echo "image: $size bytes of ext4, $mapped mapped by bmaptool ($(python3 -c "print(round(100 * $mapped / $size))")%);" \
  ".img.zst $(stat -c %s "$dir/card.img.zst") bytes, fsimg stream $(stat -c %s "$dir/card.fsimg") bytes" >&2

for i in 1 2 3 4; do
  truncate -s "$SIZE" "$dir/card$i"
  loops+=("$(losetup -f --show "$dir/card$i")")
done
majmin() { lsblk -dno MAJ:MIN "$1" | tr -d ' '; }
if [ -f /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device ]; then
  cg=/sys/fs/cgroup/blkio/fsio-flash-$$; mkdir "$cg"
  for l in "${loops[@]}"; do
    echo "$(majmin "$l") $WBPS" > "$cg/blkio.throttle.write_bps_device"
    echo "$(majmin "$l") $RBPS" > "$cg/blkio.throttle.read_bps_device"
  done
elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io > /sys/fs/cgroup/cgroup.subtree_control
  cg=/sys/fs/cgroup/fsio-flash-$$; mkdir "$cg"
  for l in "${loops[@]}"; do echo "$(majmin "$l") wbps=$WBPS rbps=$RBPS" > "$cg/io.max"; done
else
  echo "no cgroup write throttle (blkio or io)" >&2; exit 1
fi

# run NAME CMD: one timed run inside the cgroup; wall and CPU seconds
declare -A secs cpu
rows=()
run() {
  local name=$1 cmd=$2
  sync
  /usr/bin/time -f "%e %U %S" -o "$dir/time" sh -c 'echo $$ > "$1/cgroup.procs" && exec bash -c "$2"' sh "$cg" "$cmd" \
    > "$dir/out" 2> "$dir/err" || { cat "$dir/err" >&2; echo "$name failed" >&2; exit 1; }
  read -r wall user sys < <(tail -1 "$dir/time")
  secs[$name]+="$wall "
  cpu[$name]+="$(python3 -c "print($user + $sys)") "
  [[ " ${rows[*]} " == *" $name "* ]] || rows+=("$name")
}
l1=${loops[0]}
all="${loops[*]}"
verify_rates=()
for r in $(seq 1 "$REPS"); do
  run "fsimg, bmap, 1 target" "'$FSIMG' restore -q --force --keep-unused --bmap '$dir/card.bmap' '$dir/card.img.zst' $l1"
  run "fsimg, bmap, 4 targets" "'$FSIMG' restore -q --force --keep-unused --bmap '$dir/card.bmap' '$dir/card.img.zst' $all"
  run "fsimg, bmap, 4 targets, --verify" \
    "'$FSIMG' restore --json --verify --force --keep-unused --bmap '$dir/card.bmap' '$dir/card.img.zst' $all"
  verify_rates+=($(python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['ok'], j
print(' '.join(str(t['verify']['mbps']) for t in j['targets']))" "$dir/out"))
  run "fsimg, its stream, 1 target" "'$FSIMG' restore -q --force --keep-unused '$dir/card.fsimg' $l1"
  run "fsimg, its stream, 4 targets" "'$FSIMG' restore -q --force --keep-unused '$dir/card.fsimg' $all"
  run "bmaptool copy, 4 targets in turn" \
    "for l in $all; do bmaptool -q copy --bmap '$dir/card.bmap' '$dir/card.img.zst' \$l; done"
  run "zstd -dc | tee, 4 dd oflag=direct" \
    "zstd -qdc '$dir/card.img.zst' | tee >(dd of=${loops[0]} bs=4M iflag=fullblock oflag=direct status=none) \
       >(dd of=${loops[1]} bs=4M iflag=fullblock oflag=direct status=none) \
       >(dd of=${loops[2]} bs=4M iflag=fullblock oflag=direct status=none) \
       | dd of=${loops[3]} bs=4M iflag=fullblock oflag=direct status=none; wait"
done
# Every card holds the image at the end (the last row wrote it whole).
for l in "${loops[@]}"; do cmp -n "$size" "$dir/card.img" "$l" || { echo "$l differs from the image" >&2; exit 1; }; done

printf '\n%s image (%s mapped), .img.zst level %s, writes throttled to %s B/s and reads to %s B/s per card, ' \
  "$SIZE" "$mapped" "$LEVEL" "$WBPS" "$RBPS"
printf '%s CPUs; medians of %s runs\n\n' "$(nproc)" "$REPS"
printf '| %-36s | %8s | %8s | %9s |\n' row seconds "CPU s" "MB/s/card"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..38})" ---------- ---------- -----------
for k in "${rows[@]}"; do
  s=$(median ${secs[$k]})
  per=$mapped; [[ $k == zstd* ]] && per=$size
  [[ $k == *"in turn"* ]] && s1=$(python3 -c "print($s / 4)") || s1=$s
  printf '| %-36s | %8.2f | %8.2f | %9.1f |\n' "$k" "$s" "$(median ${cpu[$k]})" "$(python3 -c "print($per / $s1 / 1e6)")"
done
one=$(median ${secs["fsimg, bmap, 1 target"]}); four=$(median ${secs["fsimg, bmap, 4 targets"]})
c1=$(median ${cpu["fsimg, bmap, 1 target"]}); c4=$(median ${cpu["fsimg, bmap, 4 targets"]})
vr=$(median "${verify_rates[@]}")
echo
printf 'four targets / one: %.2fx the time (goal <= 1.15), %.2fx the CPU seconds (goal <= 1.3)\n' \
  "$(python3 -c "print($four / $one)")" "$(python3 -c "print($c4 / $c1)")"
printf -- '--verify read-back: %.1f MB/s per card (median of %s), %.2fx the read limit (goal >= 0.9)\n' \
  "$vr" "${#verify_rates[@]}" "$(python3 -c "print($vr * 1e6 / $RBPS)")"
printf 'against bmaptool copy in turn: %.2fx faster; against zstd -dc | tee into 4 dd: %.2fx faster\n' \
  "$(python3 -c "print($(median ${secs["bmaptool copy, 4 targets in turn"]}) / $four)")" \
  "$(python3 -c "print($(median ${secs["zstd -dc | tee, 4 dd oflag=direct"]}) / $four)")"
