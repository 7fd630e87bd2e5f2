#!/usr/bin/env bash
# Crash safety: sweep a failing and a torn write over every write of a format.
# Whatever the crash point, the target must never look like a FAT volume that
# fsck.fat finds broken: either no FAT signature yet, or a clean filesystem.
. "$(dirname "$0")/lib.sh"
need fsck.fat blkid
size=64M
truncate -s $size "$T/ref.img"
FSIO_FAULT=fail:1000000 "$MKFAT" --json --invariant "$T/ref.img" > "$T/ref.json"
writes=$(json "$T/ref.json" 'j["stats"]["requests_submitted"]')
[ "$writes" -gt 0 ] || fail "no writes counted"
checked=0
for kind in fail tear; do
  for n in $(seq 1 $((writes + 1))); do
    rm -f "$T/x.img"; truncate -s $size "$T/x.img"
    rc=0; FSIO_FAULT=$kind:$n "$MKFAT" --invariant "$T/x.img" >/dev/null 2>"$T/err" || rc=$?
    if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkfat reported success over a failed write"; fi
    if blkid -p "$T/x.img" 2>/dev/null | grep -q vfat; then
      fsck.fat -n "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$kind:$n left a FAT volume fsck.fat rejects"; }
    fi
    checked=$((checked + 1))
  done
done
pass "$checked crash points over $writes writes: never a broken FAT volume"
