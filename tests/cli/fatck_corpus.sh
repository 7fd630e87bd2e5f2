#!/usr/bin/env bash
# fatck against fsck.fat on the damage corpus (tests/fatcorrupt.py), on
# FAT12, FAT16 and FAT32 images filled by mtools. For each damage:
#   - fsck.fat -n and fatck -n find the same classes of damage
#     (tests/cli/fatck_classes.py maps fsck.fat's messages to fatck's
#     classes), and fatck -n exits 4 where fsck.fat -n exits 1, 0 where 0;
#   - fatck -a exits 1 (0 when there were only warnings), after which
#     fsck.fat -n finds the volume clean (exit 0) and every file the damage
#     did not touch reads back identical with mcopy.
# Then clean volumes: made by mkfs.fat and by mkfat, each type, filled by
# mtools: fatck -n exits 0 and prints nothing but its summary.
. "$(dirname "$0")/lib.sh"
need mkfs.fat fsck.fat mcopy mmd python3
FATCK=$BUILD/cmd/fatck
CORRUPT=$SRC/tests/fatcorrupt.py
CLASSES=$SRC/tests/cli/fatck_classes.py

head -c 20000 /dev/urandom > "$T/A.BIN"
head -c 9000 /dev/urandom > "$T/B.BIN"
head -c 30000 /dev/urandom > "$T/C.BIN"
echo "a file with a long name" > "$T/a long file name.txt"
files=(A.BIN B.BIN "a long file name.txt" DIR/C.BIN)

# intact IMAGE SKIP...: every file of $files not in SKIP reads back identical
intact() {
  local img=$1; shift
  local f s skip
  for f in "${files[@]}"; do
    skip=0
    for s in "$@"; do [ "/$f" = "$s" ] && skip=1; done
    [ "$skip" = 1 ] && continue
    rm -f "$T/back"
    mcopy -n -i "$img" "::$f" "$T/back" 2>"$T/mcopy.err" || { cat "$T/mcopy.err"; fail "$img: mcopy ::$f failed"; }
    cmp -s "$T/back" "$T/$(basename "$f")" || fail "$img: ::$f does not read back identical"
  done
}

checked=0
for spec in "12 1440 -s 1" "16 65536 -s 4" "32 102400 -F 32 -s 1"; do
  set -- $spec
  bits=$1 kib=$2; shift 2
  clean=$T/clean$bits.img
  rm -f "$clean"
  mkfs.fat -n MYLABEL -C "$@" "$clean" "$kib" >/dev/null
  mmd -i "$clean" ::DIR
  mcopy -i "$clean" "$T/A.BIN" "$T/B.BIN" "$T/a long file name.txt" ::
  mcopy -i "$clean" "$T/C.BIN" ::DIR
  expect_rc 0 fsck.fat -n "$clean"
  expect_rc 0 "$FATCK" -n "$clean"
  # check EXTRA-CLASSES DAMAGE [ARGS...]: EXTRA-CLASSES ("-" for none) are
  # classes fatck reports and fsck.fat does not look for.
  check() {
    local extra=$1; shift
    local img=$T/damaged.img
    cp "$clean" "$img"
    python3 "$CORRUPT" "$img" "$@" > "$T/did" || fail "FAT$bits $1: fatcorrupt failed"
    local rc_f=0 rc_c=0
    fsck.fat -n "$img" > "$T/fsck.out" 2>&1 || rc_f=$?
    "$FATCK" -n --json "$img" > "$T/fatck.json" 2>"$T/fatck.err" || rc_c=$?
    local extras=(); [ "$extra" != - ] && extras=($extra)
    python3 "$CLASSES" "$T/fsck.out" "$T/fatck.json" "${extras[@]}" > "$T/classes" ||
      { cat "$T/fsck.out"; cat "$T/fatck.json"; fail "FAT$bits $1: $(cat "$T/classes")"; }
    local want=$(( rc_f == 1 ? 4 : 0 ))
    [ ${#extras[@]} -gt 0 ] && want=4
    [ "$rc_c" -eq "$want" ] || { cat "$T/fsck.out"; fail "FAT$bits $1: fatck -n exited $rc_c, fsck.fat -n $rc_f (want $want)"; }
    local rc_a=0
    "$FATCK" -a "$img" > "$T/fatck.a" 2>&1 || rc_a=$?
    [ "$rc_a" -eq $(( want == 4 ? 1 : 0 )) ] || { cat "$T/fatck.a"; fail "FAT$bits $1: fatck -a exited $rc_a"; }
    fsck.fat -n "$img" > "$T/fsck.after" 2>&1 || { cat "$T/fatck.a" "$T/fsck.after"; fail "FAT$bits $1: fsck.fat -n finds damage after fatck -a"; }
    intact "$img" "${@:2}"
    checked=$((checked + 1))
    pass "FAT$bits $1 ($(cat "$T/did")): $(cat "$T/classes"); fatck -n $rc_c, -a $rc_a, then fsck.fat clean"
  }
  check - copies-differ
  check - lost-clusters 3
  check - chain-longer /A.BIN
  check - chain-shorter /B.BIN
  check - free-in-chain /A.BIN
  check - cross-link /A.BIN /B.BIN
  check - loop /A.BIN
  check - out-of-range /B.BIN
  check - dirty
  check - bad-lfn "/a long file name.txt"
  check - bad-name /A.BIN
  # fsck.fat reads past a 0x00 slot and renames a bad name it finds there;
  # fatck also warns that Windows and mtools do not see the entry.
  check after_end after-end /B.BIN
  check after_end after-end /DIR/C.BIN
  check - duplicate /A.BIN /B.BIN
  check - dir-size /DIR
  check - dotdot /DIR
  check - size-zero /B.BIN
  check - bad-start /B.BIN
  check - lfn-orphan "/a long file name.txt"
  check - label-differs
  check - fat0
  if [ "$bits" = 32 ]; then
    check - wrong-free-count -10
    check - fsinfo-signature
    check next_free next-free
  fi
done

# Clean volumes of every type, made by mkfs.fat and by mkfat, filled by mtools.
mkdir -p "$T/tree/Sub Dir/deeper" "$T/tree/many"
for i in $(seq 1 200); do echo "$i" > "$T/tree/many/file with a long name $i.txt"; done
head -c 100000 /dev/urandom > "$T/tree/Sub Dir/big blob.bin"
echo deep > "$T/tree/Sub Dir/deeper/Ünïcödé.txt"
: > "$T/tree/empty.dat"
for maker in "mkfs.fat -C -F 12 IMG 8000" "mkfs.fat -C -F 16 IMG 65536" "mkfs.fat -C -F 32 IMG 300000" \
             "$MKFAT -q -C -F 12 IMG 8M" "$MKFAT -q -C -F 16 IMG 64M" "$MKFAT -q -C -F 32 -n CARD IMG 600M"; do
  img=$T/fresh.img
  rm -f "$img"
  ${maker/IMG/$img} >/dev/null
  expect_rc 0 "$FATCK" -n "$img"
  # Nothing on stderr but the notice every tool gives when the test suite
  # forces an engine (tools/test.sh's FSIO_ENGINE=psync run).
  grep -v "^fatck: note: FSIO_ENGINE=[a-z]* is set" "$T/err" > "$T/err.rest" || true
  [ "$(wc -l < "$T/out")" -eq 1 ] && grep -q "; clean$" "$T/out" && [ ! -s "$T/err.rest" ] || { cat "$T/out" "$T/err"; fail "empty volume ($maker): fatck printed more than its summary"; }
  LC_ALL=C.UTF-8 mcopy -s -i "$img" "$T/tree/"* ::
  expect_rc 0 fsck.fat -n "$img"
  expect_rc 0 "$FATCK" -n "$img"
  grep -v "^fatck: note: FSIO_ENGINE=[a-z]* is set" "$T/err" > "$T/err.rest" || true
  [ "$(wc -l < "$T/out")" -eq 1 ] && grep -q " 203 files, 3 directories, .*; clean$" "$T/out" && [ ! -s "$T/err.rest" ] ||
    { cat "$T/out" "$T/err"; fail "filled volume ($maker): fatck -n said more than '... clean'"; }
  pass "$(basename "${maker%% *}") ${maker#* -C } filled by mtools: $(cat "$T/out")"
done
pass "$checked damaged images: fatck agrees with fsck.fat, and fatck -a leaves them clean for it"
