#!/usr/bin/env bash
# Regenerates the generated seeds of tests/fuzz/corpus (tests/fuzz/README.md
# lists what else is there: inputs imported from dosfstools' and
# e2fsprogs' test suites, and regression inputs that once crashed a
# target, which this script leaves alone).
#
# Images are made by the peer tools (mkfs.fat and mtools, mke2fs, debugfs,
# e2fsck -D for hashed directories) and stored without their zero tail:
# the targets pad an image back to the size its boot sector or superblock
# states. fsimg streams need fsimg: BUILD names a build holding it
# (default: build-fuzz, the fuzz build; any build will do).
#
# Usage: tools/fuzz_seeds.sh       (writes into tests/fuzz/corpus/*/gen-*)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
corpus=$src/tests/fuzz/corpus
: "${BUILD:=$src/build-fuzz}"
export MTOOLS_SKIP_CHECK=1 SOURCE_DATE_EPOCH=1700000000 E2FSPROGS_FAKE_TIME=1700000000
t=$(mktemp -d /var/tmp/fsio-seeds.XXXXXX)
trap 'rm -rf "$t"' EXIT
for d in fat_volume fatck ext_read ext_write_gate fsimg fio_job ddbench_args size badblocks tar_tree bmap; do
  mkdir -p "$corpus/$d"
  rm -f "$corpus/$d"/gen-*
done

# trim FILE: cut the trailing zero bytes (the targets pad them back).
trim() {
  python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
b = open(p, 'rb').read()
open(p, 'wb').write(b.rstrip(b'\0') or b'\0')
PY
}
# seed FILE TARGET... : FILE, trimmed, as gen-NAME in each target's corpus
seed() {
  local f=$1; shift
  trim "$f"
  for d in "$@"; do cp "$f" "$corpus/$d/gen-$(basename "$f")"; done
}

# --- FAT: a file, a long name, a subdirectory tree, a label ---
fat_files() {
  local img=$1
  printf 'hello, fat\n' > "$t/hello.txt"
  seq 1 1000 | head -c 3000 > "$t/three.bin"
  mlabel -i "$img" ::FUZZLABEL
  mcopy -i "$img" "$t/hello.txt" ::HELLO.TXT
  mcopy -i "$img" "$t/three.bin" "::A long file name.bin"
  mmd -i "$img" ::DIR ::DIR/SUB
  mcopy -i "$img" "$t/hello.txt" ::DIR/SUB/deep.txt
}
mkfs.fat -C -F 12 "$t/fat12.img" 1440 >/dev/null
fat_files "$t/fat12.img"
seed "$t/fat12.img" fat_volume fatck
mkfs.fat -C -F 16 -s 1 -r 64 "$t/fat16.img" 2200 >/dev/null
fat_files "$t/fat16.img"
seed "$t/fat16.img" fat_volume fatck
# mtools takes a FAT32 of few clusters for FAT16 ("No directory slots"),
# so this one holds only its label; dosfstools' FAT32 images have files.
mkfs.fat -C -F 32 -s 1 -n FUZZ32 "$t/fat32.img" 3000 >/dev/null 2>&1
seed "$t/fat32.img" fat_volume fatck
mkfs.fat -C -F 16 -S 4096 -s 1 -r 128 "$t/fat16-4k.img" 17000 >/dev/null
fat_files "$t/fat16-4k.img"
seed "$t/fat16-4k.img" fat_volume fatck
# Damage for fatck: a cross-link and a loop (FAT12 entries of clusters 2..),
# a dirty bit, a second FAT that differs.
cp "$t/fat16.img" "$t/fat16-damaged.img"
python3 - "$t/fat16-damaged.img" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
rsv = struct.unpack_from('<H', b, 14)[0] * 512
fatsz = struct.unpack_from('<H', b, 22)[0] * 512
struct.pack_into('<H', b, rsv + 2 * 3, 3)          # cluster 3 points at itself: a loop
struct.pack_into('<H', b, rsv + fatsz + 2 * 9, 0x1234)  # FAT copy 2 differs
b[0x25] |= 1                                        # BS_Reserved1 dirty
open(p, 'wb').write(b)
PY
seed "$t/fat16-damaged.img" fatck

# --- ext: ext2 (block maps), ext4 without and with metadata_csum, a hashed directory ---
ext_files() {
  local img=$1
  printf 'hello, ext\n' > "$t/hello.txt"
  seq 1 5000 | head -c 13000 > "$t/thirteen.bin"  # past 12 blocks: an indirect block
  debugfs -w "$img" >/dev/null 2>&1 <<CMDS
write $t/hello.txt hello.txt
write $t/thirteen.bin thirteen.bin
mkdir dir
mkdir dir/sub
write $t/hello.txt dir/sub/deep.txt
symlink link hello.txt
symlink dir/longlink /$(printf 'x%.0s' $(seq 1 80))
mkdir empty
CMDS
}
mke2fs -q -F -t ext2 -b 1024 -N 32 -I 128 -O ^resize_inode "$t/ext2.img" 256 >/dev/null
ext_files "$t/ext2.img"
seed "$t/ext2.img" ext_read ext_write_gate
mke2fs -q -F -t ext4 -b 1024 -N 32 -O ^has_journal,^metadata_csum,^resize_inode "$t/ext4.img" 256 >/dev/null
ext_files "$t/ext4.img"
seed "$t/ext4.img" ext_read ext_write_gate
mke2fs -q -F -t ext4 -b 1024 -N 32 -O ^has_journal,^resize_inode "$t/ext4-csum.img" 256 >/dev/null
ext_files "$t/ext4-csum.img"
seed "$t/ext4-csum.img" ext_read
mke2fs -q -F -t ext4 -b 1024 -N 32 -O ^has_journal,^metadata_csum,^resize_inode "$t/ext4-htree.img" 256 >/dev/null
for i in $(seq 1 120); do echo "ln hello.txt dir/file-with-a-long-name-$i"; done | { echo "write $t/hello.txt hello.txt"; echo "mkdir dir"; cat; } |
  debugfs -w "$t/ext4-htree.img" >/dev/null 2>&1
e2fsck -fyD "$t/ext4-htree.img" >/dev/null 2>&1 || true
seed "$t/ext4-htree.img" ext_read ext_write_gate
# A journal with s_start set (needs replay): the gate refuses it.
mke2fs -q -F -t ext4 -b 1024 -N 32 -O ^metadata_csum -J size=1 "$t/ext4-journal.img" 4096 >/dev/null
printf 'j%.0s' $(seq 1 1024) > "$t/block"
printf 'jo\njw -b 300 %s\njc\n' "$t/block" | debugfs -w -f - "$t/ext4-journal.img" >/dev/null 2>&1
seed "$t/ext4-journal.img" ext_read ext_write_gate

# --- fsimg streams of small images ---
if [ -x "$BUILD/cmd/fsimg" ]; then
  mkfs.fat -C -F 12 "$t/s-fat.img" 360 >/dev/null
  fat_files "$t/s-fat.img"
  "$BUILD/cmd/fsimg" save "$t/s-fat.img" "$t/fat12.fsimg" >/dev/null 2>&1
  mke2fs -q -F -t ext4 -b 1024 -N 32 -O ^has_journal "$t/s-ext.img" 256 >/dev/null
  ext_files "$t/s-ext.img"
  "$BUILD/cmd/fsimg" save "$t/s-ext.img" "$t/ext4.fsimg" >/dev/null 2>&1
  cp "$t/fat12.fsimg" "$t/ext4.fsimg" "$corpus/fsimg/"
  for f in fat12 ext4; do mv "$corpus/fsimg/$f.fsimg" "$corpus/fsimg/gen-$f.fsimg"; done
else
  echo "fuzz_seeds: no $BUILD/cmd/fsimg: fsimg seeds left as they are (ninja -C $BUILD cmd/fsimg)" >&2
fi

# --- text inputs ---
i=0
while IFS= read -r line; do
  i=$((i + 1))
  printf '%s' "$line" > "$corpus/size/gen-$i"
done <<'SIZES'
512
4K
4KiB
4KB
1M
16G
1T
2P
18446744073709551615
18446744073709551616
0x200
1.5M
10%
50%
100ms
3s
2m
1h
250us
true
off
io_uring
psync
randrw
readwrite
trim
FUZZ LABEL
NO NAME
1234-ABCD
deadbeef
SIZES

printf '0\n12\n\n 7 \n4096\n' > "$corpus/badblocks/gen-list"
printf '18446744073709551615\n' > "$corpus/badblocks/gen-huge"
printf '100\n-1\n' > "$corpus/badblocks/gen-negative"
printf '3\r\n40\r\n' > "$corpus/badblocks/gen-crlf"

printf -- '--name=a\n--rw=randread\n--bs=4k\n--size=1M\n--filename=/dev/null\n' > "$corpus/ddbench_args/gen-fio"
printf -- '--bs=1M\n--rw=write\n--iodepth=32\n--numjobs=2\n--runtime=1s\n/dev/null\n' > "$corpus/ddbench_args/gen-terse"
printf -- '--output-format=json,normal\n--name=global\n--direct=1\n--name=j\n--bssplit=4k/50:64k/50\n--rwmixread=70\n--rw=randrw\n--filename=x\n' \
  > "$corpus/ddbench_args/gen-global"
printf -- '-q\n--eta=never\n--section\nj\n--name=j\n--size=10%%\n--offset=4k\n--filename=a:b\n' > "$corpus/ddbench_args/gen-section"

cat > "$corpus/fio_job/gen-vars.fio" <<'FIO'
[global]
ioengine=psync
bs=${BS}
size=${SIZE}
filename=/dev/null

[job1]
rw=randread
iodepth=4
runtime=2s

[job2]
stonewall
rw=write
bssplit=4k/25:16k/75
rate=1m
FIO
# tar_tree: GNU tar's archives of a small tree (hard link, symbolic links,
# a FIFO; plain, pax, gzip, paths made absolute) and members tar would not
# write, made with Python's tarfile.
tt=$t/tartree
mkdir -p "$tt/d/e"
echo a > "$tt/d/f"; echo z > "$tt/z"
ln "$tt/d/f" "$tt/hard"; ln -s d/f "$tt/ln"; ln -s ../d "$tt/d/e/up"; mkfifo "$tt/fifo"
tar -C "$tt" -cf "$corpus/tar_tree/gen-plain.tar" .
tar -C "$tt" --format=pax -cf "$corpus/tar_tree/gen-pax.tar" ./d ./hard ./ln
tar -C "$tt" -czf "$corpus/tar_tree/gen-gzip.tar.gz" d z
tar -C "$tt" --transform 's,^,/abs/,' -cf "$corpus/tar_tree/gen-abs.tar" d z
python3 - "$corpus/tar_tree/gen-odd.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as t:
    def add(name, kind=tarfile.REGTYPE, data=b"", link=""):
        i = tarfile.TarInfo(name)
        i.type, i.linkname, i.mtime = kind, link, 1700000000
        i.size = len(data) if kind == tarfile.REGTYPE else 0
        t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add("a//b/./c", data=b"x")
    add("a/b/c", data=b"later")
    add("a/dir", tarfile.DIRTYPE)
    add("a/dir", tarfile.DIRTYPE)
    add("a/h", tarfile.LNKTYPE, link="a/b/c")
    add("a/s", tarfile.SYMTYPE, link="/a/dir")
    add("a/loop", tarfile.SYMTYPE, link="loop")
    add("x/../y", data=b"up")
PY

# bmap: bmaptool's maps of a FAT image and of a sparse file with two
# scattered blocks.
mkfs.fat -C "$t/bmap.img" 2048 > /dev/null
bmaptool create -o "$corpus/bmap/gen-fat.bmap" "$t/bmap.img"
truncate -s 1M "$t/scattered.img"
printf a | dd of="$t/scattered.img" bs=1 seek=5000 conv=notrunc status=none
printf b | dd of="$t/scattered.img" bs=1 seek=300000 conv=notrunc status=none
bmaptool create -o "$corpus/bmap/gen-ranges.bmap" "$t/scattered.img"

echo "fuzz_seeds: $(find "$corpus" -name 'gen-*' | wc -l) generated seeds, $(du -sk "$corpus" | cut -f1) KiB in the corpus"
