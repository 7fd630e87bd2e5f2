#!/usr/bin/env bash
# fsimg save + restore round trips, judged by the peers: FAT12/16/32 made by
# mkfs.fat and by mkfat with files written (and some deleted) by mtools,
# ext4 made by mke2fs -d with a file deleted by debugfs. Each image is
# restored onto a fresh file (--create), and onto targets full of old
# random bytes, through pipes and from a file: fsck.fat -n / e2fsck -fn
# clean, every file identical (mcopy -s, debugfs rdump), every used block
# identical to the source, every free block zero, or still the old bytes
# with --keep-unused (fsimg_check.py takes the free space from the FAT /
# dumpe2fs, not from fsimg). One ext4 restore goes onto a loop device and is
# mounted by the kernel.
. "$(dirname "$0")/lib.sh"
need mkfs.fat fsck.fat mcopy mmd mdel mke2fs e2fsck debugfs dumpe2fs python3
FSIMG=$BUILD/cmd/fsimg
# The system interpreter: a version manager's shim costs a third of a second a call.
PY=$(command -v /usr/bin/python3 || command -v python3)
CHECK="$PY $SRC/tests/cli/fsimg_check.py"

# files DIR: a small tree of random files, some sizes not a multiple of anything
files() {
  mkdir -p "$1/sub/deep"
  head -c 1500000 /dev/urandom > "$1/big.bin"
  head -c 70001 /dev/urandom > "$1/sub/mid.bin"
  head -c 513 /dev/urandom > "$1/sub/deep/small.bin"
  : > "$1/empty"
  seq 1 20000 > "$1/sub/text.txt"
  head -c 300000 /dev/urandom > "$1/gone.bin"
}

# judge KIND SRC TGT OLD MODE TREE: peers on the restored target
judge() {
  local kind=$1 src=$2 tgt=$3 old=$4 mode=$5 tree=$6 out=$T/out.d
  rm -rf "$out"; mkdir "$out"
  if [ "$kind" = fat ]; then
    fsck.fat -n "$tgt" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$tgt: fsck.fat -n is not clean"; }
    mcopy -s -n -i "$tgt" ::/ "$out/"
    $CHECK fat "$src" "$tgt" "$old" "$mode" || fail "$tgt: blocks ($mode)"
  else
    e2fsck -fn "$tgt" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$tgt: e2fsck -fn is not clean"; }
    debugfs -R "rdump / $out" "$tgt" 2>/dev/null
    rm -rf "$out/lost+found"
    dumpe2fs "$src" > "$T/dumpe2fs" 2>/dev/null
    $CHECK ext4 "$src" "$tgt" "$old" "$mode" "$T/dumpe2fs" || fail "$tgt: blocks ($mode)"
  fi
  diff -r "$tree" "$out" || fail "$tgt: files differ from the source tree"
}

# trip KIND SRC TREE: save it, then restore it three ways
trip() {
  local kind=$1 src=$2 tree=$3 size
  size=$(stat -c %s "$src")
  # A file: save to a file, restore onto a fresh file.
  expect_rc 0 "$FSIMG" save -q --frame-size 256K "$src" "$T/a.fsimg"
  expect_rc 0 "$FSIMG" restore -q -C "$T/a.fsimg" "$T/fresh.img"
  judge "$kind" "$src" "$T/fresh.img" - zero "$tree"
  # Old random bytes under it, through a pipe: free space must come out zero.
  head -c "$size" /dev/urandom > "$T/old.img"
  cp "$T/old.img" "$T/tgt.img"
  "$FSIMG" save -T 2 "$src" - 2>/dev/null | "$FSIMG" restore -q - "$T/tgt.img" || fail "$src: piped restore"
  judge "$kind" "$src" "$T/tgt.img" "$T/old.img" zero "$tree"
  # --keep-unused from a pipe: the old bytes stay in the free space.
  cp "$T/old.img" "$T/tgt.img"
  cat "$T/a.fsimg" | "$FSIMG" restore -q --keep-unused - "$T/tgt.img" || fail "$src: --keep-unused"
  judge "$kind" "$src" "$T/tgt.img" "$T/old.img" keep "$tree"
  # Twice the same image: the same bytes.
  local first; first=$(sha "$T/tgt.img")
  "$FSIMG" restore -q --keep-unused --force "$T/a.fsimg" "$T/tgt.img" || fail "$src: second restore"
  [ "$(sha "$T/tgt.img")" = "$first" ] || fail "$src: restoring twice gave different bytes"
  expect_rc 0 "$FSIMG" verify "$T/a.fsimg" "$T/tgt.img"
  pass "$src: fresh, over old data, piped, --keep-unused"
  rm -f "$T/a.fsimg" "$T/fresh.img" "$T/old.img" "$T/tgt.img"
}

files "$T/tree"
for maker in mkfs.fat mkfat; do
  for bits in 12 16 32; do
    case $bits in 12) size=8M ;; 16) size=32M ;; 32) size=40M ;; esac
    img=$T/fat$bits-$maker.img
    rm -f "$img"
    if [ "$maker" = mkfs.fat ]; then
      truncate -s "$size" "$img"; mkfs.fat -F "$bits" "$img" > /dev/null
    else
      "$MKFAT" -q -F "$bits" -C "$img" "$size" > /dev/null
    fi
    mmd -i "$img" ::/sub ::/sub/deep
    mcopy -i "$img" "$T/tree/big.bin" "$T/tree/empty" "$T/tree/gone.bin" ::/
    mcopy -i "$img" "$T/tree/sub/mid.bin" "$T/tree/sub/text.txt" ::/sub/
    mcopy -i "$img" "$T/tree/sub/deep/small.bin" ::/sub/deep/
    mdel -i "$img" ::/gone.bin   # its clusters are free, its data still there
    cp -r "$T/tree" "$T/want"; rm "$T/want/gone.bin"
    trip fat "$img" "$T/want"
    rm -rf "$T/want" "$img"
  done
done

for bs in 1024 4096; do
  img=$T/ext-$bs.img
  mke2fs -q -F -t ext4 -b "$bs" -d "$T/tree" "$img" 48M
  debugfs -w -R "rm /gone.bin" "$img" 2>/dev/null
  cp -r "$T/tree" "$T/want"; rm "$T/want/gone.bin"
  trip ext4 "$img" "$T/want"
  [ "$bs" = 4096 ] || rm -rf "$T/want"
done

# Onto a loop device over old data (direct I/O, zeroing by WRITE ZEROES or
# writes), then the kernel mounts it.
need_root
img=$T/ext-4096.img
head -c 48M /dev/urandom > "$T/old.img"
cp "$T/old.img" "$T/dev.img"
loop=$(new_loop "$T/dev.img")
"$FSIMG" save -q "$img" "$T/a.fsimg"
expect_rc 0 "$FSIMG" restore --json "$T/a.fsimg" "$loop"
[ "$(json "$T/out" "j['direct']")" = True ] || echo "note: restore onto $loop did not use O_DIRECT"
judge ext4 "$img" "$loop" "$T/old.img" zero "$T/want"
mkdir "$T/mnt"
mount -o ro "$loop" "$T/mnt" && MOUNTS+=("$T/mnt")
diff -r --exclude=lost+found "$T/want" "$T/mnt" || fail "kernel mount: files differ"
umount "$T/mnt"
pass "ext4 onto $loop: e2fsck, debugfs, free blocks zero, kernel mount"

# The report counts the first MiB too (written last, after everything
# else): 2 MiB of random bytes then 1 MiB of zeros, saved raw, restore as
# 2 MiB of data (before, the first MiB was left out and it said 1 MiB).
{ head -c 2M /dev/urandom; head -c 1M /dev/zero; } > "$T/raw.img"
"$FSIMG" save -q --fs raw "$T/raw.img" "$T/raw.fsimg"
expect_rc 0 "$FSIMG" restore --json -C "$T/raw.fsimg" "$T/raw.out"
cmp "$T/raw.img" "$T/raw.out" || fail "raw restore differs"
[ "$(json "$T/out" "j['data_bytes']")" = 2097152 ] || fail "data_bytes: $(cat "$T/out")"
pass "a raw image's report: 2097152 bytes of data, the first MiB counted"
