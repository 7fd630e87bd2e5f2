#!/usr/bin/env bash
# mkfat -d as a crash meets it: a failing and a torn write at every write of
# a format-and-fill (FSIO_FAULT), over an old volume holding files, on FAT16
# and FAT32. Whatever the crash point, the old volume is untouched (the
# first write failed), or blkid finds no FAT volume, or finds one that
# fsck.fat -n and fatck -n find clean and that holds the whole tree (mcopy
# -s, diff -r): never a half volume that looks complete. Then Ctrl-C
# while the files go to a loop device throttled to 4 MB/s by a cgroup: exit
# 130, saying no usable filesystem is left, no signature, and a rerun makes
# the volume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mkfat_root_lib.sh"
need fsck.fat blkid mcopy mmd python3 diff

mkdir -p "$T/src/sub/deeper" "$T/src/empty"
head -c 150000 /dev/urandom > "$T/src/sub/one.bin"
for i in 1 2 3 4 5 6; do head -c $((i * 3000)) /dev/urandom > "$T/src/sub/deeper/file number $i"; done
echo short > "$T/src/A.TXT"

# old NAME SIZE MKFAT-ARGS...: a volume holding files, as a card being re-made does
old() {
  local img=$T/$1; shift
  rm -f "$img"; truncate -s "$1" "$img"; shift
  "$MKFAT" -q "$@" "$img"
  head -c 200000 /dev/urandom > "$T/payload"
  mmd -i "$img" ::OLD; mcopy -i "$img" "$T/payload" ::OLD/P1.BIN; mcopy -i "$img" "$T/payload" ::P2.BIN
  echo "$img"
}

# sweep TEMPLATE ARGS...: every crash point on a fresh copy of TEMPLATE
sweep() {
  local template=$1; shift
  cp --sparse=always "$template" "$T/ref.img"
  FSIO_FAULT=fail:1000000 "$MKFAT" --json --invariant -I "$@" -d "$T/src" "$T/ref.img" > "$T/ref.json" 2>"$T/err" ||
    fail "mkfat -d $*: $(cat "$T/err")"
  local writes; writes=$(json "$T/ref.json" 'j["stats"]["requests_submitted"]')
  [ "$writes" -gt 4 ] || fail "only $writes writes counted"
  local checked=0 complete=0 untouched=0 kind n rc
  for kind in fail tear; do
    for n in $(crash_points 1 $((writes + 1))); do
      cp --sparse=always "$template" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$MKFAT" -q --invariant -I "$@" -d "$T/src" "$T/x.img" 2>"$T/err" || rc=$?
      if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkfat reported success over a failed write"; fi
      if [ "$n" -gt "$writes" ] && [ "$rc" -ne 0 ]; then
        cat "$T/err"; fail "$kind:$n: a fault past the last write failed"
      fi
      if cmp -s "$T/x.img" "$template"; then
        untouched=$((untouched + 1))  # the first write failed: the old volume, as it was
      elif blkid -p "$T/x.img" 2>/dev/null | grep -q vfat; then
        peers_agree "$T/x.img" "$T/src" "$kind:$n of $writes ($*)"
        complete=$((complete + 1))
      fi
      checked=$((checked + 1))
    done
  done
  [ "$complete" -ge 2 ] || fail "no crash point left a volume: the sweep did not reach the end"
  pass "$(basename "$template") $*: $checked crash points over $writes writes; $complete a complete clean volume," \
    "$untouched the old one untouched, the rest none"
}

sweep "$(old fat16.img 32M)" -F 16
sweep "$(old fat32.img 600M -F 32)" -F 32 -s 1

# Ctrl-C while the files go out at 4 MB/s (an SD card's speed).
need_root
mkdir -p "$T/big/d"
for i in 1 2 3 4 5 6; do head -c 4M /dev/urandom > "$T/big/d/part $i"; done
sd=$(new_loop "$(old sd.img 64M -F 16)")
if cg=$(slow_cgroup card 4194304 "$(majmin "$sd")"); then
  RMDIRS+=("$cg")
  sh -c "$CGROUP_JOIN" sh "$cg" \
    "$MKFAT" -q -I -d "$T/big" "$sd" 2>"$T/err" & pid=$!
  interrupt "$pid" 1.5 20 "mkfat -d writing to a device throttled to 4 MB/s"
  [ "$RC" -eq 130 ] || { cat "$T/err"; fail "Ctrl-C while writing the files: exit $RC, expected 130"; }
  grep -q "interrupted while writing the files: the old boot sector is erased and the new volume is not" "$T/err" ||
    { cat "$T/err"; fail "Ctrl-C: what is left not said"; }
  blkid -p "$sd" >/dev/null 2>&1 && fail "an interrupted mkfat -d left a signature: $(blkid -p "$sd")"
  expect_rc 0 "$MKFAT" -q -d "$T/big" "$sd"
  peers_agree "$sd" "$T/big" "the rerun after Ctrl-C"
  pass "Ctrl-C while writing the files: exit 130, said, no signature; the rerun makes the volume"
else
  skip_part "no cgroup write throttle (blkio or io) to make a slow device"
fi
