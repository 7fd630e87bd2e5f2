#!/usr/bin/env bash
# What fsimg refuses, and that a refusal writes nothing: a target smaller
# than the filesystem, a target holding a filesystem (without --force), a
# mounted target (even with --force), a source mounted read-write (a
# read-only mount is fine), an existing OUT; --dry-run writes nothing;
# --json is one document; --offset on both ends; a restore stopped by a
# cut stream, a full disk or Ctrl-C on a slow device leaves no signature.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck mkfs.fat mcopy python3
FSIMG=$BUILD/cmd/fsimg

mkdir "$T/tree"; head -c 400000 /dev/urandom > "$T/tree/f.bin"
mke2fs -q -F -t ext4 -d "$T/tree" "$T/src.img" 16M
expect_rc 0 "$FSIMG" save --json --dry-run "$T/src.img" "$T/a.fsimg"
[ ! -e "$T/a.fsimg" ] || fail "save --dry-run created OUT"
[ "$(json "$T/out" "j['header']['fs_type']")" = ext4 ] || fail "save --dry-run --json: fs_type"
expect_rc 0 "$FSIMG" save --json "$T/src.img" "$T/a.fsimg"
[ "$(json "$T/out" "j['stream_bytes']")" = "$(stat -c %s "$T/a.fsimg")" ] || fail "--json stream_bytes is not the file's size"
expect_rc 1 "$FSIMG" save "$T/src.img" "$T/a.fsimg"
grep -q "exists" "$T/err" || fail "existing OUT: not said"
expect_rc 0 "$FSIMG" save -q --force "$T/src.img" "$T/a.fsimg"
expect_rc 2 "$FSIMG" save --frame-size 1000 "$T/src.img" "$T/b.fsimg"
expect_rc 0 "$FSIMG" info --json "$T/a.fsimg"
sde_malformed fsimg save "$T/src.img" "$T/sde.fsimg"
[ ! -e "$T/sde.fsimg" ] || fail "a malformed SOURCE_DATE_EPOCH left OUT behind"
SOURCE_DATE_EPOCH=1700000000 expect_rc 0 "$FSIMG" save -q "$T/src.img" "$T/sde.fsimg"
expect_rc 0 "$FSIMG" info --json "$T/sde.fsimg"
[ "$(json "$T/out" "j['header']['created']")" = 1700000000 ] || fail "SOURCE_DATE_EPOCH is not the image's time"
pass "save: --dry-run, --json, existing OUT, --frame-size, SOURCE_DATE_EPOCH checked"

# Smaller target: refused, untouched.
head -c 15M /dev/urandom > "$T/small.img"; before=$(sha "$T/small.img")
expect_rc 2 "$FSIMG" restore "$T/a.fsimg" "$T/small.img"
grep -q "smaller" "$T/err" || { cat "$T/err"; fail "small target: not said"; }
[ "$(sha "$T/small.img")" = "$before" ] || fail "small target was written"
# A target holding a filesystem: refused without --force; --dry-run writes nothing.
truncate -s 16M "$T/fat.img"; mkfs.fat -F 16 "$T/fat.img" > /dev/null; before=$(sha "$T/fat.img")
expect_rc 1 "$FSIMG" restore "$T/a.fsimg" "$T/fat.img"
grep -q "use --force" "$T/err" || { cat "$T/err"; fail "filesystem target: --force not suggested"; }
expect_rc 0 "$FSIMG" restore --force --dry-run "$T/a.fsimg" "$T/fat.img"
[ "$(sha "$T/fat.img")" = "$before" ] || fail "refused or dry-run target was written"
expect_rc 0 "$FSIMG" restore --force --json "$T/a.fsimg" "$T/fat.img"
[ "$(json "$T/out" "j['wiped_signatures'] > 0")" = True ] || fail "--force: no signature wiped"
cmp "$T/src.img" "$T/fat.img" || fail "--force restore: not the source's bytes"
blkid -p -o value -s TYPE "$T/fat.img" | grep -qx ext4 || fail "blkid does not see ext4 after --force"
pass "restore: smaller target, existing filesystem, --dry-run, --force"

# A restore --force over a FAT volume that stops early (here: the stream
# ends halfway) leaves no filesystem at all, so the rerun needs no --force.
# libblkid still calls a FAT boot sector vfat after its "FAT16" string is
# zeroed (by the jump at byte 0 and 0x55AA at 510): all three must go.
truncate -s 16M "$T/fat2.img"; mkfs.fat -F 16 "$T/fat2.img" > /dev/null
head -c $(( $(stat -c %s "$T/a.fsimg") / 2 )) "$T/a.fsimg" > "$T/half.fsimg"
expect_rc 1 "$FSIMG" restore --force "$T/half.fsimg" "$T/fat2.img"
blkid -p "$T/fat2.img" >/dev/null 2>&1 && fail "a stopped restore over FAT left a signature: $(blkid -p "$T/fat2.img")"
expect_rc 0 "$FSIMG" restore "$T/a.fsimg" "$T/fat2.img"
cmp "$T/src.img" "$T/fat2.img" || fail "rerun over the wiped FAT: not the source's bytes"
pass "a stopped restore over FAT leaves no signature; the rerun needs no --force"

# --offset both ways: a filesystem 1 MiB into a file.
truncate -s 20M "$T/big.img"
expect_rc 0 "$FSIMG" restore --offset 1MiB "$T/a.fsimg" "$T/big.img"
expect_rc 0 "$FSIMG" save --offset 1MiB "$T/big.img" "$T/c.fsimg"
expect_rc 0 "$FSIMG" restore -C "$T/c.fsimg" "$T/back.img"
cmp "$T/src.img" "$T/back.img" || fail "--offset round trip differs"
pass "--offset on restore and save"

need_root
cp "$T/src.img" "$T/m.img"
loop=$(new_loop "$T/m.img")
mkdir "$T/mnt"
mount "$loop" "$T/mnt"; MOUNTS+=("$T/mnt")
expect_rc 1 "$FSIMG" save "$loop" "$T/d.fsimg"
grep -q "mounted" "$T/err" || { cat "$T/err"; fail "read-write mount: save not refused by name"; }
[ ! -e "$T/d.fsimg" ] || fail "refused save left OUT"
expect_rc 1 "$FSIMG" restore --force "$T/a.fsimg" "$loop"
grep -Eq "mounted|in use" "$T/err" || { cat "$T/err"; fail "mounted target: not refused by name"; }
expect_rc 1 "$FSIMG" restore --force "$T/a.fsimg" "$T/m.img"
umount "$T/mnt"
mount -o ro "$loop" "$T/mnt"
expect_rc 0 "$FSIMG" save "$loop" "$T/d.fsimg"
grep -q "read-only" "$T/out" || { cat "$T/out"; fail "read-only mount: no note"; }
umount "$T/mnt"
# The kernel changed the superblock when it mounted it: compare with the device.
expect_rc 0 "$FSIMG" verify "$T/d.fsimg" "$loop"
pass "mounted: save refused read-write, allowed read-only; restore refused even with --force"

# Ctrl-C while the workers compress (level 19, one thread: seconds of work):
# exit 130 and no partial image left. The data is the machine's own
# programs: random bytes are stored raw by zstd at any level, and 12 MiB of
# them took 0.6 s, finishing before the signal on an idle machine; 12 MiB of
# /usr/lib took 3.2 s. The signal goes once the save has made its output.
(set +o pipefail  # head closes the pipe once it has 12 MiB
 find /usr/lib -type f -size +100k 2>/dev/null | sort | head -300 | xargs -r cat 2>/dev/null | head -c 12M > "$T/tree/r.bin")
[ "$(stat -c %s "$T/tree/r.bin")" -eq $((12 << 20)) ] || fail "could not gather 12 MiB of /usr/lib for a slow save"
mke2fs -q -F -t ext4 -d "$T/tree" "$T/slow.img" 32M
"$FSIMG" save -q -T 1 -l 19 --frame-size 512K "$T/slow.img" "$T/slow.fsimg" 2>"$T/err" & pid=$!
for _ in $(seq 100); do [ -e "$T/slow.fsimg" ] && break; sleep 0.05; done
interrupt "$pid" 0.3 20 "the slow save (level 19, one thread)"
[ "$RC" -eq 130 ] || { cat "$T/err"; fail "save interrupted: exit $RC, expected 130"; }
[ ! -e "$T/slow.fsimg" ] || fail "interrupted save left its partial image"
grep -q "interrupted" "$T/err" || { cat "$T/err"; fail "interrupted save: not said"; }
pass "Ctrl-C during save: exit 130, partial image removed"

# A full disk: exit 1, the error said once with where it stopped, and no
# filesystem left on the target (its first 1 MiB is written last).
expect_rc 0 "$FSIMG" save -q -l 1 "$T/slow.img" "$T/slow.fsimg"
mkdir "$T/small"; mount -t tmpfs -o size=4m tmpfs "$T/small" || fail "cannot mount tmpfs"
MOUNTS+=("$T/small")
truncate -s 32M "$T/small/tgt"
expect_rc 1 "$FSIMG" restore --force "$T/slow.fsimg" "$T/small/tgt"
[ "$(grep -o "No space left on device" "$T/err" | wc -l)" -eq 1 ] || { cat "$T/err"; fail "full disk: ENOSPC not said exactly once"; }
grep -q "nothing was written past byte [0-9]* of 33554432.*run fsimg restore again$" "$T/err" || { cat "$T/err"; fail "full disk: where it stopped not said"; }
blkid -p "$T/small/tgt" >/dev/null 2>&1 && fail "a full-disk restore left a filesystem signature: $(blkid -p "$T/small/tgt")"
pass "full disk: exit 1, ENOSPC said once, no filesystem left"

# A full disk under restore --create: the 32 MiB FAT image's data past its
# first MiB fills the 1 MiB tmpfs, so a write of the head (written last)
# fails. The error names that write's offset and ENOSPC, says where it
# failed without claiming the whole image was written, and the file
# --create made is gone.
mkfs.fat -C "$T/fat32m.img" 32768 >/dev/null
head -c 1500000 /dev/urandom > "$T/f.bin"; mcopy -i "$T/fat32m.img" "$T/f.bin" ::F.BIN
expect_rc 0 "$FSIMG" save -q "$T/fat32m.img" "$T/fat32m.fsimg"
mkdir "$T/tiny"; mount -t tmpfs -o size=1M tmpfs "$T/tiny" || fail "cannot mount tmpfs"
MOUNTS+=("$T/tiny")
expect_rc 1 "$FSIMG" restore -C "$T/fat32m.fsimg" "$T/tiny/new.img"
at=$(sed -n 's/.*write [0-9]* bytes at \(0x[0-9a-f]*\): No space left on device.*/\1/p' "$T/err")
[ -n "$at" ] || { cat "$T/err"; fail "restore -C on a full tmpfs: the failed write's offset and ENOSPC not named"; }
grep -q "ENOSPC" "$T/err" || { cat "$T/err"; fail "restore -C on a full tmpfs: ENOSPC not said"; }
if [ $((at)) -lt $((1 << 20)) ]; then
  grep -q "this write was in the first 1 MiB, which is written last" "$T/err" || { cat "$T/err"; fail "a failed head write not said"; }
fi
past=$(sed -n 's/.*nothing was written past byte \([0-9]*\) of.*/\1/p' "$T/err")
[ -z "$past" ] || [ $((at)) -lt "$past" ] || { cat "$T/err"; fail "the write at $at failed, yet nothing past byte $past was written?"; }
grep -q "removed $T/tiny/new.img, which --create had made" "$T/err" || { cat "$T/err"; fail "the created file's removal not said"; }
[ ! -e "$T/tiny/new.img" ] || fail "restore -C left the file it created on a full tmpfs"
pass "restore -C on a full tmpfs: $(cut -c1-200 "$T/err")"

# A forged header whose image_bytes (2^63) no file can hold: restore -C
# names the field, not an --offset that was never given.
python3 "$SRC/tests/cli/fsimg_damage.py" forge "$T/huge.fsimg" image_bytes=9223372036854775808 end
expect_rc 1 "$FSIMG" restore -C "$T/huge.fsimg" "$T/huge.img"
grep -q "huge.fsimg: the header says image_bytes 9223372036854775808: no file can be that large" "$T/err" ||
  { cat "$T/err"; fail "image_bytes 2^63: the field and why not named"; }
! grep -q -- "--offset" "$T/err" || { cat "$T/err"; fail "image_bytes 2^63: blamed on --offset"; }
[ ! -e "$T/huge.img" ] || fail "image_bytes 2^63: a file was created"
python3 "$SRC/tests/cli/fsimg_damage.py" forge "$T/big.fsimg" image_bytes=4611686018427387904 end
expect_rc 2 "$FSIMG" restore -C --offset 4611686018427387904 "$T/big.fsimg" "$T/big.img"
grep -q -- "--offset 4611686018427387904 + the image's 4611686018427387904 bytes (image_bytes) is past" "$T/err" ||
  { cat "$T/err"; fail "--offset + image_bytes past 2^63 - 1: not said"; }
pass "restore -C: image_bytes 2^63 named as the header's, --offset blamed only when given"

# Ctrl-C while a restore is busy writing to a slow device: a loop device
# whose writes a cgroup of this test's throttles to 4 MB/s (an SD card's
# speed), so a restore of 12 MiB of data takes seconds. Exit 130, said, no
# filesystem signature left (the old one was wiped by --force, the new
# head is written last), and a rerun without --force restores it whole.
expect_rc 0 "$FSIMG" save -q -f -l 1 --frame-size 1M "$T/slow.img" "$T/slow1.fsimg"
truncate -s 32M "$T/sd.img"; mkfs.fat -F 16 "$T/sd.img" > /dev/null
sd=$(new_loop "$T/sd.img")
if cg=$(slow_cgroup card 4194304 "$(majmin "$sd")"); then
  RMDIRS+=("$cg")
  sh -c "$CGROUP_JOIN" sh "$cg" \
    "$FSIMG" restore -q --force "$T/slow1.fsimg" "$sd" 2>"$T/err" & pid=$!
  interrupt "$pid" 1.5 20 "the restore throttled to 4 MB/s"
  [ "$RC" -eq 130 ] || { cat "$T/err"; fail "restore interrupted while writing: exit $RC, expected 130"; }
  grep -q "interrupted; nothing was written past byte [0-9]* of 33554432.*run fsimg restore again$" "$T/err" ||
    { cat "$T/err"; fail "interrupted restore: where it stopped not said"; }
  blkid -p "$sd" >/dev/null 2>&1 && fail "an interrupted restore left a filesystem signature: $(blkid -p "$sd")"
  expect_rc 0 "$FSIMG" restore -q "$T/slow1.fsimg" "$sd"
  expect_rc 0 "$FSIMG" verify -q --unused "$T/slow1.fsimg" "$sd"
  e2fsck -fn "$sd" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck after the rerun"; }
  pass "Ctrl-C during a restore writing to a slow device: exit 130, no signature, a rerun restores"
else
  skip_part "no cgroup write throttle (blkio or io) to make a slow device"
fi
