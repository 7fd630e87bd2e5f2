#!/usr/bin/env bash
# extwb reads what the kernel wrote: a 4 KiB-block ext4 populated on a loop
# mount (a directory big enough for the kernel to index it, nested
# directories, sparse files, a file larger than a block group), and a
# partitioned image read through --offset. Every file is compared with its
# source and with debugfs dump, every listing with debugfs ls.
. "$(dirname "$0")/lib.sh"
need mke2fs debugfs sfdisk
need_root

img=$T/k.img
mke2fs -q -F -t ext4 -b 4096 "$img" 400M
loop=$(new_loop "$img")
mkdir "$T/mnt"
mount "$loop" "$T/mnt" || skip "cannot mount ext4 on a loop device"
MOUNTS+=("$T/mnt")
mkdir -p "$T/mnt/many" "$T/mnt/a/b/c"
for i in $(seq 1 2000); do echo "file $i" > "$T/mnt/many/name-with-some-length-$i"; done
head -c 150M /dev/urandom > "$T/big.src"            # more than one 128 MiB group
cp "$T/big.src" "$T/mnt/a/b/c/big.bin"
dd if=/dev/urandom of="$T/mnt/sparse.bin" bs=4096 seek=1000 count=3 status=none
dd if=/dev/urandom of="$T/mnt/sparse.bin" bs=4096 seek=5000 count=1 conv=notrunc status=none
truncate -s 30M "$T/mnt/sparse.bin"
printf 'tail without newline' > "$T/mnt/a/odd"
cp "$T/mnt/sparse.bin" "$T/sparse.src"
umount "$T/mnt"; MOUNTS=()
loop_detach "$loop"

debugfs -R "stat /many" "$img" 2>/dev/null | grep -q "Flags: 0x81000" || debugfs -R "stat /many" "$img" 2>/dev/null | grep -q "Index" \
  || fail "the kernel did not index /many (no htree to read)"
debugfs -R "htree /many" "$img" >/dev/null 2>&1 || fail "debugfs htree rejects /many"

for f in /a/b/c/big.bin /sparse.bin /a/odd /many/name-with-some-length-1777; do
  "$EXTWB" get "$img" "$f" > "$T/ours" || fail "extwb get $f"
  rm -f "$T/peer"; debugfs -R "dump $f $T/peer" "$img" >/dev/null 2>&1
  cmp -s "$T/ours" "$T/peer" || fail "$f: extwb get differs from debugfs dump"
done
cmp -s <("$EXTWB" get "$img" /a/b/c/big.bin) "$T/big.src" || fail "big.bin differs from its source"
cmp -s <("$EXTWB" get "$img" /sparse.bin) "$T/sparse.src" || fail "sparse.bin differs from its source"

# Listings: the same names as debugfs ls -p (/inode/mode/uid/gid/name/size/).
debugfs_names "$img" /many > "$T/peer.ls"
"$EXTWB" ls "$img" /many | sort > "$T/ours.ls"
[ "$(wc -l < "$T/ours.ls")" -eq 2000 ] || fail "extwb ls /many: $(wc -l < "$T/ours.ls") names, expected 2000"
cmp -s "$T/ours.ls" "$T/peer.ls" || fail "extwb ls /many differs from debugfs ls"
"$EXTWB" ls --json "$img" /a > "$T/ls.json"
[ "$(json "$T/ls.json" 'sorted(e["name"] for e in j["entries"])')" = "['b', 'odd']" ] || fail "ls --json /a"
"$EXTWB" stat --json "$img" /sparse.bin > "$T/stat.json"
[ "$(json "$T/stat.json" 'j["size"]')" -eq $((30 << 20)) ] || fail "stat size of sparse.bin"
[ "$(json "$T/stat.json" 'j["blocks_512"]')" -eq 32 ] || fail "stat blocks of sparse.bin: 4 data blocks expected"
"$EXTWB" df --json "$img" > "$T/df.json"
[ "$(json "$T/df.json" 'j["free_blocks"]')" -eq "$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Free blocks/ {print $2+0}')" ] \
  || fail "df free blocks differ from dumpe2fs"
pass "kernel-written image: htree dir of 2000, 150 MiB file, sparse file read like debugfs"

# A filesystem inside a partitioned image, found with --offset.
part=$T/part.img
truncate -s 80M "$part"
echo 'start=2048, type=83' | sfdisk -q "$part"
dd if=/dev/zero of="$T/p1" bs=1M count=60 status=none
mkdir "$T/src"; echo inside > "$T/src/hello"
mke2fs -q -F -t ext4 -d "$T/src" "$T/p1"
dd if="$T/p1" of="$part" bs=512 seek=2048 conv=notrunc status=none
cp "$part" "$T/part.orig"
[ "$("$EXTWB" get --offset 1MiB "$part" /hello)" = inside ] || fail "get --offset 1MiB"
expect_rc 1 "$EXTWB" ls "$part" /
grep -q "bad magic" "$T/err" || fail "reading the partition table as ext4 should name the bad magic: $(cat "$T/err")"
echo outside > "$T/new"
"$EXTWB" put -q --offset 1MiB "$part" /new "$T/new"
dd if="$part" of="$T/p1.back" bs=512 skip=2048 count=$((60 * 2048)) status=none
e2fsck -fn "$T/p1.back" >/dev/null 2>&1 || fail "the partition written through --offset fails e2fsck"
[ "$("$EXTWB" get --offset 1MiB "$part" /new)" = outside ] || fail "get after put --offset"
cmp -s <(head -c 1048576 "$part") <(head -c 1048576 "$T/part.orig") || fail "put --offset touched the partition table"
pass "--offset reads and writes a partition, leaving the partition table alone"
