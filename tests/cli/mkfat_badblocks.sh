#!/usr/bin/env bash
# -c and -l against mkfs.fat. -c on a sound loop device finds nothing and
# gives mkfs.fat -c's image. Over unreadable sectors (FSIO_FAULT=badrange:
# every read of the range fails with EIO, every time, as a bad sector does;
# this kernel has no device-mapper "error" target to make real ones), the
# bad clusters mkfat -c marks in every FAT are the ones mkfs.fat marks when
# given the same 1 KiB blocks with -l (its -c and -l mark through the same
# code): the FAT16 images are equal outside the boot code, and on FAT32 they
# are equal once mkfs.fat 4.2's FSInfo free count is corrected (it counts
# the bad clusters as free; fsck.fat -n then complains, and does not about
# ours). mkfat -c reads in batches of 1 MiB requests; the reads are counted.
. "$(dirname "$0")/lib.sh"
need_root
need mkfs.fat fsck.fat python3
export LC_ALL=C.UTF-8

truncate -s 64M "$T/base.img"
loop=$(new_loop "$T/base.img")
# -c on a sound device (the loop itself): no bad blocks, the same image.
mkfs.fat --invariant -c -v -F 16 "$loop" > "$T/real.out" 2>&1 || { cat "$T/real.out"; fail "mkfs.fat -c failed"; }
cp --sparse=always "$T/base.img" "$T/real.img"
dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
expect_rc 0 "$MKFAT" --invariant --force -c -F 16 "$loop"
python3 "$SRC/tests/cli/fatcmp.py" "$T/real.img" "$T/base.img" || fail "-c on a sound device: images differ"
expect_rc 0 fsck.fat -n "$T/base.img"
pass "-c on a sound loop device: no bad blocks, the same image as mkfs.fat -c"
dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null

# 16 unreadable sectors at sector 40000 (bytes 20480000-20488191): 1 KiB
# blocks 20000-20007 of the volume, which starts at byte 0.
bad=badrange:20480000:8192
seq 20000 20007 > "$T/bad.list"
for args in "-F 16" "-F 32 -s 1"; do
  # shellcheck disable=SC2086
  mkfs.fat --invariant -v -l "$T/bad.list" $args "$loop" > "$T/real.out" 2>&1 ||
    { cat "$T/real.out"; fail "mkfs.fat -l $args failed"; }
  cp --sparse=always "$T/base.img" "$T/real.img"
  dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
  # shellcheck disable=SC2086
  expect_rc 0 env FSIO_FAULT=$bad "$MKFAT" --invariant --force -c -v --stats $args "$loop"
  stats=$(cat "$T/out" "$T/err" | grep -o 'stats:.*' | head -1) || true
  [ -n "$stats" ] || fail "-c $args: --stats printed no stats line"
  grep -q "FSIO_FAULT=$bad is set" "$T/err" || fail "-c $args: the injected bad range was not announced: $(cat "$T/err")"
  cp --sparse=always "$T/base.img" "$T/ours.img"
  want=$(grep 'bad block' "$T/real.out")
  [ "$want" = "8 bad blocks" ] || fail "mkfs.fat -l printed '$want' for 8 blocks"
  grep -qx "$want" "$T/out" || fail "-c $args: mkfs.fat printed '$want'; we printed: $(cat "$T/out")"
  if [ "$args" = "-F 16" ]; then
    python3 "$SRC/tests/cli/fatcmp.py" "$T/real.img" "$T/ours.img" || fail "-c $args: images differ"
  else
    expect_rc 1 fsck.fat -n "$T/real.img"
    grep -q 'Free cluster summary wrong' "$T/out" || fail "mkfs.fat 4.2's FSInfo was expected to be wrong"
    python3 - "$T/real.img" "$T/ours.img" <<'PY'
import struct, sys
real, ours = sys.argv[1], sys.argv[2]
with open(ours, 'rb') as f: o = f.read(8 * 512)
with open(real, 'r+b') as f:
    for sector in (1, 7):  # FSInfo and its backup: copy our free count over mkfs.fat 4.2's
        f.seek(sector * 512 + 0x1E8); f.write(o[sector * 512 + 0x1E8:sector * 512 + 0x1EC])
PY
    python3 "$SRC/tests/cli/fatcmp.py" "$T/real.img" "$T/ours.img" || fail "-c $args: images differ beyond FSInfo"
  fi
  expect_rc 0 fsck.fat -n "$T/ours.img"
  pass "-c $args over 16 unreadable sectors: $want, the same bad clusters as mkfs.fat -l; fsck.fat -n accepts ours"
  dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
done
echo "$stats"

# -l: the same list to both, on a file.
truncate -s 32M "$T/l1.img"; truncate -s 32M "$T/l2.img"
printf '3000\n3001\n\n 9000 \n' > "$T/list"
mkfs.fat --invariant -l "$T/list" "$T/l1.img" > "$T/real.out"
expect_rc 0 "$MKFAT" --invariant -l "$T/list" "$T/l2.img"
python3 "$SRC/tests/cli/fatcmp.py" "$T/l1.img" "$T/l2.img" || fail "-l: images differ"
expect_rc 0 fsck.fat -n "$T/l2.img"
pass "-l: the same image as mkfs.fat ($(grep 'bad block' "$T/real.out"))"

printf '10\n' > "$T/early"
expect_rc 2 "$MKFAT" --force -l "$T/early" "$T/l2.img"; grep -q 'before the data area' "$T/err" || fail "$(cat "$T/err")"
printf 'x12\n' > "$T/junk"
expect_rc 2 "$MKFAT" --force -l "$T/junk" "$T/l2.img"; grep -q 'line 1' "$T/err" || fail "$(cat "$T/err")"
pass "-l: a block before the data area and a malformed line are refused, naming them"
