#!/usr/bin/env bash
# Crash safety: a --sync fatfill run with a failing or a torn write at
# each write in turn (FSIO_FAULT, as a power cut: every later write fails
# too; sampled, see sweep()). After every crash point:
#   - fsck.fat -n reports nothing but lost clusters and a wrong free count.
#     A crash between the writes of the two FAT copies leaves them different
#     (no single request covers both, and any write can tear), which
#     fsck.fat reports as "FATs differ but appear to be intact"; then each
#     copy, made the only one, must give nothing but lost clusters and a
#     wrong free count, so whichever copy a reader trusts, no file is hurt;
#   - the files mtools wrote read back byte for byte;
#   - every file fatfill says it completed is there at its size, all zeros;
#     a file it had not completed is absent or, if its entry made it, whole.
# Swept on FAT16 and FAT32 (FSInfo) volumes fragmented by mtools, making
# nested directories that grow, and over a --force replacement, whose file
# must be the old one or the new one, never a mix.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fatfill_lib.sh"
need fsck.fat mkfs.fat mcopy mdel mdir python3 cmp

# each_copy IMG: fsck.fat on IMG with copy 0 made the only truth, then copy 1.
each_copy() {
  local c
  for c in 0 1; do
    python3 - "$1" "$T/v$c.img" "$c" <<'PY'
import shutil, sys
src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(src, dst)
f = open(dst, 'r+b'); bs = f.read(512)
le = lambda o, n: int.from_bytes(bs[o:o + n], 'little')
ss, res, nfats, fatsz = le(11, 2), le(14, 2), bs[16], le(22, 2) or le(36, 4)
f.seek((res + keep * fatsz) * ss); good = f.read(fatsz * ss)
for i in range(nfats):
    f.seek((res + i * fatsz) * ss); f.write(good)
PY
    fsck.fat -n "$T/v$c.img" > "$T/fsck.v$c" 2>&1 || true
    fsck_repairable "$T/fsck.v$c" || { cat "$T/fsck.v$c"; return 1; }
  done
}

# sweep NAME TEMPLATE CHECK FATFILL-ARGS...: CHECK IMG DONE is called after
# each crash with the number of files fatfill said it completed.
# Sampled for the CI budget: every write is crashed once, failed at odd
# numbers and torn at even ones (FATFILL_SWEEP=full: both at every write;
# about twice the time, 77 s on a loaded 2-core machine).
sweep() {
  local name=$1 template=$2 check=$3; shift 3
  local kind n rc done points=0 differ=0 writes="" first step=2
  [ "${FATFILL_SWEEP:-}" = full ] && step=1
  for kind in fail tear; do
    first=1; [ "$kind" = tear ] && [ "$step" -eq 2 ] && first=2
    for n in $(seq "$first" "$step" 400); do
      cp --sparse=always "$template" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$FATFILL" --sync "$@" "$T/x.img" >"$T/out" 2>"$T/err" || rc=$?
      if [ "$rc" -eq 0 ]; then writes=$((n - step)); break; fi  # at least that many writes
      [ "$rc" -eq 1 ] || fail "$name $kind:$n: exit $rc: $(cat "$T/err")"
      done=$(sed -n 's/.*(\([0-9]*\) of [0-9]* files were complete before it.*/\1/p' "$T/err")
      [ -n "$done" ] || fail "$name $kind:$n: the error does not say what was completed: $(cat "$T/err")"
      fsck.fat -n "$T/x.img" > "$T/fsck" 2>&1 || true
      if grep -q "^FATs differ but appear to be intact" "$T/fsck"; then
        differ=$((differ + 1))
        grep -v -e '^FATs differ but appear to be intact\.$' -e '^  Using first FAT\.$' "$T/fsck" > "$T/fsck.rest"
        fsck_repairable "$T/fsck.rest" || { cat "$T/fsck"; fail "$name $kind:$n: fsck.fat found more than lost clusters"; }
        each_copy "$T/x.img" || fail "$name $kind:$n: one FAT copy alone is not just lost clusters"
      else
        fsck_repairable "$T/fsck" || { cat "$T/fsck"; fail "$name $kind:$n: fsck.fat found more than lost clusters"; }
      fi
      kept_intact "$T/x.img" "$T/$name" || fail "$name $kind:$n: a file mtools wrote changed"
      "$check" "$T/x.img" "$done" || fail "$name $kind:$n ($done files complete): $(cat "$T/err")"
      points=$((points + 1))
    done
    [ -n "$writes" ] || fail "$name: $kind never got past the last write"
  done
  [ "$writes" -ge 5 ] || fail "$name: only $writes writes"
  cp --sparse=always "$template" "$T/x.img"
  expect_rc 0 "$FATFILL" --sync "$@" "$T/x.img"
  fsck_clean "$T/x.img" || fail "$name: the run without a fault is not clean"
  pass "$name: $points crash points over at least $writes writes (step $step); $differ left the two FAT copies apart, each copy alone repairable"
}

# new_files IMG DONE: files 0..DONE-1 whole; the others absent or whole.
new_files() {
  local i p
  for i in 0 1 2 3 4; do
    p="/new/sub/long name $i.bin"
    if mcopy -n -i "$1" "::$p" "$T/back" 2>/dev/null; then
      zeros_of "$1" "$p" 1500 || return 1
    elif [ "$i" -lt "$2" ]; then
      echo "$p was completed but is missing"; return 1
    fi
  done
}

# replaced IMG DONE: F1.BIN is the old file or the new one.
replaced() {
  mcopy -n -i "$1" ::F1.BIN "$T/back" || { echo "F1.BIN is gone"; return 1; }
  cmp -s "$T/back" "$T/F1.old" && { [ "$2" -eq 0 ] || { echo "completed, but F1.BIN is old"; return 1; }; return 0; }
  zeros_of "$1" /F1.BIN 7000
}

# A volume of random bytes, mtools files with holes between them.
make_volume() {  # NAME SIZE MKFS-ARGS...
  local name=$1 size=$2; shift 2
  head -c "$size" /dev/urandom > "$T/$name.img"
  mkfs.fat "$@" "$T/$name.img" >/dev/null
  fragment "$T/$name.img" "$T/$name" 11
  fsck_clean "$T/$name.img" || fail "$name is not clean before the sweep"
}

make_volume fat16 $((8 << 20)) -F 16 -s 1
# Five long names in a new directory of 512-byte clusters: the fifth grows it.
sweep fat16 "$T/fat16.img" new_files --dir /new/sub --name "long name %d.bin" --count 5 --size 1500
mv "$T/fat16/keep/F1.BIN" "$T/F1.old"  # no longer a file that must stay
sweep fat16 "$T/fat16.img" replaced --force --path /F1.BIN --size 7000
make_volume fat32 $((40 << 20)) -F 32 -s 1
sweep fat32 "$T/fat32.img" new_files --dir /new/sub --name "long name %d.bin" --count 5 --size 1500
