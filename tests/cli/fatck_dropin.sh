#!/usr/bin/env bash
# fatck as a drop-in for fsck.fat: the argument lists of the real callers
# (systemd-fsck through fsck: -a, -y, -a -f, -y -f; udisks/libblockdev:
# fsck.vfat -n and -a; blivet: dosfsck -n), each run by the real fsck.fat
# 4.2 and by fatck under one of fsck.fat's names (a link called fsck.fat,
# fsck.vfat, fsck.msdos or dosfsck), on FAT12, FAT16 and FAT32 images filled
# by mtools and damaged by tests/fatcorrupt.py. For each:
#   - the same exit code, the "fsck.fat 4.2" banner first, and the same
#     summary line ("IMG: N files, U/T clusters");
#   - after a repair, fsck.fat -n finds both images clean, mdir lists the
#     same entries in each, and every file reads back the same with mtype:
#     a lost chain kept as FSCK0000.REC holds the lost file's bytes.
# Then the command-line answers: a missing device (6), usage errors (2),
# -b, -F (a copy chosen, one that does not exist, bad values), and the
# options fatck refuses by name. Last, -F NUM on an image whose two FAT
# copies differ: fsck.fat's lines, exit codes and the same image bytes.
. "$(dirname "$0")/lib.sh"
need fsck.fat mkfs.fat mcopy mmd mdir mtype python3
REAL=$(command -v fsck.fat)
CORRUPT=$SRC/tests/fatcorrupt.py
mkdir -p "$T/bin"
for n in fsck.fat fsck.vfat fsck.msdos dosfsck; do ln -s "$BUILD/cmd/fatck" "$T/bin/$n"; done

head -c 5000 /dev/urandom > "$T/BLOB.BIN"
head -c 3000 /dev/urandom > "$T/OTHER.BIN"
echo "test 1" > "$T/TEST1.TXT"
echo "test 2" > "$T/TEST2.TXT"

# listing IMG: every entry below the root, "path size", sorted (times left out:
# a recovered file has none in either).
listing() {
  mdir -/ -a -i "$1" :: 2>/dev/null | awk '/^Directory for/ {d=$3} NF>=4 && $1!="." && $1!=".." && $2!="<DIR>" {print d, $1, $2, $3}' | sort
}

# same_files A B: both list the same entries, and every file reads the same.
same_files() {
  diff <(listing "$1") <(listing "$2") > "$T/ls.diff" || { cat "$T/ls.diff"; return 1; }
  local d name ext size
  while read -r d name ext size; do
    local f="$name"; [[ $ext =~ ^[0-9]+$ ]] || f="$name.$ext"
    f="${d%/}/$f"; f=${f#::}
    cmp -s <(mtype -i "$1" "::$f" 2>/dev/null) <(mtype -i "$2" "::$f" 2>/dev/null) || { echo "$f differs"; return 1; }
  done < <(listing "$1")
}

# run_pair NAME ARGS -- IMAGE-COPIES: the real fsck.fat on $T/real.img, fatck
# as NAME on $T/ours.img, same ARGS; compares exit codes and output shape.
run_pair() {
  local name=$1 what=$2; shift 2
  local rr=0 ro=0
  "$REAL" "$@" "$T/real.img" > "$T/real.out" 2>&1 || rr=$?
  "$T/bin/$name" "$@" "$T/ours.img" > "$T/ours.out" 2>&1 || ro=$?
  show() { echo "--- fsck.fat $* (exit $rr)"; cat "$T/real.out"; echo "--- $name $* (exit $ro)"; cat "$T/ours.out"; }
  [ "$rr" = "$ro" ] || { show "$@"; fail "$what: $name $* exited $ro, fsck.fat $rr"; }
  head -1 "$T/ours.out" | grep -q '^fsck.fat 4.2 ' || { show "$@"; fail "$what: no fsck.fat 4.2 banner"; }
  local sr so
  sr=$(tail -1 "$T/real.out" | sed "s|$T/real.img|IMG|") so=$(tail -1 "$T/ours.out" | sed "s|$T/ours.img|IMG|")
  [ "$sr" = "$so" ] || { show "$@"; fail "$what: $name $*: summary '$so', fsck.fat's '$sr'"; }
  echo "$rr"
}

names=(fsck.fat fsck.vfat fsck.msdos dosfsck)
# systemd-fsck (through fsck: -a or -y, -f when forced), udisks/libblockdev
# (-a), fsck -p; then -n (libblockdev, blivet) and -n -f.
repairs=("-a" "-y" "-a -f" "-y -f" "-p")
checks=("-n" "-n -f")
n=0
# One damage, two callers: a repair and a check, each in turn, so that every
# caller meets every kind of damage across the FAT types. DAMAGE "-" is a
# clean image.
try() {
  local base=$1 label=$2; shift 2
  local cl did=""
  for cl in "${repairs[$((n % 5))]}" "${checks[$((n % 2))]}"; do
    local name=${names[$((n % 4))]}; n=$((n + 1))
    cp --sparse=always "$base" "$T/real.img"
    [ "$1" = - ] || python3 "$CORRUPT" "$T/real.img" "$@" > "$T/did" || fail "$label $*: fatcorrupt failed"
    cp --sparse=always "$T/real.img" "$T/ours.img"
    # shellcheck disable=SC2086
    rc=$(run_pair "$name" "$label $*" $cl) || exit 1
    did+="${did:+, }$name $cl: $rc"
    [[ $cl == -n* ]] && { cmp -s "$T/real.img" "$T/ours.img" || fail "$label $*: $name $cl wrote"; continue; }
    expect_rc 0 "$REAL" -n "$T/ours.img"
    expect_rc 0 "$REAL" -n "$T/real.img"
    same_files "$T/real.img" "$T/ours.img" || fail "$label $*: $name $cl: the repaired images hold different files"
  done
  pass "$label ${*}: fatck as fsck.fat's peers exits as fsck.fat ($did), repairs to the same files"
}

for spec in "12|1440|-F 12" "16|16384|-F 16 -s 1" "32|40000|-F 32 -s 1"; do
  IFS='|' read -r bits kib opts <<<"$spec"
  base=$T/base$bits.img
  # shellcheck disable=SC2086
  mkfs.fat -C $opts -n TESTFAT "$base" "$kib" >/dev/null
  mmd -i "$base" ::DIR
  mcopy -i "$base" "$T/BLOB.BIN" "$T/OTHER.BIN" ::
  mcopy -i "$base" "$T/TEST1.TXT" "$T/TEST2.TXT" ::DIR
  try "$base" "FAT$bits clean" -
  try "$base" "FAT$bits" forget /BLOB.BIN
  try "$base" "FAT$bits" lost-clusters 3
  try "$base" "FAT$bits" lost-loop 4
  try "$base" "FAT$bits" dot-entries /DIR
  try "$base" "FAT$bits" dirty
  try "$base" "FAT$bits" chain-longer /OTHER.BIN
  try "$base" "FAT$bits" cross-link /BLOB.BIN /OTHER.BIN
  try "$base" "FAT$bits" bad-name /OTHER.BIN
done

# The lost file itself: FSCK0000.REC holds its bytes, padded to whole clusters.
cp --sparse=always "$T/base32.img" "$T/ours.img"
python3 "$CORRUPT" "$T/ours.img" forget /BLOB.BIN >/dev/null
expect_rc 1 "$T/bin/fsck.vfat" -a "$T/ours.img"
mtype -i "$T/ours.img" ::FSCK0000.REC > "$T/rec"
[ "$(stat -c %s "$T/rec")" -eq 5120 ] && cmp -s <(head -c 5000 "$T/rec") "$T/BLOB.BIN" ||
  fail "FSCK0000.REC does not hold the lost file's 5000 bytes in 10 clusters of 512"
pass "fsck.vfat -a kept the lost 5000-byte chain as FSCK0000.REC (5120 bytes), its bytes intact"

# Command lines: the same exit codes as fsck.fat.
cp "$T/base12.img" "$T/c.img"
for args in "-n $T/none.img" "-a $T/none.img" "-Z $T/c.img" "" "-n $T/c.img $T/c.img" "-c 999999 -n $T/c.img" \
            "--variant=bogus -n $T/c.img" "-w -n $T/c.img" "-b $T/c.img" "--help" "-n -a $T/c.img" \
            "-n -F 1 $T/c.img" "-n -F 0 $T/c.img" "-n -F 3 $T/c.img" "-a -F 255 $T/c.img" "-n -F 256 $T/c.img" \
            "-n -F -1 $T/c.img" "-n -F x $T/c.img" "-n -F 1x $T/c.img" "-b -F 7 $T/c.img" "-n -F"; do
  rr=0 ro=0
  # shellcheck disable=SC2086
  "$REAL" $args > "$T/real.out" 2>&1 || rr=$?
  # shellcheck disable=SC2086
  "$T/bin/dosfsck" $args > "$T/ours.out" 2>&1 || ro=$?
  [ "$rr" = "$ro" ] || { cat "$T/real.out" "$T/ours.out"; fail "dosfsck ${args//$T\//}: exit $ro, fsck.fat $rr"; }
  pass "dosfsck ${args//$T\//}: exit $ro, as fsck.fat"
done
# What fatck does not do is refused by name, as a usage error.
for opt in -A -l -S -t -U -V "-d /X" "-u /X" -r "--codepage=850" "--variant=atari"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$T/bin/fsck.fat" -n $opt "$T/c.img"
  grep -q -- "${opt%%[ =]*}" "$T/err" || fail "fsck.fat $opt: the refusal does not name the option"
done
expect_rc 2 "$T/bin/fsck.fat" "$T/c.img"
grep -q "interactive" "$T/err" || fail "fsck.fat without -a or -n: not refused as interactive"
pass "-A -l -S -t -U -V -d -u -r --codepage --variant=atari and no mode: refused by name, exit 2"
# -F NUM on FAT16 whose copy 1 differs from copy 0 in one entry: "Using first
# FAT." or "Using second FAT." as fsck.fat prints it, the same exit code and,
# repaired, the same bytes (the chosen copy over the other); a check writes
# nothing. 0 is fsck.fat's own choice. Copy 0's FAT[0] zeroed as well: without
# -F fsck.fat takes copy 1 ("FATs differ - using second FAT."), with -F 1 it
# mends copy 0's FAT[0]; copy 1's zeroed too, and it gives up (exit 1,
# nothing written) unless -F names one.
cp --sparse=always "$T/base16.img" "$T/differ.img"
python3 "$CORRUPT" "$T/differ.img" copies-differ 1 >/dev/null
cp --sparse=always "$T/differ.img" "$T/fat0.img"
python3 "$CORRUPT" "$T/fat0.img" fat0 >/dev/null
for spec in "differ|-a -F 1|Using first FAT." "differ|-a -F 2|Using second FAT." "differ|-n -F 2|Using second FAT." \
            "differ|-a -F 0|" "differ|-a|" "fat0|-a|" "fat0|-n|" "fat0|-a -F 1|Using first FAT." \
            "fat0|-a -F 2|Using second FAT."; do
  IFS='|' read -r img cl line <<<"$spec"
  cp --sparse=always "$T/$img.img" "$T/real.img"
  cp --sparse=always "$T/$img.img" "$T/ours.img"
  # shellcheck disable=SC2086
  rc=$(run_pair fsck.fat "$img $cl" $cl) || exit 1
  cmp "$T/real.img" "$T/ours.img" || fail "$img: fsck.fat $cl: fatck's image differs from fsck.fat's"
  if [ -n "$line" ]; then
    grep -qx "$line" "$T/real.out" || fail "$img: fsck.fat $cl no longer prints '$line'"
    grep -qx "$line" "$T/ours.out" || { cat "$T/ours.out"; fail "$img: fsck.fat $cl: fatck does not print '$line'"; }
  fi
  pass "$img: fsck.fat $cl: exit $rc${line:+, '$line'}, the image fsck.fat's byte for byte"
done
# fat0 zeroes copy 0's FAT[0] only: take copy 1's away too, and fsck.fat gives up.
cp --sparse=always "$T/fat0.img" "$T/both.img"
fat_at=$(( $(od -An -tu2 -j14 -N2 "$T/both.img") * 512 + $(od -An -tu2 -j22 -N2 "$T/both.img") * 512 ))
printf '\0\0' | dd of="$T/both.img" bs=1 seek="$fat_at" conv=notrunc status=none
for cl in "-a" "-n"; do
  cp --sparse=always "$T/both.img" "$T/real.img"
  cp --sparse=always "$T/both.img" "$T/ours.img"
  rr=0 ro=0
  "$REAL" $cl "$T/real.img" > "$T/real.out" 2>&1 || rr=$?
  "$T/bin/fsck.fat" $cl "$T/ours.img" > "$T/ours.out" 2>&1 || ro=$?
  [ "$rr" = 1 ] && [ "$ro" = 1 ] || fail "both FAT[0]s damaged, fsck.fat $cl: fatck exited $ro, fsck.fat $rr (want 1)"
  grep -q "Both FATs appear to be corrupt" "$T/ours.out" || { cat "$T/ours.out"; fail "both FAT[0]s: no give-up message"; }
  cmp -s "$T/ours.img" "$T/both.img" || fail "both FAT[0]s damaged, fsck.fat $cl: fatck wrote"
done
pass "both FAT[0]s damaged, no -F: fatck gives up as fsck.fat does (exit 1, nothing written)"

# Under its own name fatck keeps e2fsck's codes.
cp --sparse=always "$T/base16.img" "$T/ours.img"
python3 "$CORRUPT" "$T/ours.img" forget /BLOB.BIN >/dev/null
expect_rc 4 "$BUILD/cmd/fatck" -n "$T/ours.img"
expect_rc 8 "$BUILD/cmd/fatck" -n "$T/none.img"
expect_rc 16 "$BUILD/cmd/fatck" -Z "$T/ours.img"
# -F counts as fsck.fat's: -F 2 reads copy 1 and writes it over copy 0.
cp --sparse=always "$T/differ.img" "$T/ours.img"
cp --sparse=always "$T/differ.img" "$T/real.img"
expect_rc 1 "$BUILD/cmd/fatck" -a --fat-copy 2 "$T/ours.img"
grep -q "Using copy 1: writing it over copy 0" "$T/out" || fail "fatck -F 2 did not read copy 1"
expect_rc 1 "$REAL" -a -F 2 "$T/real.img"
cmp "$T/real.img" "$T/ours.img" || fail "fatck -a -F 2 and fsck.fat -a -F 2 made different images"
expect_rc 8 "$BUILD/cmd/fatck" -n -F 3 "$T/ours.img"
grep -q "FAT copy 3 .*does not exist: the volume has 2 copies" "$T/err" || fail "fatck -F 3: $(cat "$T/err")"
expect_rc 16 "$BUILD/cmd/fatck" -n -F 256 "$T/ours.img"
pass "under its own name fatck still exits 4, 8 and 16; -F 2 reads the second copy, -F 3 of 2 exits 8"
