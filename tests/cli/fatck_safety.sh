#!/usr/bin/env bash
# fatck as a careless admin meets it: -n opens the target read-only and
# changes nothing even where it could write; -a refuses a read-only target
# and a target in use (through another loop device) and changes nothing; -n
# on a target in use warns and checks read-only (as e2fsck -n does); wrong
# paths, a directory, a truncated image and a target that is no FAT volume
# are operational errors (8) that say what is wrong; usage errors are 16;
# --offset finds a volume inside a partitioned image; a loop device is
# checked and repaired like an image; Ctrl-C during the check says nothing
# was written, during the repair that the volume is consistent, and exits
# 130; what an interrupted repair leaves, fsck.fat and fatck -a finish.
. "$(dirname "$0")/lib.sh"
need mkfs.fat fsck.fat mcopy python3 strace
FATCK=$BUILD/cmd/fatck
CORRUPT=$SRC/tests/fatcorrupt.py

head -c 20000 /dev/urandom > "$T/A.BIN"
head -c 9000 /dev/urandom > "$T/B.BIN"
img=$T/card.img
mkfs.fat -F 32 -C "$img" 102400 >/dev/null
mcopy -i "$img" "$T/A.BIN" "$T/B.BIN" ::
python3 "$CORRUPT" "$img" cross-link /A.BIN /B.BIN >/dev/null
cp "$img" "$T/damaged.img"
before=$(sha "$img")

# -n: read-only open, no write, on a writable damaged image.
rc=0; traced -f -e trace=openat,pwrite64,pwritev,pwritev2,write -o "$T/strace" "$FATCK" -n "$img" >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "-n on a damaged image exited $rc"
grep -F "$img" "$T/strace" | grep -q O_RDONLY || fail "-n did not open the image read-only: $(grep -F "$img" "$T/strace")"
! grep -F "$img" "$T/strace" | grep -qE "O_RDWR|O_WRONLY" || fail "-n opened the image for writing"
! grep -qE "^[0-9]+ +(pwrite64|pwritev2?)\(" "$T/strace" || fail "-n made a positional write"
[ "$(sha "$img")" = "$before" ] || fail "-n changed the image"
pass "-n on a writable damaged image: opened O_RDONLY, no write, image unchanged, exit 4"
expect_rc 4 "$FATCK" "$img"
pass "no mode is -n: exit 4, image unchanged"

# Usage errors: 16, nothing touched.
for args in "" "-n -a $img" "--dry-run -a $img" "-r $img" "--offset x $img" "--bogus $img" "-a -y"; do
  expect_rc 16 "$FATCK" $args
done
expect_rc 0 "$FATCK" --help
grep -q -- "-a" "$T/out" || fail "--help does not list -a"
[ "$(sha "$img")" = "$before" ] || fail "a usage error changed the image"
pass "usage errors exit 16 (no target, -n with -a, -r, a bad --offset, an unknown option); --help exits 0"

# Wrong targets: 8, naming the path and the reason.
expect_rc 8 "$FATCK" -n "$T/nonexistent.img"; grep -q "No such file" "$T/err" || fail "missing file: $(cat "$T/err")"
expect_rc 8 "$FATCK" -a "$T"; grep -q "not a block device or a regular file" "$T/err" || fail "directory: $(cat "$T/err")"
head -c 1048576 /dev/urandom > "$T/random.img"
expect_rc 8 "$FATCK" -n "$T/random.img"; grep -q "boot sector" "$T/err" || fail "random bytes: $(cat "$T/err")"
head -c 40000000 "$T/damaged.img" > "$T/truncated.img"
expect_rc 8 "$FATCK" -a "$T/truncated.img"; grep -q "truncated" "$T/err" || fail "truncated image: $(cat "$T/err")"
[ "$(stat -c %s "$T/truncated.img")" -eq 40000000 ] || fail "the truncated image changed size"
pass "missing file, directory, random bytes, truncated image: exit 8 with a reason ($(cat "$T/err"))"

# A read-only file: -a refuses before any work; -n checks it.
cp "$T/damaged.img" "$T/ro.img"; chmod 0444 "$T/ro.img"
expect_rc 8 "$FATCK" -a "$T/ro.img"; grep -q "read-only" "$T/err" || fail "chmod 444: $(cat "$T/err")"
refusal=$(cat "$T/err")
expect_rc 8 "$FATCK" --dry-run "$T/ro.img"; [ "$(cat "$T/err")" = "$refusal" ] || fail "--dry-run: $(cat "$T/err")"
expect_rc 4 "$FATCK" -n "$T/ro.img"
[ "$(sha "$T/ro.img")" = "$before" ] || fail "a read-only file was changed"
pass "read-only file: -a and --dry-run refused ($refusal), -n checks it"

# --offset: the volume inside a partitioned image.
need sfdisk
truncate -s 120M "$T/disk.img"
echo "2048,,c" | sfdisk -q "$T/disk.img" >/dev/null
dd if="$T/damaged.img" of="$T/disk.img" bs=1M seek=1 conv=notrunc status=none
expect_rc 8 "$FATCK" -n "$T/disk.img"
expect_rc 4 "$FATCK" -n --offset 2048 "$T/disk.img"
expect_rc 1 "$FATCK" -a --offset 1MiB "$T/disk.img"
dd if="$T/disk.img" of="$T/part.img" bs=1M skip=1 count=100 status=none
expect_rc 0 fsck.fat -n "$T/part.img"
pass "--offset 2048 (sectors) and 1MiB (bytes) find the volume in a partitioned image; the repair stays in it"

need_root
# A read-only loop device: -a refuses; -n checks.
ro=$(loop_setup -r "$T/damaged.img")
expect_rc 8 "$FATCK" -a "$ro"; grep -q "read-only" "$T/err" || fail "losetup -r: $(cat "$T/err")"
expect_rc 4 "$FATCK" -n "$ro"
loop_detach "$ro"
[ "$(sha "$T/damaged.img")" = "$before" ] || fail "a read-only loop device was written"
# A writable loop device (O_DIRECT): checked and repaired like the image.
cp "$T/damaged.img" "$T/loop.img"
dev=$(new_loop "$T/loop.img")
expect_rc 4 "$FATCK" -n "$dev"
expect_rc 1 "$FATCK" -a "$dev"
expect_rc 0 "$FATCK" -n "$dev"
loop_detach "$dev"
expect_rc 0 fsck.fat -n "$T/loop.img"
pass "loop devices: read-only refused for -a; a writable one checked and repaired (fsck.fat agrees)"

# In use: an ext4 image mounted through one loop device, fatck on another.
need mkfs.ext4
truncate -s 64M "$T/ext.img"; mkfs.ext4 -q -F "$T/ext.img"
l0=$(new_loop "$T/ext.img"); mkdir "$T/mnt"; mount "$l0" "$T/mnt" || skip "cannot mount ext4"
MOUNTS+=("$T/mnt")
l1=$(new_loop "$T/ext.img")
expect_rc 8 "$FATCK" -a "$l1"; grep -q "mounted on $T/mnt" "$T/err" || fail "in use, -a: $(cat "$T/err")"
refusal=$(cat "$T/err")
expect_rc 8 "$FATCK" -a --force "$l1"; grep -q "mounted on" "$T/err" || fail "-f overrode the in-use refusal"
expect_rc 8 "$FATCK" --dry-run "$l1"; [ "$(cat "$T/err")" = "$refusal" ] || fail "in use, --dry-run: $(cat "$T/err")"
expect_rc 8 "$FATCK" -n "$l1"
grep -q "warning: $l1 is mounted on $T/mnt" "$T/err" || fail "in use, -n: no warning: $(cat "$T/err")"
grep -q "checking it read-only" "$T/err" || fail "in use, -n: $(cat "$T/err")"
umount "$T/mnt"
pass "in use through another loop device: -a, -a -f and --dry-run refused ($refusal); -n warns and checks read-only"

# Ctrl-C. A 2 TiB volume with 4,000,000 lost clusters, which the repair frees
# in many batches. FSIO_FAULT=readsigint:N and sigint:N raise SIGINT as the
# Nth read or write is queued, so the Ctrl-C lands in the check (nothing
# written) and in the repair (a safe point) however fast this machine is.
need mkfs.fat
big=$T/big.img
truncate -s 2T "$big"; "$MKFAT" -q "$big" || skip "cannot make a 2 TiB image here"
python3 - "$big" <<'PY'
import array, struct, sys
f = open(sys.argv[1], 'r+b')
bs = f.read(512)
ss, res = struct.unpack_from('<H', bs, 11)[0], struct.unpack_from('<H', bs, 14)[0]
fatsz = struct.unpack_from('<I', bs, 36)[0]
a = array.array('I', range(1001, 1000 + 4000000)); a.append(0x0FFFFFFF)
for c in range(2):
    f.seek((res + c * fatsz) * ss + 4 * 1000); f.write(a.tobytes())
PY
head -c 600000000 "$big" | sha256sum > "$T/big.sum"
rc=0; FSIO_FAULT=readsigint:3 "$FATCK" -a "$big" >/dev/null 2>"$T/int.err" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT in the check: exit $rc: $(cat "$T/int.err")"
grep -q "interrupted during the check; nothing was written" "$T/int.err" || fail "SIGINT in the check: $(cat "$T/int.err")"
head -c 600000000 "$big" | sha256sum | cmp -s - "$T/big.sum" || fail "interrupted check changed the image"
rc=0; FSIO_FAULT=sigint:3 "$FATCK" -a "$big" >/dev/null 2>"$T/int.err" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT in the repair: exit $rc: $(cat "$T/int.err")"
grep -q "interrupted at a safe point between two batches of step 'free unowned clusters'" "$T/int.err" ||
  fail "SIGINT in the repair: $(cat "$T/int.err")"
msg=$(sed -n 's/^fatck: [^:]*: \(interrupted at\)/\1/p' "$T/int.err")
expect_rc 4 "$FATCK" -n "$big"
grep -q "unused clusters" "$T/out" || fail "after an interrupted repair: $(cat "$T/out")"
expect_rc 1 "$FATCK" -a "$big"
expect_rc 0 fsck.fat -n "$big"
pass "SIGINT: exit 130; in the check nothing written, in the repair a safe point ($msg), finished by fatck -a, fsck.fat clean"
