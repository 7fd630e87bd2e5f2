#!/usr/bin/env bash
# mkfat chooses what mkfs.fat chooses: format the same sizes with both and
# compare every BPB field (decoded independently by fatinfo.py). The unit
# tests sweep many more sizes through the geometry code alone; this proves
# the whole tool end to end.
. "$(dirname "$0")/lib.sh"
need mkfs.fat python3

compare() {  # compare SIZE ARGS...
  local size=$1; shift
  rm -f "$T/a.img" "$T/b.img"
  truncate -s "$size" "$T/a.img"; truncate -s "$size" "$T/b.img"
  mkfs.fat "$@" "$T/a.img" >/dev/null 2>&1 || { echo "mkfs.fat refuses $size $*"; \
    expect_rc 2 "$MKFAT" "$@" "$T/b.img"; pass "both refuse $size $*"; return; }
  expect_rc 0 "$MKFAT" "$@" "$T/b.img"
  local a b
  a=$(python3 "$SRC/tests/cli/fatinfo.py" "$T/a.img" | python3 -c 'import json,sys; j=json.load(sys.stdin); [j.pop(k,None) for k in ("volume_id",)]; print(json.dumps(j,sort_keys=True))')
  b=$(python3 "$SRC/tests/cli/fatinfo.py" "$T/b.img" | python3 -c 'import json,sys; j=json.load(sys.stdin); [j.pop(k,None) for k in ("volume_id",)]; print(json.dumps(j,sort_keys=True))')
  [ "$a" = "$b" ] || { echo "mkfs.fat: $a"; echo "mkfat:    $b"; fail "geometry differs for $size $*"; }
  pass "$size $*"
}
for size in 360K 720K 1200K 1440K 2880K 2M 8M 16M 33M 127M 130M 255M 511M 512M 513M 1G 4G 31G; do
  compare "$size"
done
compare 4G -F 32 -s 1
compare 100M -F 32
compare 300M -F 16
compare 16M -F 12
compare 1G -S 4096
compare 200M -a
compare 64M -f 1
compare 64M -r 112
compare 64M -R 8
compare 8G -s 64
compare 1000000000 -F 32
compare 600M -h 2048
compare 40G -F 32 -s 128
compare 2M -F 32
compare 5T -F 12

# A partition inside an image: --offset in sectors, the partition table
# before the volume is not a reason to refuse, and it survives.
need sfdisk
for f in a b; do rm -f "$T/$f.img"; truncate -s 64M "$T/$f.img"; echo 'start=2048, type=c' | sfdisk -q "$T/$f.img"; done
mkfs.fat --offset 2048 -n PART "$T/a.img" >/dev/null
head -c 1048576 "$T/b.img" > "$T/pt.before"
expect_rc 0 "$MKFAT" --offset 2048 -n PART "$T/b.img"
a=$(python3 "$SRC/tests/cli/fatinfo.py" "$T/a.img" 1048576 | sed 's/"volume_id": "[0-9a-f]*"//')
b=$(python3 "$SRC/tests/cli/fatinfo.py" "$T/b.img" 1048576 | sed 's/"volume_id": "[0-9a-f]*"//')
[ "$a" = "$b" ] || { echo "mkfs.fat: $a"; echo "mkfat:    $b"; fail "geometry differs with --offset"; }
cmp -n 1048576 "$T/pt.before" "$T/b.img" || fail "--offset changed the partition table or the gap before the volume"
blkid -p -O 1048576 -o export "$T/b.img" | grep -qx TYPE=vfat || fail "blkid finds no FAT at the offset"
pass "--offset 2048 inside a partitioned image matches mkfs.fat, partition table kept"
