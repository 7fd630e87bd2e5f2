#!/usr/bin/env bash
# Crash safety of mkext4 -d: fail, then tear, every write of a format and
# fill of a small tree in turn (FSIO_FAULT; after the fault every write
# fails, as after a power cut). The primary superblock is written last,
# after the tree's data and metadata, so whatever the crash point the
# target holds either no filesystem blkid recognises or a complete one
# e2fsck -fn finds clean.
. "$(dirname "$0")/lib.sh"
need e2fsck blkid
MKEXT4=$BUILD/cmd/mkext4
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$T/src/d/e" "$T/src/many"
for i in $(seq 1 60); do printf 'file %d\n' "$i" > "$T/src/many/f$i"; done
head -c 200000 /dev/urandom > "$T/src/d/e/blob"
ln "$T/src/d/e/blob" "$T/src/hard"; ln -s d/e/blob "$T/src/link"; mkfifo "$T/src/fifo"

fails() {  # fails N: does the run fail at write N?
  rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
  ! FSIO_FAULT=fail:$1 "$MKEXT4" -q -F -d "$T/src" "$T/x.img" >/dev/null 2>&1
}
lo=0 hi=1
while fails "$hi"; do lo=$hi; hi=$((hi * 2)); done
while [ $((hi - lo)) -gt 1 ]; do mid=$(((lo + hi) / 2)); if fails "$mid"; then lo=$mid; else hi=$mid; fi; done
writes=$lo
[ "$writes" -gt 10 ] || fail "only $writes writes counted"
valid=0 none=0
for kind in fail tear; do
  for n in $(crash_points 1 $((writes + 1))); do
    rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
    rc=0; FSIO_FAULT=$kind:$n "$MKEXT4" -q -F -d "$T/src" "$T/x.img" >/dev/null 2>"$T/err" || rc=$?
    if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkext4 -d said success over a failed write"; fi
    if [ "$n" -gt "$writes" ] && [ "$rc" -ne 0 ]; then cat "$T/err"; fail "$kind:$n: a fault past the end failed"; fi
    if blkid -p "$T/x.img" 2>/dev/null | grep -q 'TYPE="ext4"'; then
      e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/err" "$T/fsck"; fail "$kind:$n left an ext4 e2fsck rejects"; }
      valid=$((valid + 1))
    else
      none=$((none + 1))
    fi
  done
done
[ "$valid" -ge 2 ] || fail "no crash point left a filesystem: the sweep did not reach the end"
pass "mkext4 -d: $((valid + none)) crash points over $writes writes; $valid left a clean ext4, the rest none"
