#!/usr/bin/env bash
# mkfat as a careless admin meets it (issue 9): a failed -C leaves nothing
# behind (1 PiB, a full filesystem), -C never replaces a file or follows a
# symlink; Ctrl-C in the middle of re-formatting says what is left and exits
# 130; FSIO_FAULT is announced and the error names the injected write;
# read-only targets are refused before any work (also by --dry-run); and
# with io_uring refused by the kernel and stdin closed, the format is clean.
. "$(dirname "$0")/lib.sh"
need fsck.fat blkid python3

# -C: a size the filesystem cannot hold.
expect_rc 1 "$MKFAT" -C "$T/huge.img" 1P
grep -q "huge.img" "$T/err" || fail "the message does not name the image: $(cat "$T/err")"
[ ! -e "$T/huge.img" ] || fail "mkfat -C 1P left $T/huge.img behind"
msg=$(cat "$T/err")
expect_rc 0 "$MKFAT" -C "$T/huge.img" 1M   # the retry is not blocked
pass "-C 1P fails naming the image and leaves nothing: $msg"

# -C never replaces: an existing file, a symlink to one, a dangling symlink.
echo keep > "$T/there"; ln -s "$T/there" "$T/link"; ln -s "$T/nowhere" "$T/dangling"
for t in there link dangling; do
  expect_rc 1 "$MKFAT" -C "$T/$t" 1M
  grep -q "already exists" "$T/err" || fail "-C $t: $(cat "$T/err")"
done
[ "$(cat "$T/there")" = keep ] || fail "-C changed an existing file"
[ ! -e "$T/nowhere" ] || fail "-C followed a dangling symlink and created its target"
pass "-C refuses an existing file and any symlink (O_EXCL), dangling or not"

need_root
# -C on a full filesystem: the metadata writes fail with ENOSPC.
mkdir "$T/small"; mount -t tmpfs -o size=1m tmpfs "$T/small" || skip "cannot mount tmpfs"
MOUNTS+=("$T/small")
expect_rc 1 "$MKFAT" -C "$T/small/card.img" 1G
grep -q "card.img" "$T/err" || fail "ENOSPC: the message does not name the image: $(cat "$T/err")"
grep -q "No space left on device" "$T/err" || fail "ENOSPC: $(cat "$T/err")"
grep -q "removed" "$T/err" || fail "ENOSPC: the message does not say the image was removed: $(cat "$T/err")"
[ -z "$(ls -A "$T/small")" ] || fail "ENOSPC left $(ls "$T/small")"
pass "-C on a full filesystem: $(cat "$T/err")"

# Read-only targets: refused before any work, --dry-run says the same.
truncate -s 64M "$T/ro.img"
ro=$(loop_setup -r "$T/ro.img")
for dry in "" --dry-run; do
  expect_rc 1 "$MKFAT" $dry "$ro"
  grep -q "read-only" "$T/err" || fail "losetup -r $dry: $(cat "$T/err")"
done
[ "$(stat -c %b "$T/ro.img")" -eq 0 ] || fail "a read-only loop device was written"
cp --sparse=always "$T/ro.img" "$T/ro444.img"; chmod 0444 "$T/ro444.img"
expect_rc 1 "$MKFAT" --dry-run "$T/ro444.img"
grep -q "read-only file (mode 0444)" "$T/err" || fail "chmod 444: $(cat "$T/err")"
mkdir "$T/rofs"; mount -t tmpfs -o size=2m tmpfs "$T/rofs"; MOUNTS+=("$T/rofs")
truncate -s 1M "$T/rofs/f.img"; mount -o remount,ro "$T/rofs"
expect_rc 1 "$MKFAT" "$T/rofs/f.img"
grep -q "Read-only file system" "$T/err" || fail "read-only mount: $(cat "$T/err")"
pass "read-only device, file and filesystem refused before any work: $(cat "$T/err")"

# FSIO_FAULT is announced, and in crash mode the error is the injected write's:
# writes 1 and 2 zero the boot sector and its FAT32 backup, write 3 is the
# first of phase 2's 1 MiB writes from byte 0 (the later ones fail too, as
# after a power cut, and must not be the one reported).
truncate -s 2G "$T/f.img"
expect_rc 1 env FSIO_FAULT=fail:3 "$MKFAT" -F 32 -s 1 "$T/f.img"
head -1 "$T/err" | grep -q "^mkfat: note: FSIO_FAULT=fail:3 is set: test fault injection is on" ||
  fail "the fault is not announced first: $(cat "$T/err")"
grep -q "write [0-9]* bytes at 0x0: Input/output error" "$T/err" || fail "not the injected write: $(cat "$T/err")"
pass "FSIO_FAULT announced; the error names the injected write: $(tail -1 "$T/err")"

# Ctrl-C while re-formatting a volume that holds a file: phase 2 of a
# 128 GiB FAT32 at one sector per cluster writes 2 GiB of FAT.
need mcopy
truncate -s 128G "$T/big.img"
expect_rc 0 "$MKFAT" "$T/big.img"
echo precious > "$T/file"; mcopy -i "$T/big.img" "$T/file" ::FILE.TXT
"$MKFAT" -I -F 32 -s 1 "$T/big.img" >"$T/int.out" 2>"$T/int.err" &
pid=$!
# Once the old boot sector reads as zeros, phase 1 is done: interrupt phase 2.
for _ in $(seq 400); do
  [ "$(od -An -tx1 -j510 -N2 "$T/big.img" | tr -d ' ')" = 0000 ] && break
  sleep 0.02
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "Ctrl-C during mkfat -I: exit $rc: $(cat "$T/int.err")"
grep -q "old boot sector was erased" "$T/int.err" || fail "the message hides the state: $(cat "$T/int.err")"
grep -q "no usable filesystem" "$T/int.err" || fail "$(cat "$T/int.err")"
grep -q "format it again" "$T/int.err" || fail "$(cat "$T/int.err")"
blkid -p "$T/big.img" >/dev/null 2>&1 && fail "a volume is still recognised after the interrupt: $(blkid -p "$T/big.img")"
pass "Ctrl-C mid-format exits 130: $(cat "$T/int.err")"
expect_rc 0 "$MKFAT" -I -F 32 -s 8 "$T/big.img"
expect_rc 0 fsck.fat -n "$T/big.img"
pass "the re-run finishes and fsck.fat accepts the volume"
rm -f "$T/big.img"

# Ctrl-C during -C: the image is removed, and the exit is still 130.
"$MKFAT" -C -F 32 -s 1 "$T/new.img" 128G >"$T/int.out" 2>"$T/int.err" &
pid=$!
for _ in $(seq 400); do [ "$(stat -c %b "$T/new.img" 2>/dev/null || echo 0)" -gt 64 ] && break; sleep 0.02; done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "Ctrl-C during -C: exit $rc: $(cat "$T/int.err")"
grep -q "removed" "$T/int.err" || fail "$(cat "$T/int.err")"
[ ! -e "$T/new.img" ] || fail "Ctrl-C during -C left the image behind"
pass "Ctrl-C during -C: $(cat "$T/int.err")"

# io_uring refused (seccomp, kernel.io_uring_disabled) with stdin closed: the
# image is the process's descriptor 0; the fallback to psync must not close it.
need strace
truncate -s 64M "$T/r.img"
expect_rc 0 traced -f -o /dev/null -e inject=io_uring_setup:error=ENOSYS "$MKFAT" --json "$T/r.img" <&-
[ "$(json "$T/out" 'j["engine"]')" = psync ] || fail "engine: $(cat "$T/out")"
expect_rc 0 fsck.fat -n "$T/r.img"
pass "io_uring_setup refused (ENOSYS), stdin closed: formatted on psync, fsck.fat clean"
