#!/usr/bin/env bash
# mkfat as mkdosfs and the other peer names, on the command lines image
# builders use: pi-gen (mkdosfs -n BOOT -F 32 -v), Yocto's wic and OE's
# build_fat_img (mkdosfs -S 512 -C IMG BLOCKS, -n boot -i ID), blivet
# (mkdosfs -n LABEL), OpenWrt and NixOS (--invariant with SOURCE_DATE_EPOCH
# set). Each runs under the real mkfs.fat 4.2 and under mkfat through a link
# called mkdosfs (or mkfs.fat, mkfs.vfat, mkfs.msdos), with --invariant and
# SOURCE_DATE_EPOCH both set:
#   - the same exit code; a usage error exits 1 under every peer name;
#   - stderr the same lines (mkfs.fat's warnings in its words: lowercase
#     label, too few clusters for FAT32, block count, -r) and stdout the same
#     after the version line;
#   - the images equal byte for byte outside the boot code (fatcmp.py):
#     --invariant's time and volume id win over SOURCE_DATE_EPOCH, as there.
# Last, under mkfat's own name SOURCE_DATE_EPOCH wins for the time.
. "$(dirname "$0")/lib.sh"
need mkfs.fat python3
export LC_ALL=C.UTF-8 SOURCE_DATE_EPOCH=1700000000
REAL=$(command -v mkfs.fat)
mkdir -p "$T/bin" "$T/real" "$T/ours"
for n in mkdosfs mkfs.fat mkfs.vfat mkfs.msdos; do ln -s "$MKFAT" "$T/bin/$n"; done

# KIND|SIZE|ARGS: new = a sparse file of SIZE; create = -C makes it; fat = a
# file of SIZE holding mkfs.fat's FAT32 already (overwritten without a word).
cases=(
  "new|256M|-n BOOT -F 32 -v IMG"
  "new|256M|-n boot -F 32 IMG"
  "create|0|-S 512 -C IMG 8192"
  "create|0|-n boot -i 12345678 -S 512 -C IMG 16384"
  "new|64M|-n LABEL IMG"
  "new|32M|-F 32 IMG"
  "new|64M|-F 32 -n efi -v IMG"
  "new|32M|-F 16 IMG 30000"
  "fat|64M|-n BOOT IMG"
  "new|8M|-r 512 -F 32 IMG"
  "new|8M|-F 13 IMG"
  "new|8M|-s 3 IMG"
  "new|8M|-Z IMG"
  "new|8M|"
  "new|8M|IMG 1 2"
)

run() {  # TOOL DIR KIND SIZE ARGS...
  local tool=$1 dir=$2 kind=$3 size=$4; shift 4
  rm -f "$dir/t.img"
  [ "$kind" = create ] || truncate -s "$size" "$dir/t.img"
  [ "$kind" = fat ] && mkfs.fat -F 32 "$dir/t.img" > /dev/null
  local args=() w rc=0
  for w in "$@"; do [ "$w" = IMG ] && args+=("$dir/t.img") || args+=("$w"); done
  "$tool" --invariant "${args[@]}" > "$dir/out" 2> "$dir/err" || rc=$?
  echo "$rc" > "$dir/rc"
  sed -i -E "s|$dir/t.img|IMG|g; s#^(mkfs\.fat|mkfs\.vfat|mkfs\.msdos|mkdosfs):#TOOL:#" "$dir/out" "$dir/err"
}

names=(mkdosfs mkfs.fat mkfs.vfat mkfs.msdos)
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r kind size argline <<<"$c"
  read -ra args <<<"$argline"
  name=${names[$((n % 4))]}; n=$((n + 1))
  what="$name $argline"
  run "$REAL" "$T/real" "$kind" "$size" "${args[@]}"
  run "$T/bin/$name" "$T/ours" "$kind" "$size" "${args[@]}"
  rr=$(cat "$T/real/rc") ro=$(cat "$T/ours/rc")
  show() { for d in real ours; do echo "--- $d (exit $(cat "$T/$d/rc"))"; cat "$T/$d/out" "$T/$d/err"; done; }
  [ "$rr" = "$ro" ] || { show; fail "$what: exit $ro, mkfs.fat $rr"; }
  if [ "$rr" -ne 0 ]; then
    pass "$what: exit $ro, as mkfs.fat"
    continue
  fi
  diff "$T/real/err" "$T/ours/err" > "$T/d" || { show; cat "$T/d"; fail "$what: stderr differs from mkfs.fat's"; }
  diff <(tail -n +2 "$T/real/out") <(tail -n +2 "$T/ours/out") > "$T/d" || { cat "$T/d"; fail "$what: stdout differs"; }
  python3 "$SRC/tests/cli/fatcmp.py" "$T/real/t.img" "$T/ours/t.img" || fail "$what: the images differ outside the boot code"
  said=$(paste -sd'|' "$T/ours/err")
  pass "$what: exit 0, images equal${said:+, stderr as from mkfs.fat: $said}"
done

# Under mkfat's own name SOURCE_DATE_EPOCH wins for the time: the label
# entry in the root directory is dated 2023-11-14 (UTC), not --invariant's
# 2015-03-14; the volume id stays --invariant's.
truncate -s 64M "$T/own.img"
"$MKFAT" -q --invariant -n OWN "$T/own.img"
date=$(python3 - "$T/own.img" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read(1 << 20)
ss, res, nfats, fatsz = (struct.unpack_from('<H', b, 11)[0], struct.unpack_from('<H', b, 14)[0], b[16],
                         struct.unpack_from('<H', b, 22)[0])
root = (res + nfats * fatsz) * ss
d = struct.unpack_from('<H', b, root + 24)[0]
print('%04d-%02d-%02d %08X' % (1980 + (d >> 9), (d >> 5) & 15, d & 31, struct.unpack_from('<I', b, 39)[0]))
PY
)
[ "$date" = "2023-11-14 1234ABCD" ] ||
  fail "mkfat --invariant with SOURCE_DATE_EPOCH: label dated and volume id '$date', expected 2023-11-14 1234ABCD"
pass "mkfat --invariant with SOURCE_DATE_EPOCH: the label dated by SOURCE_DATE_EPOCH, volume id 1234ABCD"
