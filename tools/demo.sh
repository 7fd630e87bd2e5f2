#!/usr/bin/env bash
# The main job on a target that needs no real disk: sets up and builds fsio,
# creates an image file, measures it with ddbench, formats it with mkfat,
# preallocates files on it with fatfill, has the real fsck.fat and mtools
# judge each result and fatck check it; then puts a file into an ext4 image
# made by mke2fs with extwb, reads it back and runs e2fsck -fn; finally
# saves both images with fsimg, restores them (one through a pipe) and has
# fsck.fat, mtools, extwb and e2fsck judge the copies.
# Usage: tools/demo.sh [IMAGE]   (default: a temporary file, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh build >/dev/null

img=${1:-}
if [ -z "$img" ]; then
  dir=$(mktemp -d /var/tmp/fsio-demo.XXXXXX); trap 'rm -rf "$dir"' EXIT
  img=$dir/card.img
fi

echo "== ddbench: sequential write then read of a new 256 MiB image, 1 MiB blocks, iodepth 32"
build/cmd/ddbench --create 256M --rw write --bs 1M --iodepth 32 --verify "$img"
build/cmd/ddbench --rw read --bs 1M --iodepth 32 "$img"

echo "== mkfat: FAT32 with label DEMO (the image holds no filesystem yet, so no --force)"
build/cmd/mkfat -F 32 -n DEMO --stats "$img"

echo "== fsck.fat -n (the peer checker)"
fsck.fat -n "$img"
echo "== mtools: copy a file in and out"
printf 'hello from fsio\n' > "${img%.img}.txt"
MTOOLS_SKIP_CHECK=1 mcopy -i "$img" "${img%.img}.txt" ::HELLO.TXT
MTOOLS_SKIP_CHECK=1 mdir -i "$img" ::
MTOOLS_SKIP_CHECK=1 mtype -i "$img" ::HELLO.TXT

echo "== fatfill: four 16 MiB zero-filled files in a new /FILL, each durable before the next (--sync)"
build/cmd/fatfill --sync --count 4 --size 16M --dir /FILL "$img"
echo "== fsck.fat -n and mdir judge them; HELLO.TXT is untouched"
fsck.fat -n "$img"
MTOOLS_SKIP_CHECK=1 mdir -i "$img" ::/FILL
MTOOLS_SKIP_CHECK=1 mtype -i "$img" ::HELLO.TXT
echo "== fatck -n: our checker, read-only, on the same image after fatfill (exit 0: clean)"
build/cmd/fatck -n -v "$img"
echo "== extwb: a 64 MiB file from a pipe into an ext4 image made by mke2fs, read back, checked by e2fsck"
ext=${img%.img}-ext4.img
mke2fs -q -F -t ext4 "$ext" 512M >/dev/null
head -c 64M /dev/urandom > "${ext%.img}.bin"
build/cmd/extwb put -p --stats "$ext" /data/blob.bin < "${ext%.img}.bin"
build/cmd/extwb ls -l "$ext" /data
build/cmd/extwb get "$ext" /data/blob.bin | cmp - "${ext%.img}.bin" && echo "read back: identical"
e2fsck -fn "$ext"

echo "== fsimg: save the FAT32 image and the ext4 image (used blocks only, zstd on every core),"
echo "   restore each onto a new file, verify, and let the peers judge the copies"
build/cmd/fsimg save -f "$img" "${img%.img}.fsimg"
build/cmd/fsimg info "${img%.img}.fsimg"
rm -f "${img%.img}-copy.img"
build/cmd/fsimg restore -C "${img%.img}.fsimg" "${img%.img}-copy.img"
build/cmd/fsimg verify --unused "${img%.img}.fsimg" "${img%.img}-copy.img"
fsck.fat -n "${img%.img}-copy.img"
MTOOLS_SKIP_CHECK=1 mtype -i "${img%.img}-copy.img" ::HELLO.TXT
rm -f "${ext%.img}-copy.img"
build/cmd/fsimg save -f "$ext" - | build/cmd/fsimg restore -C - "${ext%.img}-copy.img"
build/cmd/extwb get "${ext%.img}-copy.img" /data/blob.bin | cmp - "${ext%.img}.bin" && echo "restored through a pipe: identical"
e2fsck -fn "${ext%.img}-copy.img"
