#!/usr/bin/env bash
# A FAT whose sectors are smaller than the device's direct-I/O unit: 2048-byte
# sectors on a 4 KiB-sector loop device, 512-byte sectors in an image on a
# filesystem over a 4 KiB-sector disk. O_DIRECT cannot write one such sector,
# so every tool goes through the page cache for it, by itself (there is no
# option to ask for it): fsimg restore (which used to trip over its own
# O_EXCL claim when it reopened the device buffered), fatck, fatck -a,
# fatfill, fsimg save and mkfat -S 512. Judged by fsck.fat -n and fsimg verify.
. "$(dirname "$0")/lib.sh"
need_root; need mkfs.fat fsck.fat mkfs.ext4 mcopy mdir
FSIMG=$BUILD/cmd/fsimg FATCK=$BUILD/cmd/fatck FATFILL=$BUILD/cmd/fatfill

fsck_clean() { fsck.fat -n "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat -n $1 after $2"; }; }

# One sector per cluster: the image's blocks are 2048 bytes, smaller than the device's unit.
truncate -s 32M "$T/f2k.img"; mkfs.fat -S 2048 -s 1 -n SMALL "$T/f2k.img" > /dev/null
echo hello > "$T/hello.txt"; mcopy -i "$T/f2k.img" "$T/hello.txt" ::/HELLO.TXT
expect_rc 0 "$FSIMG" save -q "$T/f2k.img" "$T/f2k.fsimg"
truncate -s 32M "$T/disk4k.img"
l=$(new_loop "$T/disk4k.img" 4096)
[ "$(blockdev --getss "$l")" = 4096 ] || skip "losetup --sector-size 4096 did not take"
expect_rc 0 "$FSIMG" restore "$T/f2k.fsimg" "$l"
expect_rc 0 "$FSIMG" verify "$T/f2k.fsimg" "$l"
fsck_clean "$l" "fsimg restore"
pass "fsimg restore of 2048-byte FAT sectors onto a 4 KiB-sector device, verified, fsck.fat clean"

expect_rc 0 "$FATCK" "$l"
expect_rc 0 "$FATCK" -a "$l"
expect_rc 0 "$FATFILL" --json --size 1M --name BIG.BIN "$l"
[ "$(json "$T/out" 'j["direct"]')" = False ] || fail "fatfill: the page cache was not used: $(cat "$T/out")"
fsck_clean "$l" "fatfill"
[ "$(mdir -i "$l" -b ::/ 2>/dev/null | sort | tr '\n' ' ')" = "::/BIG.BIN ::/HELLO.TXT " ] || fail "mdir: $(mdir -i "$l" -b ::/)"
pass "fatck, fatck -a and fatfill on it, through the page cache; fsck.fat clean, mtools sees both files"

expect_rc 0 "$FSIMG" save -q "$l" "$T/back.fsimg"
expect_rc 0 "$FSIMG" verify "$T/back.fsimg" "$l"
loop_detach "$l"
pass "fsimg save of it, verified against the device"

# 512-byte sectors in an image file on ext4 over a 4 KiB-sector disk.
truncate -s 256M "$T/host.img"
h=$(new_loop "$T/host.img" 4096)
mkfs.ext4 -q -F "$h"
mkdir "$T/host"; mount "$h" "$T/host" || skip "cannot mount ext4 on $h"
MOUNTS+=("$T/host")
truncate -s 32M "$T/host/card.img"
if dd if=/dev/zero of="$T/host/card.img" bs=512 count=1 oflag=direct conv=notrunc status=none 2>/dev/null; then
  skip_part "the host filesystem takes 512-byte direct writes: no 4 KiB direct-I/O unit to test against"
else
  expect_rc 0 "$MKFAT" -S 512 "$T/host/card.img"
  fsck_clean "$T/host/card.img" "mkfat -S 512"
  expect_rc 0 "$FATFILL" --size 1M "$T/host/card.img"
  fsck_clean "$T/host/card.img" "fatfill"
  pass "mkfat -S 512 and fatfill on an image whose filesystem needs 4 KiB direct I/O; fsck.fat clean"
fi
