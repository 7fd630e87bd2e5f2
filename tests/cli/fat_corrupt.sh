#!/usr/bin/env bash
# tests/fatcorrupt.py, the damage corpus for checker tests, does what it says:
# on FAT12, FAT16 and FAT32 images filled by mtools, each damage makes
# fsck.fat -n print its message and exit 1 (0 for a bad LFN checksum, which
# fsck.fat reports but does not fix), from an image fsck.fat found clean.
. "$(dirname "$0")/lib.sh"
need mkfs.fat fsck.fat mcopy python3
CORRUPT=$SRC/tests/fatcorrupt.py

head -c 20000 /dev/urandom > "$T/A.BIN"
head -c 9000 /dev/urandom > "$T/B.BIN"
echo "a file with a long name" > "$T/a long file name.txt"
for spec in "12 1440 -s 1" "16 65536 -s 4" "32 102400 -F 32 -s 1"; do
  set -- $spec
  bits=$1 kib=$2; shift 2
  clean=$T/clean$bits.img
  rm -f "$clean"
  mkfs.fat -C "$@" "$clean" "$kib" >/dev/null
  mcopy -i "$clean" "$T/A.BIN" "$T/B.BIN" "$T/a long file name.txt" ::
  expect_rc 0 fsck.fat -n "$clean"
  check() {  # check EXIT "MESSAGE" DAMAGE [ARGS...]
    local rc=$1 want=$2; shift 2
    local img=$T/damaged.img
    cp "$clean" "$img"
    expect_rc 0 python3 "$CORRUPT" "$img" "$@"
    local did; did=$(cat "$T/out")
    expect_rc "$rc" fsck.fat -n "$img"
    grep -qF "$want" "$T/out" || { cat "$T/out"; fail "FAT$bits $1 ($did): fsck.fat does not say '$want'"; }
    pass "FAT$bits $1: $did; fsck.fat says '$want'"
  }
  check 1 "FATs differ" copies-differ
  check 1 "Reclaimed 3 unused clusters" lost-clusters 3
  check 1 "cluster chain length is > " chain-longer /A.BIN
  check 1 "Truncating file to" chain-shorter /B.BIN
  check 1 "Contains a free cluster" free-in-chain /A.BIN
  check 1 "share clusters" cross-link /A.BIN /B.BIN
  check 1 "Circular cluster chain" loop /A.BIN
  check 1 "out of range" out-of-range /B.BIN
  check 1 "Dirty bit is set" dirty
  check 0 "Wrong checksum for long file name" bad-lfn "/a long file name.txt"
  check 1 "Bad short file name" after-end /B.BIN
  check 1 "unused clusters (20480 bytes)" forget /A.BIN
  check 1 "Reclaimed 3 unused clusters" lost-loop 3
  if [ "$bits" = 32 ]; then check 1 "Free cluster summary wrong" wrong-free-count -10; fi
done
