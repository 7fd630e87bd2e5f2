#!/usr/bin/env bash
# Crash safety of fatck -a: on a volume with several damages at once (FAT
# copies that differ, a cross-link, a chain longer than its file, lost
# clusters, a directory with a size, the dirty bit, a wrong free count on
# FAT32), a failing and a torn write is injected at every write of the
# repair in turn (FSIO_FAULT, as if power was lost there). After every crash
# point:
#   - the files the damage did not touch read back identical (mcopy);
#   - what fsck.fat -n then finds is repairable: fsck.fat -a repairs it,
#     after which fsck.fat -n is clean and the files are still identical;
#   - fatck -a run again finishes the repair: fsck.fat -n clean, files identical.
. "$(dirname "$0")/lib.sh"
need mkfs.fat fsck.fat mcopy mmd python3
FATCK=$BUILD/cmd/fatck
CORRUPT=$SRC/tests/fatcorrupt.py

for f in A B C D E; do head -c $((7000 + RANDOM)) /dev/urandom > "$T/$f.BIN"; done
echo "a file with a long name" > "$T/a long file name.txt"
intact_files=(A.BIN D.BIN "a long file name.txt" DIR/C.BIN DIR/E.BIN)

intact() {  # intact IMAGE WHEN
  local f
  for f in "${intact_files[@]}"; do
    rm -f "$T/back"
    mcopy -n -i "$1" "::$f" "$T/back" 2>/dev/null || fail "$2: ::$f cannot be read"
    cmp -s "$T/back" "$T/$(basename "$f")" || fail "$2: ::$f changed"
  done
}

sweep() {  # sweep BITS KIB MKFS-ARGS...
  local bits=$1 kib=$2; shift 2
  local img=$T/damaged$bits.img
  rm -f "$img"
  mkfs.fat -C "$@" "$img" "$kib" >/dev/null
  mmd -i "$img" ::DIR
  mcopy -i "$img" "$T/A.BIN" "$T/B.BIN" "$T/D.BIN" "$T/a long file name.txt" ::
  mcopy -i "$img" "$T/C.BIN" "$T/E.BIN" ::DIR
  python3 "$CORRUPT" "$img" cross-link /A.BIN /B.BIN >/dev/null
  python3 "$CORRUPT" "$img" chain-longer /DIR/C.BIN >/dev/null
  python3 "$CORRUPT" "$img" lost-clusters 3 >/dev/null
  python3 "$CORRUPT" "$img" dir-size /DIR >/dev/null
  python3 "$CORRUPT" "$img" dirty >/dev/null
  [ "$bits" = 32 ] && python3 "$CORRUPT" "$img" wrong-free-count -7 >/dev/null
  python3 "$CORRUPT" "$img" copies-differ >/dev/null  # last: the others write every copy
  intact "$img" "FAT$bits before the repair"
  local points=0 damaged=0 n kind rc writes=0
  for n in $(seq 1 400); do
    cp --sparse=always "$img" "$T/x.img"
    rc=0; FSIO_FAULT=fail:$n "$FATCK" -a "$T/x.img" >"$T/out" 2>"$T/err" || rc=$?
    if [ "$rc" -eq 1 ]; then writes=$((n - 1)); break; fi
    [ "$rc" -eq 12 ] || { cat "$T/out" "$T/err"; fail "FAT$bits fail:$n: fatck -a exited $rc, not 12 (8 operational + 4 left)"; }
    grep -q "injected" "$T/err" || { cat "$T/err"; fail "FAT$bits fail:$n: the error does not name the injected fault"; }
  done
  [ "$writes" -ge 5 ] || fail "FAT$bits: only $writes writes in the repair: the sweep did not reach its steps"
  fsck.fat -n "$T/x.img" >/dev/null || fail "FAT$bits: the unfaulted repair left damage"
  for kind in fail tear; do
    for n in $(crash_points 1 "$writes"); do
      cp --sparse=always "$img" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$FATCK" -a "$T/x.img" >"$T/out" 2>"$T/err" || rc=$?
      [ "$rc" -eq 12 ] || { cat "$T/out" "$T/err"; fail "FAT$bits $kind:$n: fatck -a exited $rc"; }
      intact "$T/x.img" "FAT$bits $kind:$n, right after the crash"
      cp --sparse=always "$T/x.img" "$T/y.img"
      fsck.fat -n "$T/y.img" >/dev/null 2>&1 || damaged=$((damaged + 1))
      rc=0; fsck.fat -a "$T/x.img" >"$T/fsck" 2>&1 || rc=$?
      [ "$rc" -le 1 ] || { cat "$T/fsck"; fail "FAT$bits $kind:$n: fsck.fat -a exited $rc"; }
      fsck.fat -n "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "FAT$bits $kind:$n: fsck.fat -a did not repair what the crash left"; }
      intact "$T/x.img" "FAT$bits $kind:$n, after fsck.fat -a"
      rc=0; "$FATCK" -a "$T/y.img" >"$T/out" 2>&1 || rc=$?
      [ "$rc" -le 1 ] || { cat "$T/out"; fail "FAT$bits $kind:$n: fatck -a again exited $rc"; }
      fsck.fat -n "$T/y.img" >"$T/fsck" 2>&1 || { cat "$T/out" "$T/fsck"; fail "FAT$bits $kind:$n: fatck -a again left damage"; }
      intact "$T/y.img" "FAT$bits $kind:$n, after fatck -a again"
      points=$((points + 1))
    done
  done
  [ "$damaged" -gt $((points / 2)) ] || fail "FAT$bits: only $damaged of $points crash points left anything for fsck.fat to find"
  pass "FAT$bits: $points crash points over the $writes writes of the repair ($damaged left damage for fsck.fat): files intact, fsck.fat -a and fatck -a both finish it"
}

sweep 12 1440 -s 1
sweep 16 65536 -s 4
sweep 32 102400 -F 32 -s 1
