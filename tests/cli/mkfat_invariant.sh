#!/usr/bin/env bash
# --invariant and SOURCE_DATE_EPOCH give byte-identical images for the same inputs.
. "$(dirname "$0")/lib.sh"
need fsck.fat
for args in "-F 12" "-F 16" "-F 32 -n CARD"; do
  rm -f "$T/a.img" "$T/b.img"
  # shellcheck disable=SC2086
  expect_rc 0 "$MKFAT" --invariant $args -C "$T/a.img" 65536
  sleep 1.1   # a clock-derived id or timestamp would now differ
  # shellcheck disable=SC2086
  expect_rc 0 "$MKFAT" --invariant $args -C "$T/b.img" 65536
  cmp "$T/a.img" "$T/b.img" || fail "--invariant $args: images differ"
  expect_rc 0 fsck.fat -n "$T/a.img"
  pass "--invariant $args is byte-identical"
done
for n in 1 2; do
  rm -f "$T/s$n.img"
  SOURCE_DATE_EPOCH=1700000000 expect_rc 0 "$MKFAT" -n STAMP -C "$T/s$n.img" 32M
  sleep 1.1
done
cmp "$T/s1.img" "$T/s2.img" || fail "SOURCE_DATE_EPOCH images differ"
pass "SOURCE_DATE_EPOCH is byte-identical"
SOURCE_DATE_EPOCH=9223372036854775807 expect_rc 0 "$MKFAT" -C "$T/max.img" 32M
sde_malformed mkfat -C "$T/sde.img" 32M
[ ! -e "$T/sde.img" ] || fail "a malformed SOURCE_DATE_EPOCH is refused before -C makes the image"
pass "SOURCE_DATE_EPOCH: 2^63-1 taken; malformed values refused in the shared words, before -C makes anything"
rm -f "$T/c.img"; expect_rc 0 "$MKFAT" -C "$T/c.img" 32M
cmp -s "$T/s1.img" "$T/c.img" && fail "without --invariant the volume id should come from the clock"
pass "without --invariant the image differs"
