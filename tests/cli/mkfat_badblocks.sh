#!/usr/bin/env bash
# -c and -l against mkfs.fat on a device with real read errors: a
# device-mapper table with an "error" segment over a loop device. The bad
# clusters mkfat marks (in every FAT) are the ones mkfs.fat -c marks; the
# FAT16 images are equal outside the boot code, and on FAT32 they are equal
# once mkfs.fat 4.2's FSInfo free count is corrected (it counts the bad
# clusters as free; fsck.fat -n then complains, and does not about ours).
# mkfat -c reads in batches of 1 MiB requests; the reads are counted.
. "$(dirname "$0")/lib.sh"
need_root
need dmsetup mkfs.fat fsck.fat python3
dm=fsio-bad-$$
trap 'rc=$?; dmsetup remove "$dm" 2>/dev/null || true; (exit $rc); cleanup' EXIT
export LC_ALL=C.UTF-8

truncate -s 64M "$T/base.img"
loop=$(new_loop "$T/base.img")
# 16 unreadable sectors at 40000 (8 KiB, 20 MiB into the device).
table="0 40000 linear $loop 0
40000 16 error
40016 $((131072 - 40016)) linear $loop 40016"
# -c on a sound device (the loop itself): no bad blocks, the same image.
mkfs.fat --invariant -c -v -F 16 "$loop" > "$T/real.out" 2>&1 || { cat "$T/real.out"; fail "mkfs.fat -c failed"; }
cp --sparse=always "$T/base.img" "$T/real.img"
dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
expect_rc 0 "$MKFAT" --invariant --force -c -F 16 "$loop"
python3 "$SRC/tests/cli/fatcmp.py" "$T/real.img" "$T/base.img" || fail "-c on a sound device: images differ"
expect_rc 0 fsck.fat -n "$T/base.img"
pass "-c on a sound loop device: no bad blocks, the same image as mkfs.fat -c"
dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null

if ! dmsetup create "$dm" --table "$table" 2>"$T/dm.err"; then
  skip_part "-c over unreadable sectors: dmsetup create failed (no device-mapper: $(tail -1 "$T/dm.err"))"
  dm_ok=0
else
  dm_ok=1
fi
dev=/dev/mapper/$dm
[ $dm_ok = 0 ] || ! dd if="$dev" of=/dev/null bs=4096 skip=5000 count=2 iflag=direct 2>/dev/null ||
  fail "the error segment reads"

for args in "-F 16" "-F 32 -s 1"; do
  [ $dm_ok = 1 ] || break
  # shellcheck disable=SC2086
  mkfs.fat --invariant -c -v $args "$dev" > "$T/real.out" 2>&1 || { cat "$T/real.out"; fail "mkfs.fat -c $args failed"; }
  cp --sparse=always "$T/base.img" "$T/real.img"
  dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
  # shellcheck disable=SC2086
  expect_rc 0 "$MKFAT" --invariant --force -c -v --stats $args "$dev"
  cp --sparse=always "$T/base.img" "$T/ours.img"
  want=$(grep 'bad block' "$T/real.out")
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
  pass "-c $args: $want, the same bad clusters as mkfs.fat; fsck.fat -n accepts ours"
  dd if=/dev/zero of="$loop" bs=1M count=64 oflag=direct 2>/dev/null
done
[ $dm_ok = 0 ] || grep -o 'stats:.*' "$T/out" | head -1

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
