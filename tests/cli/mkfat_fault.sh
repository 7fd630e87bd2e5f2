#!/usr/bin/env bash
# Crash safety: sweep a failing and a torn write over every write of a format.
# Whatever the crash point, the target must never look like a FAT volume that
# fsck.fat finds broken: either no FAT boot sector yet, or a clean filesystem.
. "$(dirname "$0")/lib.sh"
need fsck.fat blkid
sweep() {  # sweep SIZE ARGS...
  local size=$1; shift
  rm -f "$T/ref.img"; truncate -s "$size" "$T/ref.img"
  # A fault far beyond the end arms the fault engine without firing, so the
  # count below is the engine's own count of write requests.
  FSIO_FAULT=fail:1000000 "$MKFAT" --json --invariant "$@" "$T/ref.img" > "$T/ref.json"
  local writes; writes=$(json "$T/ref.json" 'j["stats"]["requests_submitted"]')
  [ "$writes" -gt 2 ] || fail "only $writes writes counted"
  local checked=0 valid=0
  for kind in fail tear; do
    for n in $(seq 1 $((writes + 1))); do
      rm -f "$T/x.img"; truncate -s "$size" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$MKFAT" --invariant "$@" "$T/x.img" >/dev/null 2>"$T/err" || rc=$?
      if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkfat reported success over a failed write"; fi
      if [ "$n" -gt "$writes" ] && [ "$rc" -ne 0 ]; then cat "$T/err"; fail "$kind:$n: fault past the last write still failed"; fi
      if blkid -p "$T/x.img" 2>/dev/null | grep -q vfat; then
        fsck.fat -n "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$kind:$n left a FAT volume fsck.fat rejects"; }
        valid=$((valid + 1))
      fi
      checked=$((checked + 1))
    done
  done
  [ "$valid" -ge 2 ] || fail "no crash point produced a volume: the sweep did not reach the end"
  pass "$size $*: $checked crash points over $writes writes; $valid left a clean volume, the rest none"
}
sweep 64M
sweep 2G -F 32 -s 1
