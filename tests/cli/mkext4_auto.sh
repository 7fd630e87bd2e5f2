#!/usr/bin/env bash
# mkext4 -C -d SRC TARGET [auto] (issue 25): the image's size chosen for the
# tree, in whole MiB, by mke2fs's rules for each size. The image made holds
# the tree (e2fsck -fn clean, every file read back equal through debugfs
# rdump), its size is the one printed and in --json, one MiB less is refused
# by a plain mkext4 -d of that size (for this tree the bound on directory
# and extent blocks is within a MiB of what it takes), and --slack leaves
# the room asked: 64M of free blocks beyond the tree, 50% more than without.
# The chosen size is filled: the tree takes at least 98% of the blocks an
# empty filesystem of that size has free.
# SIZE auto without -C and -d, --slack without SIZE auto and bad --slack
# values are refused before any write.
. "$(dirname "$0")/lib.sh"
need e2fsck debugfs dumpe2fs python3 diff
MKEXT4=$BUILD/cmd/mkext4
S=$T/src
mkdir -p "$S/many" "$S/d/e"
for i in $(seq 1 3000); do echo "$i" > "$S/many/f$i"; done
head -c 30000000 /dev/urandom > "$S/d/e/blob"
ln -s d/e/blob "$S/link"; ln "$S/d/e/blob" "$S/hard"

free_blocks() { dumpe2fs -h "$1" 2> /dev/null | sed -n 's/^Free blocks: *//p'; }
block_size() { dumpe2fs -h "$1" 2> /dev/null | sed -n 's/^Block size: *//p'; }
holds() {  # holds IMG: e2fsck clean, the tree read back equal
  e2fsck -fn "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$1: e2fsck -fn is not clean"; }
  rm -rf "$T/back"; mkdir "$T/back"
  debugfs -R "rdump / $T/back" "$1" > /dev/null 2>&1
  diff -r --no-dereference "$S" "$T/back" -x lost+found > "$T/diff" 2>&1 || { cat "$T/diff"; fail "$1: rdump differs"; }
}

expect_rc 0 "$MKEXT4" -C -d "$S" "$T/auto.img"
holds "$T/auto.img"
mib=$(( $(stat -c %s "$T/auto.img") / 1048576 ))
[ $((mib * 1048576)) = "$(stat -c %s "$T/auto.img")" ] || fail "the image is not a whole number of MiB"
grep -qF "in the $mib MiB chosen for it" "$T/out" || { cat "$T/out"; fail "the size chosen is not printed"; }
expect_rc 1 "$MKEXT4" -q -C -d "$S" "$T/less.img" "$((mib - 1))M"
grep -qF "the tree takes at least" "$T/err" || { cat "$T/err"; fail "$((mib - 1))M: not refused for room"; }
[ ! -e "$T/less.img" ] || fail "the refused run left its image"
rm -f "$T/auto2.img"
expect_rc 0 "$MKEXT4" -q --json -C -d "$S" "$T/auto2.img" auto
[ "$(json "$T/out" '(j["tree"]["size_auto"], j["tree"]["size_bytes"])')" = "(True, $((mib * 1048576)))" ] ||
  fail "--json: $(json "$T/out" 'j["tree"]')"
# The tree fills at least 98% of what an empty filesystem of that size has free.
"$MKEXT4" -q -C "$T/empty.img" "${mib}M"
empty_free=$(free_blocks "$T/empty.img")
left=$(free_blocks "$T/auto.img")
[ $((left * 50)) -le "$empty_free" ] || fail "the tree fills only $(( 100 - left * 100 / empty_free ))% of the $mib MiB image's free blocks"
pass "SIZE auto: $mib MiB holds the tree, $((mib - 1)) MiB does not; printed and in --json;" \
  "the tree takes $(( (empty_free - left) * 1000 / empty_free )) per mille of the free blocks"

expect_rc 0 "$MKEXT4" -q -C -d "$S" "$T/slack.img" --slack 64M
holds "$T/slack.img"
free=$(( $(free_blocks "$T/slack.img") * $(block_size "$T/slack.img") ))
[ "$free" -ge $((64 << 20)) ] || fail "--slack 64M left $free bytes free"
[ "$free" -lt $(((64 << 20) + 4194304)) ] || fail "--slack 64M left $free bytes free: more than 4 MiB over"
expect_rc 0 "$MKEXT4" -q -C -d "$S" "$T/pct.img" auto --slack 50%
holds "$T/pct.img"
[ "$(stat -c %s "$T/pct.img")" -gt $(( mib * 1048576 * 14 / 10 )) ] || fail "--slack 50%: not larger by 40% at least"
pass "--slack 64M leaves 64 MiB free (and less than 4 MiB over), 50% makes the image half as large again"

for args in "-d $S $T/no.img auto" "-C $T/no.img auto" "-C $T/no.img 8M --slack 1M" "-C -d $S $T/no.img --slack 1001%" \
            "-C -d $S $T/no.img --slack 5%%" "-C -d $S $T/no.img --slack x"; do
  expect_rc 2 "$MKEXT4" -q $args
  [ ! -e "$T/no.img" ] || fail "mkext4 $args made $T/no.img"
done
grep -qF -- "--slack: size 'x'" "$T/err" || { cat "$T/err"; fail "--slack x: not named"; }
pass "SIZE auto and --slack refused where they do not apply, bad --slack values refused, nothing made"
