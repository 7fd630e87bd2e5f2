#!/usr/bin/env bash
# Neither tool writes into a mounted filesystem, however its storage is
# reached: a second loop device over the mounted image (the reproduction of
# issue 9), loop devices stacked three deep, an overlapping `losetup -o`
# window, a loop device over a partition of a mounted disk, the image through
# a bind mount. --force never overrides this, and --dry-run reports the same
# refusal with the same exit code. Judged independently: after unmounting,
# e2fsck -fn accepts the image and no sector carries ddbench's stamp. A
# loop device held open exclusively by another program counts as in use.
. "$(dirname "$0")/lib.sh"
need_root; need mkfs.ext4 e2fsck mkfs.fat fsck.fat python3
FATFILL=$BUILD/cmd/fatfill; FATCK=$BUILD/cmd/fatck; FSIMG=$BUILD/cmd/fsimg

# refused TARGET: mkfat (with and without --dry-run) and ddbench must refuse
# to write TARGET, each saying it is mounted.
refused() {
  local t=$1
  expect_rc 1 "$MKFAT" --force "$t"
  grep -q "mounted on $T/mnt" "$T/err" || fail "mkfat $t: $(cat "$T/err")"
  local msg; msg=$(cat "$T/err")
  expect_rc 1 "$MKFAT" --force --dry-run "$t"
  [ "$(cat "$T/err")" = "$msg" ] || fail "--dry-run said '$(cat "$T/err")', the real run '$msg'"
  [ ! -s "$T/out" ] || fail "--dry-run printed a geometry for $t: $(cat "$T/out")"
  expect_rc 1 "$DDBENCH" --rw write --force --offset 60M --size 1M "$t"
  grep -q "mounted on $T/mnt" "$T/err" || fail "ddbench $t: $(cat "$T/err")"
  expect_rc 1 "$DDBENCH" --rw randwrite --force --bs 4K --size 1M "$t"
  # Without --force the refusal must still be "mounted": suggesting --force
  # for a live filesystem would send the admin the wrong way.
  for tool in "$MKFAT" "$DDBENCH --rw write"; do
    expect_rc 1 $tool "$t"
    grep -q "mounted on $T/mnt" "$T/err" || fail "$tool $t without --force: $(cat "$T/err")"
    if grep -q -- "--force" "$T/err"; then fail "$tool $t: a mounted target met with --force: $(cat "$T/err")"; fi
  done
}

# no_stamps IMG: no 512-byte sector of IMG starts with its own offset and
# ddbench's default seed ("fsib"), i.e. ddbench never wrote there.
no_stamps() {
  python3 - "$1" <<'PY' || fail "ddbench wrote into the mounted image"
import struct, sys
data = open(sys.argv[1], "rb").read()
for off in range(0, len(data), 512):
    o, s = struct.unpack_from("<QQ", data, off)
    assert not (o == off and s == 0x66736962), hex(off)
PY
}

mkdir -p "$T/mnt"
truncate -s 64M "$T/ext.img"; mkfs.ext4 -q -F "$T/ext.img"
l0=$(new_loop "$T/ext.img")
mount "$l0" "$T/mnt" || skip "cannot mount ext4 on $l0"
MOUNTS+=("$T/mnt")
echo data > "$T/mnt/file"

l1=$(new_loop "$T/ext.img")
refused "$l1"
pass "a second loop device over the mounted image: $(cat "$T/err")"

l2=$(new_loop "$l1"); l3=$(new_loop "$l2")
refused "$l3"
pass "loop devices stacked three deep over it"

lo=$(loop_setup -o $((40 << 20)) "$T/ext.img")
refused "$lo"
pass "a losetup -o window inside the mounted image"

mkdir -p "$T/bound"
mount --bind "$T" "$T/bound"; MOUNTS=("$T/bound" "${MOUNTS[@]}")
refused "$T/bound/ext.img"
umount "$T/bound"; MOUNTS=("$T/mnt")
pass "the image reached through a bind mount"

umount "$T/mnt"; MOUNTS=()
loop_detach "$lo" "$l3" "$l2" "$l1" "$l0"
expect_rc 0 e2fsck -fn "$T/ext.img"
no_stamps "$T/ext.img"
pass "after unmounting, e2fsck -fn accepts the image and no sector holds a ddbench stamp"

# A loop device held open exclusively by another program (O_EXCL, as a
# partitioner or another fsio tool holds it) makes its backing file, and a
# second loop device beside it, in use for every tool that writes; one that
# is attached but not held does not. Judged by the image: byte for byte as
# it was, fsck.fat -n clean; and fatfill works once the holder has gone.
truncate -s 32M "$T/fat.img"; mkfs.fat -F 16 "$T/fat.img" > /dev/null
"$FSIMG" save -q "$T/fat.img" "$T/fat.fsimg"
held=$(new_loop "$T/fat.img"); beside=$(new_loop "$T/fat.img")
expect_rc 0 "$FATFILL" --dry-run --size 1M "$T/fat.img"
# The interpreter itself, not lib.sh's python3 function: $! must be its pid.
pybin=/usr/bin/python3; [ -x "$pybin" ] || pybin=$(type -P python3)
"$pybin" -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print("held", flush=True); time.sleep(60)' "$held" > "$T/holder" &
holder=$!
for i in $(seq 50); do [ -s "$T/holder" ] && break; sleep 0.1; done
[ -s "$T/holder" ] || fail "the holder could not open $held with O_EXCL"
before=$(sha "$T/fat.img")
for t in "$T/fat.img" "$beside"; do
  for cmd in "$FATFILL --size 1M" "$FATFILL --dry-run --size 1M" "$MKFAT --force" "$FATCK -a" \
             "$DDBENCH --rw write --force --size 1M" "$FSIMG restore --force $T/fat.fsimg"; do
    rc=0; $cmd "$t" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -ne 0 ] || fail "$cmd $t: ran while $held is held"
    grep -q "in use by a mount, md/dm or another program: $held is held open exclusively" "$T/err" ||
      fail "$cmd $t: $(cat "$T/err")"
  done
done
[ "$(sha "$T/fat.img")" = "$before" ] || fail "the image behind the held loop device was written"
pass "a held loop device: its image and a loop device beside it refused by fatfill, mkfat, fatck -a, ddbench, fsimg: $(cat "$T/err")"
kill "$holder"; wait "$holder" 2>/dev/null || true
fsck.fat -n "$T/fat.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat after the refusals"; }
expect_rc 0 "$FATFILL" --size 1M "$T/fat.img"
fsck.fat -n "$T/fat.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat after fatfill"; }
loop_detach "$beside" "$held"
pass "once let go: fatfill writes the image (attached loop devices nobody holds do not block it), fsck.fat clean"

# A disk image with a partition at 1 MiB, mounted through a partition-scanned loop.
need sfdisk
truncate -s 64M "$T/disk.img"; echo 'start=2048, size=40960, type=83' | sfdisk -q "$T/disk.img"
disk=$(loop_setup -P "$T/disk.img")
for i in $(seq 50); do
  [ -e "/sys/class/block/${disk#/dev/}p1" ] && break
  [ "$i" -eq 10 ] && partx -a "$disk" 2>/dev/null  # some kernels skip the scan at bind time
  sleep 0.1
done
[ -e "/sys/class/block/${disk#/dev/}p1" ] || skip "no partition scanning here (losetup -P, partx -a)"
part=/dev/${disk#/dev/}p1
if [ ! -b "$part" ]; then  # no udev (containers): make the node from sysfs
  IFS=: read -r maj min < "/sys/class/block/${disk#/dev/}p1/dev"
  part=$T/p1; mknod "$part" b "$maj" "$min"
fi
mkfs.ext4 -q -F "$part"
mount "$part" "$T/mnt"; MOUNTS+=("$T/mnt")
over=$(new_loop "$part")
refused "$over"
win=$(loop_setup -o $((2048 * 512 + 4096)) --sizelimit $((1 << 20)) "$disk")
refused "$win"
refused "$T/disk.img"
after=$(loop_setup -o $((42 << 20)) "$disk")
expect_rc 0 "$MKFAT" --dry-run "$after"
pass "a loop device over a partition of a mounted disk, and a window of the disk inside it; one after it is free"
umount "$T/mnt"; MOUNTS=()
loop_detach "$after" "$win" "$over" "$disk"
