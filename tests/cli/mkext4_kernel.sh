#!/usr/bin/env bash
# What mkext4 makes is used by the kernel and by extwb: mounted on a loop
# device, written and read through the mount, then (unmounted) written and
# read with extwb put/get, with e2fsck -fn clean after each writer. And on
# block devices: mkext4 on a loop device equals mke2fs on another one over
# an equal file (both discard it, as mke2fs does a device, and initialise
# the inode tables the kernel will not zero), with 512-byte and 4 KiB
# sectors (losetup --sector-size 4096, direct I/O).
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck python3 mount umount losetup blkid
need_root
MKEXT4=$BUILD/cmd/mkext4
TIME=1700000000
UUID=0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55
SEED=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c
mkdir -p "$T/mnt"
head -c 3000000 /dev/urandom > "$T/payload"

clean() {  # clean IMG WHAT
  e2fsck -fn "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$2: e2fsck -fn is not clean"; }
}

# used NAME SIZE MKEXT4-OPTIONS...: make, mount, write, unmount, extwb, mount again.
used() {
  local name=$1 size=$2; shift 2
  local img=$T/$name.img
  rm -f "$img"
  expect_rc 0 "$MKEXT4" -q "$@" "$img" "$size"
  clean "$img" "$name: new"
  local dev; dev=$(new_loop "$img")
  mount "$dev" "$T/mnt" || fail "$name: the kernel does not mount it: $(dmesg | tail -3)"
  MOUNTS+=("$T/mnt")
  mkdir "$T/mnt/dir" && cp "$T/payload" "$T/mnt/dir/kernel.bin" && sync
  umount "$T/mnt"; MOUNTS=()
  loop_detach "$dev"
  clean "$img" "$name: after the kernel wrote"
  expect_rc 0 "$EXTWB" put -q "$img" /dir/extwb.bin "$T/payload"
  clean "$img" "$name: after extwb put"
  expect_rc 0 "$EXTWB" get "$img" /dir/kernel.bin
  cmp -s "$T/out" "$T/payload" || fail "$name: extwb get reads the kernel's file differently"
  dev=$(new_loop "$img")
  mount -o ro "$dev" "$T/mnt" || fail "$name: the second mount failed"
  MOUNTS+=("$T/mnt")
  cmp "$T/mnt/dir/extwb.bin" "$T/payload" || fail "$name: the kernel reads extwb's file differently"
  umount "$T/mnt"; MOUNTS=()
  loop_detach "$dev"
  rm -f "$img"
  pass "$name ($size $*): kernel mount, write, read; extwb put and get; e2fsck clean after each"
}

used default-1G 1G
used small-64M 64M
used b2048-seed 256M -b 2048 -O metadata_csum_seed
used nocsum-uninit 512M -O ^metadata_csum,uninit_bg
used no64bit-i128 1G -O ^64bit -I 128
used orphan 1G -O orphan_file
used sparse2-noflex 1G -O sparse_super2,^flex_bg
used nojournal 300M -O ^has_journal

# on_devices NAME SECTOR SIZE OPTIONS...: mke2fs on one loop device, mkext4
# on another over an equal file; the backing files must be byte-identical.
on_devices() {
  local name=$1 sector=$2 size=$3; shift 3
  truncate -s "$size" "$T/a.img" "$T/b.img"
  local a b; a=$(loop_setup --sector-size "$sector" --direct-io=on "$T/a.img")
  b=$(loop_setup --sector-size "$sector" --direct-io=on "$T/b.img")
  E2FSPROGS_FAKE_TIME=$TIME mke2fs -q -F -t ext4 -U "$UUID" -E "hash_seed=$SEED" "$@" "$a" > "$T/mke2fs.out" 2>&1 ||
    { cat "$T/mke2fs.out"; fail "$name: mke2fs on $a"; }
  expect_rc 0 env SOURCE_DATE_EPOCH=$TIME "$MKEXT4" -q -U "$UUID" -E "hash_seed=$SEED" "$@" "$b"
  loop_detach "$a" "$b"
  python3 "$SRC/tests/cli/sparse_cmp.py" "$T/a.img" "$T/b.img" > "$T/cmp" || { cat "$T/cmp"; fail "$name: differs from mke2fs"; }
  clean "$T/b.img" "$name"
  b=$(loop_setup --sector-size "$sector" "$T/b.img")
  mount "$b" "$T/mnt" || fail "$name: the kernel does not mount it on $sector-byte sectors"
  MOUNTS+=("$T/mnt")
  cp "$T/payload" "$T/mnt/p.bin" && sync && cmp "$T/mnt/p.bin" "$T/payload" || fail "$name: write through the mount"
  umount "$T/mnt"; MOUNTS=()
  loop_detach "$b"
  clean "$T/b.img" "$name: after the kernel wrote"
  rm -f "$T/a.img" "$T/b.img"
  pass "$name: on a loop device ($sector-byte sectors, $size $*) as mke2fs on another; the kernel mounts it"
}

on_devices dev512 512 1G
on_devices dev512-1k 512 64M
on_devices dev4k 4096 1G
on_devices dev4k-small 4096 200M -O ^metadata_csum,uninit_bg
