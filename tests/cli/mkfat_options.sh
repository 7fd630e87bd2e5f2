#!/usr/bin/env bash
# Every numeric option of mkfat is range-checked before it is multiplied or
# narrowed: values that wrapped (issue 9: --offset 36028797018963968 formatted
# at byte 0, --cluster-size 4295032832 became 64 KiB, BLOCKS
# 18014398509547520 made 64 MiB) and values mkfs.fat refuses (-r 0, -M 0,
# -i '', -R 0 ...) are usage errors (exit 2) naming the option, and the
# target is never written. Where mkfs.fat has the option, it must refuse too.
. "$(dirname "$0")/lib.sh"
need mkfs.fat

truncate -s 64M "$T/t.img"
untouched() { [ "$(stat -c %b "$T/t.img")" -eq 0 ] || fail "$1: the target was written to"; }

# refuse NAME-IN-MESSAGE ARGS...: exit 2, the message names it, nothing written
refuse() {
  local name=$1; shift
  expect_rc 2 "$MKFAT" "$@"
  grep -qF -- "$name" "$T/err" || fail "mkfat $*: the message does not name $name: $(cat "$T/err")"
  untouched "$*"
  expect_rc 2 "$MKFAT" --dry-run "$@"
}

big=18446744073709551615  # 2^64 - 1
refuse --offset --offset 36028797018963968 "$T/t.img"      # x 512 = 2^64: wrapped to 0
refuse --offset --offset 36028797018963969 "$T/t.img"      # wrapped to 512
refuse --offset --offset $big "$T/t.img"
refuse --offset --offset 131072 "$T/t.img"                 # exactly the end
refuse --offset --offset 1000B "$T/t.img"                  # not a whole sector
refuse --offset --offset 99999999999999999999 "$T/t.img"   # more than 64 bits
refuse --cluster-size --cluster-size 4295032832 "$T/t.img" # 2^32 + 64 KiB: cut to 64 KiB
refuse --cluster-size --cluster-size 0 "$T/t.img"
refuse --cluster-size --cluster-size 8M "$T/t.img"
refuse 'cluster size' --cluster-size 3000 "$T/t.img"
refuse BLOCKS "$T/t.img" 18014398509547520                # x 1024 = 2^64 + 64 MiB: wrapped
refuse BLOCKS "$T/t.img" $big
refuse BLOCKS "$T/t.img" 0
refuse BLOCKS "$T/t.img" 1500B
refuse 'more than the 65536 KiB' "$T/t.img" 65537         # larger than the target
refuse -r -r 0 "$T/t.img"
refuse -r -r 4294967297 "$T/t.img"
refuse -r -r -1 "$T/t.img"
refuse -R -R 0 "$T/t.img"
refuse -R -R 65536 "$T/t.img"
refuse -M -M 0 "$T/t.img"
refuse -M -M '' "$T/t.img"
refuse -M -M 256 "$T/t.img"
refuse 'media byte' -M 0xF1 "$T/t.img"
refuse 'volume id' -i '' "$T/t.img"
refuse 'volume id' -i 123456789 "$T/t.img"
refuse -D -D 256 "$T/t.img"
refuse -D -D -1 "$T/t.img"
refuse -h -h 4294967296 "$T/t.img"
refuse -h -h -1 "$T/t.img"
refuse -b -b 65536 "$T/t.img"
refuse -s -s 0 "$T/t.img"
refuse -s -s 4294967297 "$T/t.img"
refuse -S -S 0 "$T/t.img"
refuse -S -S 4294967808 "$T/t.img"                         # 2^32 + 512: cut to 512
refuse -f -f 0 "$T/t.img"
refuse -f -f 4294967297 "$T/t.img"
refuse -F -F 4294967308 "$T/t.img"                         # 2^32 + 12: cut to 12
refuse label -n "$(printf 'CAF\xe2\x82\xac')" "$T/t.img"  # € is not in code page 850 (CAFÉ is: --codepage)
refuse label -n TOO_LONG_LABEL1 "$T/t.img"
pass "wrapped, out-of-range and empty values: exit 2 naming the option, target untouched"

# -C with a size no file can hold is refused before anything is created.
expect_rc 2 "$MKFAT" -C "$T/c.img" 9007199254740992        # 2^53 KiB = 2^63 bytes
grep -q 'larger than a file can hold' "$T/err" || fail "$(cat "$T/err")"
[ ! -e "$T/c.img" ] || fail "-C left $T/c.img behind"
expect_rc 2 "$MKFAT" -C --offset 18014398509481984 "$T/c.img" 1024
[ ! -e "$T/c.img" ] || fail "-C --offset left $T/c.img behind"
pass "-C sizes beyond a file's limit are usage errors and create nothing"

# mkfs.fat refuses the same values (it exits 1; it has no --cluster-size).
for args in "-r 0" "-M 0" "-i ''" "-R 0" "-s 0" "-f 0" "-D 256" "-h -1" "-S 0"; do
  cp --sparse=always "$T/t.img" "$T/m.img"
  rc=0; eval mkfs.fat "$args" "$T/m.img" >/dev/null 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || fail "mkfs.fat accepted $args: the peer disagrees with refusing it"
done
pass "mkfs.fat refuses -r 0, -M 0, -i '', -R 0, -s 0, -f 0, -D 256, -h -1, -S 0 as well"

# The limits themselves still work.
expect_rc 0 "$MKFAT" --dry-run --offset 65536 "$T/t.img"
expect_rc 0 "$MKFAT" --dry-run -r 16 -R 64 -M 0xF0 -D 255 -h 4294967295 -i ffffffff "$T/t.img"
expect_rc 0 "$MKFAT" --dry-run --offset 1M "$T/t.img" 64512        # all that follows the offset
expect_rc 0 "$MKFAT" --dry-run "$T/t.img" 65536
untouched "the accepted limits"
pass "values at the limits are accepted"

# -m and -l read no more than they can use: reading /dev/zero must not fill
# memory (mkfs.fat -m /dev/zero reads until it is killed). The message keeps
# what fits; a bad-block list over 64 MiB is refused, and the file -C made
# is removed. Ctrl-C while -m - waits on a stalled pipe: exit 130, removed.
"$MKFAT" -C "$T/zmsg.img" 8192 -m /dev/zero > /dev/null 2>"$T/err" & pid=$!
rc=0; ends_within "$pid" 60 || rc=$?
[ "$rc" -ne 99 ] || fail "-m /dev/zero did not end"
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "-m /dev/zero: exit $rc"; }
fsck.fat -n "$T/zmsg.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat after -m /dev/zero"; }
expect_rc 2 "$MKFAT" -C "$T/zlist.img" 8192 -l /dev/zero
grep -q -- "-l /dev/zero: longer than 64 MiB" "$T/err" || fail "-l /dev/zero: $(cat "$T/err")"
[ ! -e "$T/zlist.img" ] || fail "-l /dev/zero left the file -C made"
mkfifo "$T/mfifo"
{ printf 'hello'; exec sleep 60; } > "$T/mfifo" 2>/dev/null & feeder=$!
"$MKFAT" -C "$T/pmsg.img" 8192 -m - < "$T/mfifo" > /dev/null 2>"$T/err" & pid=$!
interrupt "$pid" 0.5 10 "mkfat -m - on a stalled pipe"
kill "$feeder"; wait "$feeder" 2>/dev/null || true
[ "$RC" -eq 130 ] || { cat "$T/err"; fail "mkfat -m - interrupted: exit $RC, expected 130"; }
[ ! -e "$T/pmsg.img" ] || fail "interrupted mkfat left the file -C made"
pass "-m and -l: /dev/zero read boundedly, Ctrl-C on a stalled pipe"
