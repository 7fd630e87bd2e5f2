#!/usr/bin/env bash
# Crash safety of mkext4 -d: fail, then tear, every write of a format and
# fill of a small tree in turn (FSIO_FAULT; after the fault every write
# fails, as after a power cut). The primary superblock is written last,
# after the tree's data and metadata, so whatever the crash point the
# target holds either no filesystem blkid recognises or a complete one
# e2fsck -fn finds clean.
. "$(dirname "$0")/lib.sh"
need e2fsck blkid debugfs
MKEXT4=$BUILD/cmd/mkext4
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$T/src/d/e" "$T/src/many"
for i in $(seq 1 60); do printf 'file %d\n' "$i" > "$T/src/many/f$i"; done
head -c 200000 /dev/urandom > "$T/src/d/e/blob"
ln "$T/src/d/e/blob" "$T/src/hard"; ln -s d/e/blob "$T/src/link"; mkfifo "$T/src/fifo"

fails() {  # fails N [ENV...]: does the run, with ENV set, fail at write N?
  local n=$1; shift
  rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
  ! env "$@" FSIO_FAULT=fail:$n "$MKEXT4" -q -F -d "$T/src" "$T/x.img" >/dev/null 2>&1
}
# sweep [ENV...]: every crash point, with ENV set for mkext4. Where blkid
# sees no ext4, e2fsck (which also searches the backup superblocks) must
# find no superblock either, or the backups the commit writes after
# everything they describe, and repair their filesystem with the tree whole.
sweep() {
  local valid=0 none=0 backup=0 n kind rc writes
  writes=$(count_writes fails "$@")
  [ "$writes" -gt 10 ] || fail "$*: only $writes writes counted"
  for kind in fail tear; do
    for n in $(crash_points 1 $((writes + 1))); do
      rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
      rc=0; env "$@" FSIO_FAULT=$kind:$n "$MKEXT4" -q -F -d "$T/src" "$T/x.img" >/dev/null 2>"$T/err" || rc=$?
      if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$*: $kind:$n: mkext4 -d said success over a failed write"; fi
      if [ "$n" -gt "$writes" ] && [ "$rc" -ne 0 ]; then cat "$T/err"; fail "$*: $kind:$n: a fault past the end failed"; fi
      if blkid -p "$T/x.img" 2>/dev/null | grep -q 'TYPE="ext4"'; then
        e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/err" "$T/fsck"; fail "$*: $kind:$n left an ext4 e2fsck rejects"; }
        valid=$((valid + 1))
      else
        e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || true
        if grep -q "Bad magic number in super-block while trying to open" "$T/fsck"; then
          none=$((none + 1))
        elif grep -q "trying backup blocks" "$T/fsck"; then
          # The backups, written after everything they describe: the groups
          # mkext4 left uninitialised are e2fsck's to fix (libext2fs
          # initialises every group when it opens a backup), and the tree is there.
          e2fsck -fy "$T/x.img" >"$T/fix" 2>&1 || true
          e2fsck -fn "$T/x.img" >"$T/fsck2" 2>&1 || { cat "$T/fsck" "$T/fix" "$T/fsck2"; fail "$*: $kind:$n: e2fsck -fy does not repair the filesystem of the backup superblocks"; }
          [ "$(debugfs -R 'cat /many/f60' "$T/x.img" 2>/dev/null)" = "file 60" ] || fail "$*: $kind:$n: the repaired filesystem lost /many/f60"
          backup=$((backup + 1))
        else
          cat "$T/err" "$T/fsck"; fail "$*: $kind:$n: no ext4 for blkid, but e2fsck neither finds none nor a backup"
        fi
      fi
    done
  done
  [ "$valid" -ge 2 ] || fail "$*: no crash point left a filesystem: the sweep did not reach the end"
  pass "mkext4 -d ${*:-(default cache)}: $((valid + none + backup)) crash points over $writes writes; $valid left a" \
    "clean ext4, $none no superblock at all, $backup only the backups (e2fsck -fy repairs it, the tree intact)"
}
sweep
# A metadata cache of 8 KiB: the fill writes its metadata out early, many
# times (mkext4 -d may: nothing on the target is a filesystem until the
# commit's superblocks). And data batches of 64 KiB, less than the tree's
# 200 KB of data: two threads read the files, and their batches reach the
# writes in whichever order they come.
sweep FSIO_META_CACHE=8K FSIO_DATA_BATCH=64K
