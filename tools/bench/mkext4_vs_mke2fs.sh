#!/usr/bin/env bash
# mkext4 against mke2fs -t ext4, side by side in one run, alternating, REPS
# times each (default 5): wall-time medians and the ratio mkext4/mke2fs (< 1
# is faster); then one strace run each: write-type system calls (pwrite*,
# write, io_uring_enter, fsync, fdatasync), the bytes passed to pwrite*
# (mkext4 on its psync engine there, so strace sees its bytes; io_uring's
# are the same requests; both write the target only by pwrite*, mkext4's
# write calls are messages and an eventfd), and the bytes zeroed by
# fallocate.
# Both tools get the same UUID, hash seed and time, and the results are
# compared byte for byte (tests/cli/sparse_cmp.py): "same" must say yes.
# Each run starts from the same target: a new 4 GiB preallocated file (both
# tools punch it, as mke2fs discards an existing target), a 4 GiB loop
# device with direct I/O (both BLKDISCARD it), a new 1 TiB sparse file.
# Usage: tools/bench/mkext4_vs_mke2fs.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
MKEXT4=$PWD/$build/cmd/mkext4
REPS=${REPS:-5}
[ -x "$MKEXT4" ] || { echo "build first: tools/setup.sh" >&2; exit 1; }
for c in mke2fs strace python3; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 1; }; done
export SOURCE_DATE_EPOCH=1700000000 E2FSPROGS_FAKE_TIME=1700000000
ID=(-U 0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55 -E hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c)

dir=$(mktemp -d /var/tmp/fsio-bench.XXXXXX)
loop=""
cleanup() { [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

# Each row: name|target|how to reset it before each run|where its bytes are
rows=("4 GiB file (preallocated)|$dir/f.img|rm -f $dir/f.img; fallocate -l 4G $dir/f.img|$dir/f.img"
      "1 TiB sparse file|$dir/s.img|rm -f $dir/s.img; truncate -s 1T $dir/s.img|$dir/s.img")
if [ "$(id -u)" -eq 0 ]; then
  fallocate -l 4G "$dir/loop.img"
  loop=$(losetup -f --show --direct-io=on "$dir/loop.img")
  rows+=("4 GiB loop device, direct I/O|$loop|true|$dir/loop.img")
fi

now() { date +%s.%N; }
timeit() { local t0; t0=$(now); "$@" >/dev/null 2>&1; python3 -c "print($(now) - $t0)"; }
median() { python3 -c 'import sys,statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# io STRACE-OUTPUT: "SYSCALLS BYTES ZEROED" from an strace -f log
io() {
  python3 - "$1" <<'PY'
import re, sys
calls = written = zeroed = 0
for line in open(sys.argv[1]):
    m = re.search(r'\b(pwrite64|pwritev2?|write|io_uring_enter|fsync|fdatasync|fallocate)\((.*)\)\s+=\s+(-?\d+)', line)
    if not m:
        continue
    name, args, ret = m.group(1), m.group(2), int(m.group(3))
    if name == 'fallocate':
        if ret == 0:
            zeroed += int(args.split(',')[-1])
        continue
    calls += 1
    if name in ('pwrite64', 'pwritev', 'pwritev2') and ret > 0:  # the target's (write: messages)
        written += ret
print(calls, written, zeroed)
PY
}
traced() {  # traced OUT CMD...
  local out=$1; shift
  strace -f -o "$out" -e trace=pwrite64,pwritev,pwritev2,write,io_uring_enter,fsync,fdatasync,fallocate "$@" >/dev/null 2>&1
}

printf '%-30s %9s %9s %6s %8s %8s %11s %11s %9s %9s %5s\n' row "mke2fs s" "mkext4 s" ratio \
  "e2 sysc" "ours sysc" "e2 written" "ours writ" "e2 zeroed" "ours zer" same
for row in "${rows[@]}"; do
  IFS='|' read -r name target reset bytes <<<"$row"
  peer=(mke2fs -q -F -t ext4 "${ID[@]}" "$target")
  ours=("$MKEXT4" -q -F "${ID[@]}" "$target")
  tp=(); to=()
  for _ in $(seq "$REPS"); do
    sh -c "$reset"; tp+=("$(timeit "${peer[@]}")")
    sh -c "$reset"; to+=("$(timeit "${ours[@]}")")
  done
  mp=$(median "${tp[@]}"); mo=$(median "${to[@]}")
  sh -c "$reset"; traced "$dir/peer.trace" "${peer[@]}"
  cp --sparse=always "$bytes" "$dir/peer.result"
  sh -c "$reset"; traced "$dir/ours.trace" env FSIO_ENGINE=psync "${ours[@]}"
  same=no; python3 tools/../tests/cli/sparse_cmp.py "$dir/peer.result" "$bytes" >/dev/null && same=yes
  rm -f "$dir/peer.result"
  read -r pc pw pz <<<"$(io "$dir/peer.trace")"
  read -r oc ow oz <<<"$(io "$dir/ours.trace")"
  sh -c "$reset"; traced "$dir/uring.trace" "${ours[@]}"
  read -r uc _ _ <<<"$(io "$dir/uring.trace")"
  printf '%-30s %9s %9s %6.2f %8s %8s %11s %11s %9s %9s %5s\n' "$name" "$mp" "$mo" \
    "$(python3 -c "print($mo / $mp)")" "$pc" "$uc" "$pw" "$ow" "$pz" "$oz" "$same"
done
echo "medians of $REPS alternating runs; sysc = write-type calls in one strace -f run (mkext4: io_uring);"
echo "written = bytes passed to pwrite* (mkext4 counted on its psync engine); zeroed = fallocate bytes"

# -d: both fill a new 1 GiB image file from one tree of 10,000 small files
# (100 directories of 100, 1-8 KiB of random bytes each; made once, read from
# the page cache by every run). Wall-time medians, the ratio, and each tool's
# peak memory (GNU time's maximum RSS, the last run's); e2fsck -fn must be
# clean on both.
if [ "${SKIP_TREE:-0}" != 1 ]; then
  python3 - "$dir/tree" <<'PY'
import os, random, sys
random.seed(25)
for d in range(100):
    p = os.path.join(sys.argv[1], "d%03d" % d)
    os.makedirs(p)
    for f in range(100):
        with open(os.path.join(p, "f%03d" % f), "wb") as out:
            out.write(random.randbytes(random.randint(1024, 8192)))
PY
  tp=(); to=()
  for _ in $(seq "$REPS"); do
    rm -f "$dir/d.img"; tp+=("$(timeit mke2fs -q -t ext4 "${ID[@]}" -d "$dir/tree" "$dir/d.img" 1G)")
    rm -f "$dir/d.img"; to+=("$(timeit "$MKEXT4" -q "${ID[@]}" -d "$dir/tree" "$dir/d.img" 1G)")
  done
  rm -f "$dir/d.img"; /usr/bin/time -f %M -o "$dir/peer.rss" mke2fs -q -t ext4 "${ID[@]}" -d "$dir/tree" "$dir/d.img" 1G
  e2fsck -fn "$dir/d.img" >/dev/null 2>&1 && peer_ok=clean || peer_ok=NOT-clean
  rm -f "$dir/d.img"; /usr/bin/time -f %M -o "$dir/ours.rss" "$MKEXT4" -q "${ID[@]}" -d "$dir/tree" "$dir/d.img" 1G
  e2fsck -fn "$dir/d.img" >/dev/null 2>&1 && ours_ok=clean || ours_ok=NOT-clean
  mp=$(median "${tp[@]}"); mo=$(median "${to[@]}")
  printf '%-30s %9s %9s %6.2f  peak RSS %s / %s KiB; e2fsck %s / %s\n' "-d, 10,000 files of 1-8 KiB" "$mp" "$mo" \
    "$(python3 -c "print($mo / $mp)")" "$(cat "$dir/peer.rss")" "$(cat "$dir/ours.rss")" "$peer_ok" "$ours_ok"
fi
