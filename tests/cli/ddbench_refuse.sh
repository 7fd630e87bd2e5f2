#!/usr/bin/env bash
# ddbench never destroys data by surprise: writing over a filesystem or a
# partition table needs --force, a mounted target is refused even with
# --force (the device, and the image behind a mounted loop device), and
# every refusal leaves the target byte-identical. Reading is always allowed.
. "$(dirname "$0")/lib.sh"
need mkfs.ext4 blkid python3

unchanged() { [ "$(sha "$1")" = "$2" ] || fail "$3: the target was modified"; }

truncate -s 64M "$T/ext.img"; mkfs.ext4 -q -F -L keepme "$T/ext.img"
before=$(sha "$T/ext.img")
for rw in write randwrite; do
  expect_rc 1 "$DDBENCH" --rw $rw "$T/ext.img"
  grep -q ext4 "$T/err" || fail "refusal does not name ext4: $(cat "$T/err")"
  grep -q -- --force "$T/err" || fail "refusal does not mention --force: $(cat "$T/err")"
  unchanged "$T/ext.img" "$before" "$rw refusal"
done
expect_rc 1 "$DDBENCH" --rw write --verify --create 128M "$T/ext.img"
unchanged "$T/ext.img" "$before" "--create over ext4"
pass "writes over ext4 refused: $(cat "$T/err")"

expect_rc 0 "$DDBENCH" --rw randread --json "$T/ext.img"
unchanged "$T/ext.img" "$before" "read"
pass "reading a filesystem is allowed and changes nothing"

# A DOS partition table, written by hand (one Linux partition from LBA 2048).
truncate -s 64M "$T/pt.img"
python3 - "$T/pt.img" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(0, 2); sectors = f.tell() // 512
    entry = struct.pack("<B3sB3sII", 0, b"\x00\x02\x00", 0x83, b"\xff\xff\xff", 2048, sectors - 2048)
    f.seek(440); f.write(struct.pack("<I", 0x1234abcd) + b"\0\0" + entry)
    f.seek(510); f.write(b"\x55\xaa")
PY
blkid -p "$T/pt.img" | grep -q 'PTTYPE="dos"' || fail "the hand-made MBR is not seen by blkid"
pbefore=$(sha "$T/pt.img")
expect_rc 1 "$DDBENCH" --rw write "$T/pt.img"
grep -qi partition "$T/err" || fail "refusal does not name the partition table: $(cat "$T/err")"
unchanged "$T/pt.img" "$pbefore" "partition table refusal"
pass "writes over a partition table refused"

expect_rc 0 "$DDBENCH" --rw write --force --bs 1M --json "$T/pt.img"
[ "$(json "$T/out" io)" -eq $((64 << 20)) ] || fail "--force wrote $(json "$T/out" io)"
blkid -p "$T/pt.img" >/dev/null 2>&1 && fail "a signature survived a full --force write: $(blkid -p "$T/pt.img")"
pass "--force writes the whole target"

# Text someone wrote is not a disk image (issue 11): a write over a script,
# a config or any text file is refused unless --force, naming what it looks
# like; a fio job file is never a target at all; reading text is fine.
printf '#!/bin/sh\necho hello\n' >"$T/run.sh"
printf '# settings\nthreads = 4\n' >"$T/app.conf"
printf 'Notes from the last benchmark, kept by hand.\n' >"$T/notes.txt"
for f in run.sh:"a script (#!/bin/sh)" app.conf:"a config file" notes.txt:"a text file"; do
  file=$T/${f%%:*} kind=${f#*:}
  keep=$(sha "$file")
  expect_rc 1 "$DDBENCH" --rw write --bs 4K --buffered "$file"
  grep -qF "looks like $kind" "$T/err" || fail "${f%%:*}: $(cat "$T/err")"
  grep -q -- "--force" "$T/err" || fail "${f%%:*}: no --force hint: $(cat "$T/err")"
  unchanged "$file" "$keep" "${f%%:*}"
  msg=$(cat "$T/err")
  expect_rc 0 "$DDBENCH" --rw read --bs 4K --buffered "$file"
done
pass "writes over text refused, reads allowed: $msg"
expect_rc 0 "$DDBENCH" --rw write --bs 4K --buffered --force "$T/run.sh"
[ "$(od -An -c -N2 "$T/run.sh" | tr -d ' ')" != '#!' ] || fail "--force did not write the script"
pass "--force writes over a script"

before=$(sha "$T/ext.img")
printf '[global]\nrw=read\n[job]\nfilename=%s\n' "$T/ext.img" >"$T/job.fio"
jbefore=$(sha "$T/job.fio")
expect_rc 0 "$DDBENCH" --rw write --force "$T/job.fio"   # runs the job: its section reads ext.img
unchanged "$T/job.fio" "$jbefore" "a job file given with --rw write --force"
unchanged "$T/ext.img" "$before" "the job file's read"
pass "ddbench --rw write --force job.fio runs the job file and writes neither it nor its (read) target"

need_root
loop=$(new_loop "$T/ext.img")
mkdir -p "$T/mnt"
mount "$loop" "$T/mnt" || skip "cannot mount ext4 on $loop"
MOUNTS+=("$T/mnt")
expect_rc 1 "$DDBENCH" --rw write --force "$loop"
grep -qi mounted "$T/err" || fail "mounted device: $(cat "$T/err")"
expect_rc 1 "$DDBENCH" --rw write --force "$T/ext.img"
grep -qi mounted "$T/err" || fail "backing file of a mounted loop: $(cat "$T/err")"
expect_rc 1 "$DDBENCH" --rw randwrite --force --create 1G "$T/ext.img"
msg=$(cat "$T/err")
[ "$(stat -c %s "$T/ext.img")" -eq $((64 << 20)) ] || fail "--create grew a mounted image"
umount "$T/mnt"; MOUNTS=()
# Mounting changes the image itself, so judge by what a write would have left:
# ext4 never touches its first 1024 bytes, a ddbench write stamps them.
[ "$(head -c 1024 "$T/ext.img" | tr -d '\0' | wc -c)" -eq 0 ] || fail "the mounted image was written"
if command -v e2fsck >/dev/null; then expect_rc 0 e2fsck -fn "$T/ext.img"; fi
pass "a mounted target is refused even with --force: $msg"

