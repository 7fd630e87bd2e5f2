#!/usr/bin/env bash
# Crash safety: fail, then tear, every write of a format in turn (FSIO_FAULT,
# libfsio/engine.hpp; after the fault every write fails, as after a power
# cut). Whatever the crash point, the target holds either no filesystem
# blkid recognises, or a clean one (e2fsck -fn), and a format of an old ext4
# left unfinished never lets e2fsck fall back to the old filesystem's
# backup superblock either. Swept over new images, over an old ext4 of
# another block size, and a layout without descriptor checksums (every
# bitmap written).
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck blkid
MKEXT4=$BUILD/cmd/mkext4

fails() {  # fails N TEMPLATE ARGS...: does the format fail at write N?
  local n=$1 template=$2; shift 2
  cp --sparse=always "$template" "$T/x.img"
  ! FSIO_FAULT=fail:$n "$MKEXT4" -q -F "$@" "$T/x.img" >/dev/null 2>&1
}

# writes TEMPLATE ARGS...: the number of write requests the format makes
# (reads are not counted).
writes() { count_writes fails "$@"; }

sweep() {  # sweep TEMPLATE ARGS...
  local template=$1; shift
  local n kind rc writes valid=0 none=0
  writes=$(writes "$template" "$@")
  [ "$writes" -gt 3 ] || fail "only $writes writes counted"
  for kind in fail tear; do
    for n in $(crash_points 1 $((writes + 1))); do
      cp --sparse=always "$template" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$MKEXT4" -q -F "$@" "$T/x.img" >/dev/null 2>"$T/err" || rc=$?
      if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkext4 reported success over a failed write"; fi
      if [ "$n" -gt "$writes" ] && [ "$rc" -ne 0 ]; then cat "$T/err"; fail "$kind:$n: a fault past the last write still failed"; fi
      if blkid -p "$T/x.img" 2>/dev/null | grep -q 'TYPE="ext4"'; then
        e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/err" "$T/fsck"; fail "$kind:$n left an ext4 e2fsck rejects"; }
        valid=$((valid + 1))
      else
        # No primary superblock: e2fsck falls back to group 1's backup. An
        # old filesystem's is gone from the first write on; the new one's
        # comes only after every table, so whatever e2fsck finds is complete.
        rc=0; e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || rc=$?
        if [ "$rc" -ne 8 ] && grep -q "old-fs" "$T/fsck"; then cat "$T/fsck"; fail "$kind:$n: e2fsck finds the old filesystem"; fi
        none=$((none + 1))
      fi
    done
  done
  [ "$valid" -ge 2 ] || fail "no crash point left a filesystem: the sweep did not reach the end"
  pass "$(basename "$template") $*: $((valid + none)) crash points over $writes writes; $valid left a clean ext4, the rest none"
}

empty() { rm -f "$T/$1"; truncate -s "$2" "$T/$1"; echo "$T/$1"; }

sweep "$(empty new64M.img 64M)" -O orphan_file
sweep "$(empty nocsum.img 256M)" -O ^metadata_csum
# An old ext4 with 4 KiB blocks (labelled old-fs), made again with 1 KiB
# blocks: its group-1 backup at block 32768 is no backup of the new layout.
truncate -s 200M "$T/old.img"
mke2fs -q -F -t ext4 -b 4096 -L old-fs "$T/old.img"
sweep "$T/old.img" -b 1024
