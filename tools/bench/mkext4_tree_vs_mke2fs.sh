#!/usr/bin/env bash
# mkext4 -d against mke2fs -t ext4 -d, and against the kernel's way (mke2fs,
# a loop mount, cp -a, umount, sync: the data on the image file, as the
# others leave it), on the trees issue 25 names, side by side in
# one run, alternating, REPS times each (default 5): wall-time medians, the
# ratios (< 1: mkext4 is faster), each tool's peak memory (GNU time's
# maximum RSS, the last run's) and e2fsck -fn on every result.
#
#   small  100,000 files of 1-40 KiB (about 2 GiB): 80 directories of 1,000
#          and one of 20,000, and 5,000 more names hard-linked to them
#   large  four 1 GiB files; also ddbench's sequential direct write of the
#          same 4 GiB to a file beside the images: mkext4 -d's data rate
#          against the raw rate of the same target
#   real   a tree of this machine (REAL, default /usr/share/locale)
#
# The trees are made once under /var/tmp and read from the page cache by
# every run (the first run of each tool warms it). Every image is a new file
# of SIZE on the same filesystem; both tools get the same UUID, hash seed,
# time and -N. ROWS picks rows ("small large real"); SMALL_FILES scales the
# small tree (the 20,000-entry directory stays a fifth of it).
# Usage: tools/bench/mkext4_tree_vs_mke2fs.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
MKEXT4=$PWD/$build/cmd/mkext4
DDBENCH=$PWD/$build/cmd/ddbench
REPS=${REPS:-5}
ROWS=${ROWS:-small large real}
REAL=${REAL:-/usr/share/locale}
SMALL_FILES=${SMALL_FILES:-100000}
[ -x "$MKEXT4" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mke2fs e2fsck python3 /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }; done
export SOURCE_DATE_EPOCH=1700000000 E2FSPROGS_FAKE_TIME=1700000000
ID=(-U 0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55 -E hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c)

dir=$(mktemp -d /var/tmp/fsio-treebench.XXXXXX)
mnt=""
cleanup() { if [ -n "$mnt" ]; then umount "$mnt" 2>/dev/null || true; fi; rm -rf "$dir"; }
trap cleanup EXIT

now() { date +%s.%N; }
median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
# timed RSSFILE CMD...: prints the wall time; GNU time's max RSS into RSSFILE
# Each run starts with nothing dirty in the page cache (sync, untimed): the
# run before it (mke2fs -d's buffered writes, cp -a into a loop mount)
# would otherwise still be writing back while it runs.
timed() {
  local rss=$1 t0; shift
  sync
  t0=$(now)
  /usr/bin/time -f %M -o "$rss" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; echo "failed: $*" >&2; exit 1; }
  python3 -c "print($(now) - $t0)"
}
clean() { e2fsck -fn "$1" >/dev/null 2>&1 && echo clean || echo NOT-clean; }

make_small() {  # the small-file tree in $1
  python3 - "$1" "$SMALL_FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(25)
big = n // 5
made = []
def put(d, count):
    os.makedirs(d)
    for f in range(count):
        p = os.path.join(d, "f%05d" % f)
        with open(p, "wb") as out:
            out.write(random.randbytes(random.randint(1024, 40960)))
        made.append(p)
per = 1000
for k in range((n - big) // per):
    put(os.path.join(root, "d%03d" % k), per)
put(os.path.join(root, "wide"), big)
links = os.path.join(root, "links")
os.makedirs(links)
for k, p in enumerate(random.sample(made, n // 20)):
    os.link(p, os.path.join(links, "l%05d" % k))
PY
}
make_large() {
  mkdir -p "$1"
  for k in 1 2 3 4; do head -c 1G /dev/urandom > "$1/big$k"; done
}

# row NAME TREE SIZE INODES: the three ways, REPS times, then the table line
row() {
  local name=$1 tree=$2 size=$3 inodes=$4 tp=() to=() tk=() img=$dir/d.img
  local peer=(mke2fs -q -t ext4 "${ID[@]}" -N "$inodes" -d "$tree" "$img" "$size")
  local ours=("$MKEXT4" -q "${ID[@]}" -N "$inodes" -d "$tree" "$img" "$size")
  mnt=$dir/mnt; mkdir -p "$mnt"
  for _ in $(seq "$REPS"); do
    rm -f "$img"; tp+=("$(timed "$dir/peer.rss" "${peer[@]}")")
    rm -f "$img"; to+=("$(timed "$dir/ours.rss" "${ours[@]}")")
    rm -f "$img"; tk+=("$(timed "$dir/kern.rss" sh -c "mke2fs -q -t ext4 ${ID[*]} -N $inodes '$img' $size &&
      mount -o loop '$img' '$mnt' && cp -a '$tree'/. '$mnt'/ && umount '$mnt' && sync")")
  done
  rm -f "$img"; "${peer[@]}" >/dev/null 2>&1; local peer_ok; peer_ok=$(clean "$img")
  rm -f "$img"; "${ours[@]}" >/dev/null 2>&1; local ours_ok; ours_ok=$(clean "$img")
  local mp mo mk
  mp=$(median "${tp[@]}"); mo=$(median "${to[@]}"); mk=$(median "${tk[@]}")
  printf '| %s | %s | %s | %s | %s | %s | %s / %s KiB | %s / %s |\n' "$name" "$mp" "$mk" "$mo" "$(ratio "$mo" "$mp")" \
    "$(ratio "$mo" "$mk")" "$(cat "$dir/peer.rss")" "$(cat "$dir/ours.rss")" "$peer_ok" "$ours_ok"
  rm -f "$img"
}

echo "| tree | mke2fs -d s | mke2fs+mount+cp -a s | mkext4 -d s | vs mke2fs -d | vs cp -a | peak RSS mke2fs / mkext4 | e2fsck -fn |"
echo "|---|---|---|---|---|---|---|---|"
for r in $ROWS; do
  case $r in
    small)
      make_small "$dir/small"
      row "$SMALL_FILES files of 1-40 KiB, one dir of $((SMALL_FILES / 5)), $((SMALL_FILES / 20)) hard links" \
        "$dir/small" "$(( (SMALL_FILES * 30 / 1024 + 512) ))M" "$((SMALL_FILES + SMALL_FILES / 5 + 1024))"
      rm -rf "$dir/small" ;;
    large)
      make_large "$dir/large"
      row "four 1 GiB files" "$dir/large" 5G 1024
      # The raw rate of the same target: ddbench writing 4 GiB sequentially
      # with direct I/O to a new file beside the images.
      if [ -x "$DDBENCH" ]; then
        rates=()
        for _ in $(seq "$REPS"); do
          rm -f "$dir/raw"
          rates+=("$("$DDBENCH" --output-format=json --name=raw --filename="$dir/raw" --size=4G --rw=write --bs=1M \
            --iodepth=16 --direct=1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["write"]["bw_bytes"])')")
        done
        rm -f "$dir/raw"
        echo "raw direct write of 4 GiB (ddbench, median of $REPS): $(median "${rates[@]}") B/s;" \
          "mkext4 -d's data rate is 4 GiB over its time above"
      fi
      rm -rf "$dir/large" ;;
    real)
      n=$(find "$REAL" | wc -l)
      kib=$(du -sk "$REAL" | cut -f1)
      row "$REAL ($n entries, $((kib / 1024)) MiB)" "$REAL" "$((kib * 3 / 2 / 1024 + 64))M" "$((n * 2 + 1024))" ;;
  esac
done
echo "medians of $REPS alternating runs; the trees are read from the page cache"
