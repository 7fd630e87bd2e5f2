#!/usr/bin/env bash
# fsimg restore IN TARGET...: one image onto four loop devices at once (one
# with 4 KiB sectors), from an fsimg stream, a raw image, a .img.zst, a
# .img.xz (made by zstd and xz) and a raw image with a map made by the real
# `bmaptool create`, each with --verify. Judged by the peers: every target
# byte-identical to the source where the image holds data (cmp; the bmap's
# ranges read by Python's XML parser, the ext4 free space by dumpe2fs),
# zeros or the old bytes elsewhere as --keep-unused says, the bytes past the
# image untouched, e2fsck -fn / fsck.fat -n clean.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck debugfs dumpe2fs mkfs.fat fsck.fat mcopy zstd xz bmaptool python3
need_root
FSIMG=$BUILD/cmd/fsimg
PY=$(command -v /usr/bin/python3 || command -v python3)
CHECK="$PY $SRC/tests/cli/fsimg_check.py"
BMAPCHECK="$PY $SRC/tests/cli/fsimg_multi_bmap.py"

# The source: 32 MiB of ext4 holding files, one of them deleted so that its
# free blocks still hold data (a raw copy keeps them; a stream leaves them out).
mkdir -p "$T/tree/sub"
head -c 3000000 /dev/urandom > "$T/tree/a.bin"
head -c 700001 /dev/urandom > "$T/tree/sub/b.bin"
seq 1 40000 > "$T/tree/sub/c.txt"
head -c 2000000 /dev/urandom > "$T/tree/gone.bin"
mke2fs -q -F -t ext4 -d "$T/tree" "$T/src.img" 32M
debugfs -w -R "rm /gone.bin" "$T/src.img" 2>/dev/null
e2fsck -fn "$T/src.img" > /dev/null || fail "the source is not clean"
dumpe2fs "$T/src.img" > "$T/dumpe2fs" 2>/dev/null
size=$(stat -c %s "$T/src.img")

# Four targets of 40 MiB of old random bytes: the 8 MiB past the image must
# stay as they were.
head -c 40M /dev/urandom > "$T/old.img"
loops=()
for i in 1 2 3 4; do
  cp "$T/old.img" "$T/t$i.img"
  if [ "$i" = 4 ]; then loops+=("$(new_loop "$T/t$i.img" 4096)"); else loops+=("$(new_loop "$T/t$i.img")"); fi
done
[ "$(blockdev --getss "${loops[3]}")" = 4096 ] || fail "${loops[3]} does not have 4 KiB sectors"
renew() { for i in 1 2 3 4; do dd if="$T/old.img" of="${loops[$((i - 1))]}" bs=4M oflag=direct status=none; done; }

# restored WHAT ARGS...: restore onto the four loops, exit 0, every target
# written and verified in the JSON report
restored() {
  local what=$1; shift
  expect_rc 0 "$FSIMG" restore --json --verify "$@" "${loops[@]}"
  json "$T/out" "j['ok'] and len(j['targets']) == 4 and all(t['written'] and t['verified'] and t['verify']['direct']
    for t in j['targets'])" | grep -qx True || { cat "$T/out"; fail "$what: not every target written and verified"; }
}
# same_as_source WHAT: every target equals the source over the image, old bytes past it
same_as_source() {
  for l in "${loops[@]}"; do
    cmp -n "$size" "$T/src.img" "$l" || fail "$1: $l differs from the source"
    cmp -i "$size" -n $((8 << 20)) "$T/old.img" "$l" || fail "$1: $l: the bytes past the image were changed"
    e2fsck -fn "$l" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$1: $l: e2fsck -fn"; }
  done
}

# The fsimg stream: used blocks from the stream, the free ones zeroed.
"$FSIMG" save -q "$T/src.img" "$T/src.fsimg"
restored stream "$T/src.fsimg"
for l in "${loops[@]}"; do
  $CHECK ext4 "$T/src.img" "$l" "$T/old.img" zero "$T/dumpe2fs" > /dev/null || fail "stream: $l: blocks"
  e2fsck -fn "$l" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "stream: $l: e2fsck -fn"; }
  cmp -i "$size" -n $((8 << 20)) "$T/old.img" "$l" || fail "stream: $l: the bytes past the image were changed"
done
pass "fsimg stream onto 4 loop devices (one of 4 KiB sectors): used blocks identical, free ones zero, e2fsck clean"
renew
restored "stream --keep-unused" --keep-unused "$T/src.fsimg"
for l in "${loops[@]}"; do
  $CHECK ext4 "$T/src.img" "$l" "$T/old.img" keep "$T/dumpe2fs" > /dev/null || fail "stream --keep-unused: $l: blocks"
done
pass "fsimg stream --keep-unused: free blocks still hold the old bytes"

# Raw, zstd and xz: the whole image, the deleted file's blocks included.
zstd -q "$T/src.img" -o "$T/src.img.zst"
xz -T2 -1 -k "$T/src.img"  # blocks of 3 MiB: decoded on several threads
for input in src.img src.img.zst src.img.xz; do
  renew
  restored "$input" --force "$T/$input"
  same_as_source "$input"
  kind=raw; case $input in *.zst) kind=zstd ;; *.xz) kind=xz ;; esac
  json "$T/out" "j['kind'] + ' ' + str(j['image_bytes'])" | grep -qx "$kind $size" ||
    { cat "$T/out"; fail "$input: kind or size not reported"; }
  pass "$input onto 4 loop devices: byte-identical, e2fsck clean, verified"
done
# Through a pipe: the size is not known until the end, so nothing can be
# refused by size up front, and the image still lands whole.
renew
zstd -dc "$T/src.img.zst" | xz -T1 -0 | "$FSIMG" restore -q --force --verify - "${loops[@]}" || fail "xz through a pipe"
same_as_source "xz through a pipe"
pass "an xz image through a pipe, its size unknown: byte-identical"

# A FAT image with bmaptool's map: only the mapped ranges are read (and
# checked), the rest zeroed, or left as it was with --keep-unused.
truncate -s 24M "$T/fat.img"; mkfs.fat -F 16 "$T/fat.img" > /dev/null
head -c 2500000 /dev/urandom > "$T/f1.bin"; seq 1 90000 > "$T/f2.txt"
mcopy -i "$T/fat.img" "$T/f1.bin" "$T/f2.txt" ::/
# A hole in the middle of f1's clusters, so that the map has several
# ranges with a gap of zeros between them (the FAT stays as it was).
fallocate -p -o $((1 << 20)) -l $((512 << 10)) "$T/fat.img"
bmaptool create -o "$T/fat.bmap" "$T/fat.img"
[ "$(grep -c "<Range" "$T/fat.bmap")" -ge 2 ] || fail "the bmap has one range only: $(cat "$T/fat.bmap")"
xz -T2 -1 -k "$T/fat.img"
for mode in zero keep; do
  renew
  opt=(); [ "$mode" = keep ] && opt=(--keep-unused)
  restored "bmap $mode" --force "${opt[@]}" --bmap "$T/fat.bmap" "$T/fat.img.xz"
  for l in "${loops[@]}"; do
    $BMAPCHECK "$T/fat.bmap" "$T/fat.img" "$l" "$T/old.img" "$mode" > "$T/check" || { cat "$T/check"; fail "bmap $mode: $l"; }
    fsck.fat -n "$l" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "bmap $mode: $l: fsck.fat -n"; }
  done
  pass "bmap ($mode): $(cat "$T/check")"
done

# A file on ramfs cannot do O_DIRECT (tmpfs can, since Linux 6.6): its
# cache is dropped before the read-back, and the report says so. -C makes
# the file.
mkdir "$T/shm"; mount -t ramfs ramfs "$T/shm"; MOUNTS+=("$T/shm")
expect_rc 0 "$FSIMG" restore --json --verify -C "$T/src.img.zst" "$T/shm/new.img"
json "$T/out" "j['targets'][0]['verified'] and not j['targets'][0]['verify']['direct']" | grep -qx True ||
  { cat "$T/out"; fail "ramfs target: not verified"; }
json "$T/out" "j['targets'][0]['verify']['cache_note']" | grep -q "dropped first (fsync, POSIX_FADV_DONTNEED)" ||
  { cat "$T/out"; fail "ramfs target: the dropped cache is not said"; }
cmp "$T/src.img" "$T/shm/new.img" || fail "ramfs target: differs"
pass "a target without O_DIRECT: cache dropped before the read-back, and said"
