#!/usr/bin/env bash
# Crash safety: sweep a failing and a torn write over every write of a format.
# Whatever the crash point, the target must never look like a FAT volume that
# fsck.fat finds broken: either no FAT boot sector yet, or a clean filesystem.
# Swept on empty images (FAT12, FAT16, FAT32) and on re-formatting volumes
# that hold files (put there with mtools), where the old FATs and directories
# are still on the disk when the crash comes.
. "$(dirname "$0")/lib.sh"
need fsck.fat blkid

# sweep TEMPLATE ARGS...: each crash point formats a fresh copy of TEMPLATE
sweep() {
  local template=$1; shift
  cp --sparse=always "$template" "$T/ref.img"
  # A fault far beyond the end arms the fault engine without firing, so the
  # count below is the engine's own count of write requests.
  FSIO_FAULT=fail:1000000 "$MKFAT" --json --invariant "$@" "$T/ref.img" > "$T/ref.json" 2>"$T/err" ||
    fail "mkfat $* $template: $(cat "$T/err")"
  local writes; writes=$(json "$T/ref.json" 'j["stats"]["requests_submitted"]')
  [ "$writes" -gt 2 ] || fail "only $writes writes counted"
  local checked=0 valid=0
  for kind in fail tear; do
    for n in $(crash_points 1 $((writes + 1))); do
      cp --sparse=always "$template" "$T/x.img"
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
  pass "$(basename "$template") $*: $checked crash points over $writes writes; $valid left a clean volume, the rest none"
}

empty() {  # empty NAME SIZE: a new sparse image
  rm -f "$T/$1"; truncate -s "$2" "$T/$1"; echo "$T/$1"
}

# holding NAME SIZE MKFAT-ARGS...: a volume with a directory tree of files in it
holding() {
  local name=$1 size=$2; shift 2
  local img; img=$(empty "$name" "$size")
  "$MKFAT" -q "$@" "$img" || fail "cannot make $name"
  head -c 200000 /dev/urandom > "$T/payload"
  mmd -i "$img" ::DIR ::DIR/SUB
  for i in 1 2 3; do mcopy -i "$img" "$T/payload" "::F$i.BIN"; mcopy -i "$img" "$T/payload" "::DIR/SUB/G$i.BIN"; done
  fsck.fat -n "$img" >/dev/null || fail "$name is not clean before the sweep"
  echo "$img"
}

sweep "$(empty fat16.img 64M)"
sweep "$(empty fat32.img 2G)" -F 32 -s 1
sweep "$(empty floppy.img 1440K)"
sweep "$(empty fat12.img 16M)" -F 12

need mcopy mmd
sweep "$(holding files16.img 64M)" -I
sweep "$(holding files12.img 8M -F 12)" -I -F 12 -s 8
sweep "$(holding files32.img 600M -F 32)" -I -F 16
sweep "$(holding files16to32.img 600M -F 16)" -I -F 32 -s 1
