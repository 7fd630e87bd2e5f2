#!/usr/bin/env bash
# fatfill as a careless admin meets it. Every refusal has a clear message
# and the right exit code (2 for what was typed wrong, 1 for the target),
# --dry-run meets the same one, and the target is byte-identical after:
# wrong paths and non-FAT targets, odd and huge sizes and counts, a name
# that exists, a dirty volume, FAT copies that differ, too little space and
# a full volume, a read-only device or file, a target in use through another
# loop device. FSIO_FAULT is announced. Ctrl-C halfway exits 130 and leaves
# the files it finished, and a volume fsck.fat finds clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fatfill_lib.sh"
need fsck.fat mkfs.fat mcopy mdir python3

# refused RC GREP TARGET ARGS...: exit RC naming GREP, with and without
# --dry-run, and TARGET unchanged.
refused() {
  local want=$1 says=$2 target=$3; shift 3
  local before; before=$(sha "$target")
  for dry in "" --dry-run; do
    expect_rc "$want" "$FATFILL" $dry "$@"
    grep -q -- "$says" "$T/err" || fail "fatfill $dry $*: expected '$says', got: $(cat "$T/err")"
    [ ! -s "$T/out" ] || fail "fatfill $dry $*: a refusal printed a report: $(cat "$T/out")"
  done
  [ "$(sha "$target")" = "$before" ] || fail "fatfill $*: the refusal changed $target"
  echo "  $(head -1 "$T/err")"
}

img=$T/card.img
truncate -s 64M "$img"; mkfs.fat -F 16 "$img" >/dev/null
echo hello > "$T/hello"; mcopy -i "$img" "$T/hello" ::HELLO.TXT
mmd -i "$img" ::DIR

# Wrong paths and targets.
refused 1 "No such file or directory" "$img" --size 1M "$T/nowhere.img"
refused 1 "not a block device or a regular file" "$img" --size 1M "$T"
truncate -s 64M "$T/ext.img"; mkfs.ext4 -q -F "$T/ext.img" 2>/dev/null || truncate -s 1M "$T/ext.img"
refused 1 "not a FAT volume" "$T/ext.img" --size 1M "$T/ext.img"
refused 2 "is a file, not a directory" "$img" --size 1 --path /HELLO.TXT/x "$img"
refused 2 "'.' and '..' are not supported" "$img" --size 1 --dir /DIR/../x "$img"
refused 2 "names no file" "$img" --size 1 --path /DIR/ "$img"
refused 2 "cannot be in a FAT name" "$img" --size 1 --path '/a?b' "$img"
refused 2 "does not go with --count" "$img" --size 1 --path /a --count 2 "$img"
refused 2 "need a number in their names" "$img" --size 1 --count 2 --name SAME.BIN "$img"
refused 2 "size is required" "$img" "$img"
pass "wrong paths and targets"

# Odd and huge numbers: refused before anything is multiplied.
refused 2 "at most 4 GiB - 1" "$img" --size 4G "$img"
refused 2 "too large" "$img" --size 17179869184P "$img"
refused 2 "size '-1'" "$img" --size -1 "$img"
refused 2 "size '1.5M'" "$img" --size 1.5M "$img"
refused 2 "--count '65537': expected a whole number from 1 to 65536" "$img" --size 1 --count 65537 "$img"
refused 2 "--count '0'" "$img" --size 1 --count 0 "$img"
refused 2 "--count '-3'" "$img" --size 1 --count -3 "$img"
refused 2 "--count '18446744073709551617'" "$img" --size 1 --count 18446744073709551617 "$img"
refused 2 "--start" "$img" --size 1 --start 99999999999999999999 "$img"
refused 2 "--mirror 'fast'" "$img" --size 1 --mirror fast "$img"
refused 2 "--offset 1G: at or beyond the end" "$img" --size 1 --offset 1G "$img"
# 4 GiB - 1 in 2 KiB clusters is 2097152 clusters; 65536 of them overflow nothing.
refused 1 "2 files of 2097152 clusters need 4194304 clusters (8589934592 bytes), but only" "$img" \
  --size 4294967295 --count 2 "$img"
refused 1 "65536 files of 2097152 clusters need 137438953472 clusters" "$img" --size 4294967295 --count 65536 --dir /d "$img"
pass "odd and huge sizes and counts"

# The volume's state.
refused 1 "'/hello.txt' exists as 'HELLO.TXT' (--force replaces it)" "$img" --size 1 --path /hello.txt "$img"
refused 1 "is a directory; --force replaces files only" "$img" --size 1 --path /DIR --force "$img"
cp "$img" "$T/dirty.img"; python3 "$SRC/tests/fatcorrupt.py" "$T/dirty.img" dirty >/dev/null
refused 1 "marked dirty" "$T/dirty.img" --size 1 "$T/dirty.img"
cp "$img" "$T/differ.img"; python3 "$SRC/tests/fatcorrupt.py" "$T/differ.img" copies-differ >/dev/null
refused 1 "FAT copy 1 differs from copy 0.*fatck" "$T/differ.img" --size 1 "$T/differ.img"
refused 1 "but only" "$img" --size 40M --count 2 "$img"
pass "an existing name, a directory under --force, dirty, copies differ, too little space"

# --force on a file cross-linked with another (fatcorrupt: /SUB/B.BIN's
# chain runs into /A.BIN's last cluster): freeing either chain would give
# away a cluster the other still uses. fsck.fat confirms the damage first.
x=$T/xlink.img
truncate -s 16M "$x"; mkfs.fat -F 16 -s 1 "$x" >/dev/null
head -c 3000 /dev/urandom > "$T/a"; head -c 2500 /dev/urandom > "$T/b"
mcopy -i "$x" "$T/a" ::A.BIN; mmd -i "$x" ::SUB; mcopy -i "$x" "$T/b" ::SUB/B.BIN
python3 "$SRC/tests/fatcorrupt.py" "$x" cross-link /A.BIN /SUB/B.BIN >/dev/null
rc=0; fsck.fat -n "$x" >"$T/fsck" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "share clusters" "$T/fsck" || fail "fsck.fat -n does not see the cross-link: $(cat "$T/fsck")"
refused 1 "'/A.BIN' is cross-linked with '/SUB/B.BIN' (both chains hold cluster [0-9]*).*nothing was written.*fatck" \
  "$x" --force --size 1 --path /A.BIN "$x"
refused 1 "'/SUB/B.BIN' is cross-linked with '/A.BIN'" "$x" --force --size 1 --path /SUB/B.BIN "$x"
refused 1 "is cross-linked with" "$x" --force --size 100 --dir /SUB --name B.BIN "$x"
pass "--force on a cross-linked file: refused, naming both, nothing written"

# A full volume: one file takes every free cluster, then nothing more fits
# (but a file of 0 bytes still does).
cp "$img" "$T/full.img"
expect_rc 0 "$FATFILL" --dry-run --json --size 1 "$T/full.img"
free=$(json "$T/out" 'j["free_clusters_before"]'); cb=$(json "$T/out" 'j["geometry"]["cluster_bytes"]')
expect_rc 0 "$FATFILL" --no-zero --path /ALL.BIN --size $((free * cb)) "$T/full.img"
refused 1 "1 file of 1 cluster needs 1 cluster (2048 bytes), but only 0 clusters are free" "$T/full.img" --size 1 --path /ONE.BIN "$T/full.img"
expect_rc 0 "$FATFILL" --path /EMPTY.BIN --size 0 "$T/full.img"
fsck_clean "$T/full.img" || fail "the full volume"
pass "a full volume: a file of $((free * cb)) bytes took every cluster; then only 0-byte files fit"

# FSIO_FAULT is announced first; the error names the injected write and
# what was complete.
cp "$img" "$T/fault.img"
expect_rc 1 env FSIO_FAULT=fail:2 "$FATFILL" --size 4K --count 3 "$T/fault.img"
head -1 "$T/err" | grep -q "^fatfill: note: FSIO_FAULT=fail:2 is set: test fault injection is on" ||
  fail "the fault is not announced first: $(cat "$T/err")"
grep -q "write [0-9]* bytes at 0x[0-9a-f]*: Input/output error (0 of 3 files were complete before it" "$T/err" ||
  fail "not the injected write: $(cat "$T/err")"
pass "FSIO_FAULT: $(tail -1 "$T/err")"

need_root
# Read-only: a losetup -r device, a file without write permission.
ro=$(loop_setup -r "$img")
refused 1 "read-only" "$img" --size 1 "$ro"
cp "$img" "$T/ro444.img"; chmod 0444 "$T/ro444.img"
refused 1 "read-only file (mode 0444)" "$T/ro444.img" --size 1 "$T/ro444.img"
pass "read-only device and file"

# In use through another loop device: the image is mounted through one loop
# device and fatfill is pointed at a second one over it.
if mkfs.ext4 -q -F "$T/ext.img" 2>/dev/null; then
  mkdir -p "$T/mnt"; l0=$(new_loop "$T/ext.img")
  if mount "$l0" "$T/mnt" 2>/dev/null; then
    MOUNTS+=("$T/mnt")
    l1=$(new_loop "$T/ext.img")
    refused 1 "mounted on $T/mnt through $l0" "$T/ext.img" --size 1 "$l1"
    refused 1 "mounted on $T/mnt" "$T/ext.img" --size 1 "$T/ext.img"
    umount "$T/mnt"; MOUNTS=()
    pass "in use through another loop device"
  else skip_part "cannot mount ext4 on a loop device"; fi
else skip_part "no mkfs.ext4"; fi

# Ctrl-C halfway through a --sync run: exit 130 between two files, the files
# before it whole, nothing of the next one. FSIO_FAULT=sigint:30 raises
# SIGINT as the 30th write is queued, in the middle of the run however fast
# this machine is.
truncate -s 1G "$T/big.img"; mkfs.fat -F 32 "$T/big.img" >/dev/null
rc=0; FSIO_FAULT=sigint:30 "$FATFILL" --sync --count 20 --size 8M "$T/big.img" >"$T/int.out" 2>"$T/int.err" || rc=$?
[ "$rc" -eq 130 ] || fail "Ctrl-C: exit $rc: $(cat "$T/int.err")"
done=$(sed -n 's/.*interrupted after \([0-9]*\) of 20 files; those are complete and the volume is consistent.*/\1/p' "$T/int.err")
[ -n "$done" ] || fail "Ctrl-C: $(cat "$T/int.err")"
[ "$done" -gt 0 ] && [ "$done" -lt 20 ] || fail "Ctrl-C at the 30th write: $done of 20 files complete"
fsck_clean "$T/big.img" || fail "Ctrl-C left a volume fsck.fat does not find clean"
zeros_of "$T/big.img" "/FILL$(printf %04d $((done - 1))).BIN" $((8 << 20)) || fail "the last complete file"
mdir -b -i "$T/big.img" "::/FILL$(printf %04d "$done").BIN" >/dev/null 2>&1 && fail "file $done is there after Ctrl-C"
[ "$(mdir -b -i "$T/big.img" :: | grep -c FILL)" -eq "$done" ] || fail "not $done files after Ctrl-C"
pass "Ctrl-C: $(grep interrupted "$T/int.err")"
