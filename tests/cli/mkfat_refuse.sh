#!/usr/bin/env bash
# mkfat refuses to destroy data: an existing filesystem or partition table
# needs --force, a mounted device is always refused, impossible geometry and
# bad options are named; every refusal leaves the target byte-identical.
. "$(dirname "$0")/lib.sh"
need mkfs.ext4 blkid sfdisk fsck.fat

unchanged() {  # unchanged IMG SHA WHAT
  [ "$(sha "$1")" = "$2" ] || fail "$3: the target was modified"
}
# A sparse image nobody wrote to still has no blocks; faster than hashing 1 GiB.
still_sparse() {  # still_sparse IMG WHAT
  [ "$(stat -c %b "$1")" -eq 0 ] || fail "$2: the target was written to"
}

# An ext4 image: refused, named, untouched.
truncate -s 64M "$T/ext.img"; mkfs.ext4 -q -F "$T/ext.img"
before=$(sha "$T/ext.img")
expect_rc 1 "$MKFAT" "$T/ext.img"
grep -q ext4 "$T/err" || fail "refusal does not name ext4: $(cat "$T/err")"
grep -q -- --force "$T/err" || fail "refusal does not mention --force"
unchanged "$T/ext.img" "$before" "ext4 refusal"
pass "refuses an ext4 image without --force"

# --dry-run writes nothing, even with --force.
expect_rc 0 "$MKFAT" --force --dry-run "$T/ext.img"
unchanged "$T/ext.img" "$before" "--dry-run"
pass "--dry-run leaves the image untouched"

# With --force the ext4 magic must not survive.
expect_rc 0 "$MKFAT" --force "$T/ext.img"
out=$(blkid -p -o export "$T/ext.img"); grep -qx TYPE=vfat <<<"$out" || fail "after --force: $out"
wipefs -n "$T/ext.img" | grep -q ext4 && fail "ext4 signature survived --force"
expect_rc 0 fsck.fat -n "$T/ext.img"
pass "--force replaces ext4 and wipes its signature"

# A partition table.
truncate -s 64M "$T/pt.img"; echo 'start=2048, type=c' | sfdisk -q "$T/pt.img"
before=$(sha "$T/pt.img")
expect_rc 1 "$MKFAT" "$T/pt.img"
grep -qi 'partition' "$T/err" || fail "refusal does not name the partition table: $(cat "$T/err")"
unchanged "$T/pt.img" "$before" "partition table refusal"
pass "refuses a partitioned image"

# An existing FAT is a filesystem too.
truncate -s 32M "$T/fat.img"; expect_rc 0 "$MKFAT" "$T/fat.img"
before=$(sha "$T/fat.img")
expect_rc 1 "$MKFAT" "$T/fat.img"; unchanged "$T/fat.img" "$before" "vfat refusal"
pass "refuses to reformat FAT without --force"

# Impossible geometry: numbers in the message, exit 2, nothing written.
truncate -s 1G "$T/big.img"; still_sparse "$T/big.img" "a new sparse image"
expect_rc 2 "$MKFAT" -F 12 "$T/big.img"
grep -Eq '[0-9]' "$T/err" || fail "no numbers in: $(cat "$T/err")"
still_sparse "$T/big.img" "FAT12 on 1 GiB"
pass "FAT12 on 1 GiB refused: $(head -1 "$T/err")"
truncate -s 1M "$T/tiny.img"
expect_rc 2 "$MKFAT" -F 16 "$T/tiny.img"; still_sparse "$T/tiny.img" "FAT16 on 1 MiB"
pass "FAT16 on 1 MiB refused: $(head -1 "$T/err")"

# Bad options are usage errors naming the option.
for bad in "-n TOO_LONG_LABEL1" "-n A*B" "-s 3" "-S 1000" "-f 0" "-F 13" "-i xyz" "--cluster-size 3000"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$MKFAT" $bad "$T/big.img"
  still_sparse "$T/big.img" "$bad"
done
pass "bad options refused with exit 2"

# A missing target is an error naming it.
expect_rc 1 "$MKFAT" "$T/nope.img"
grep -q nope.img "$T/err" || fail "missing target not named"
pass "missing target named"

# Mounted: refused even with --force.
if [ "$(id -u)" -eq 0 ]; then
  truncate -s 64M "$T/m.img"; mkfs.ext4 -q -F "$T/m.img"
  dev=$(new_loop "$T/m.img"); mkdir "$T/mnt"
  if mount "$dev" "$T/mnt" 2>/dev/null; then
    MOUNTS+=("$T/mnt")
    expect_rc 1 "$MKFAT" --force "$dev"; grep -qi mount "$T/err" || fail "not named as mounted: $(cat "$T/err")"
    expect_rc 1 "$MKFAT" --force "$T/m.img"; grep -qi mount "$T/err" || fail "backing file not seen as mounted"
    umount "$T/mnt"; MOUNTS=()
    blkid -p "$T/m.img" | grep -q ext4 || fail "mounted refusal changed the image"
    pass "refuses a mounted device and the backing file of a mounted loop"
  else
    skip_part "mount failed"
  fi
else
  skip_part "mounted-device check needs root"
fi
