#!/usr/bin/env bash
# dosfstools' own fsck tests (tests/cli/fixtures/dosfstools, copied from
# dosfstools 4.2; see the README there) through the real fsck.fat 4.2 and
# through fatck under the name fsck.fat (a link in the test's directory),
# the way dosfstools' tests/test-fsck runs them: `fsck.fat -a ARGS` on the
# damaged image, then `fsck.fat -n` on the result. For each image:
#   - a first `-n` run: the same exit code (1) from both, nothing written;
#   - the `-a ARGS` run: the same exit code and summary line, and the
#     repaired images byte-identical (cmp) to each other and to dosfstools'
#     expected image (NAME.xxd);
#   - the second run, `fsck.fat -n` (the real one, and fatck as fsck.fat) on
#     fatck's image: clean, exit 0.
# check-huge, which dosfstools expects fsck.fat to fail on (XFAIL: a
# boot sector claiming 80 GiB on a 101 MiB image), has no expected image:
# both exit 1 with -a and leave the image byte-identical.
. "$(dirname "$0")/lib.sh"
need fsck.fat xxd cmp
REAL=$(command -v fsck.fat)
FIX=$SRC/tests/cli/fixtures/dosfstools
mkdir -p "$T/bin"
ln -s "$BUILD/cmd/fatck" "$T/bin/fsck.fat"
OURS=$T/bin/fsck.fat

# both ARGS...: the real fsck.fat on $T/real.img, fatck as
# fsck.fat on $T/ours.img; exit codes in $rr and $ro, outputs kept.
both() {
  rr=0 ro=0
  "$REAL" "$@" "$T/real.img" > "$T/real.out" 2>&1 || rr=$?
  "$OURS" "$@" "$T/ours.img" > "$T/ours.out" 2>&1 || ro=$?
}
show() { echo "--- fsck.fat (exit $rr)"; cat "$T/real.out"; echo "--- fatck as fsck.fat (exit $ro)"; cat "$T/ours.out"; }
summary() { tail -1 "$1" | sed "s|$2|IMG|"; }

# fresh NAME: the damaged image as $T/in.img, real.img and ours.img.
fresh() {
  rm -f "$T/in.img" "$T/ref.img"  # xxd -r writes into a file, truncating nothing
  xxd -r "$FIX/$1.fsck" "$T/in.img" || fail "$1: xxd -r failed"
  cp --sparse=always "$T/in.img" "$T/real.img"
  cp --sparse=always "$T/in.img" "$T/ours.img"
}

one() {
  local name=$1 args="" a
  [ -f "$FIX/$name.args" ] && args=$(cat "$FIX/$name.args")
  a="-a${args:+ $args}"
  fresh "$name"
  both -n
  [ "$rr" = 1 ] && [ "$ro" = 1 ] || { show; fail "$name: -n exited $ro, fsck.fat $rr (want 1)"; }
  cmp -s "$T/ours.img" "$T/in.img" || fail "$name: fatck -n wrote"
  # shellcheck disable=SC2086
  both -a $args
  [ "$rr" = "$ro" ] || { show; fail "$name: $a exited $ro, fsck.fat $rr"; }
  if [ ! -f "$FIX/$name.xxd" ]; then  # dosfstools' XFAIL: nothing to repair to, no summary
    [ "$rr" = 1 ] || { show; fail "$name: fsck.fat -a exited $rr, dosfstools expects it to fail (1)"; }
    cmp -s "$T/real.img" "$T/in.img" && cmp -s "$T/ours.img" "$T/in.img" || fail "$name: an image was written"
    pass "$name: $a: both exit 1 and write nothing (dosfstools' expected failure)"
    return
  fi
  [ "$rr" = 1 ] || { show; fail "$name: fsck.fat $a exited $rr, not 1"; }
  [ "$(summary "$T/real.out" "$T/real.img")" = "$(summary "$T/ours.out" "$T/ours.img")" ] ||
    { show; fail "$name: $a: the summary lines differ"; }
  xxd -r "$FIX/$name.xxd" "$T/ref.img" || fail "$name: xxd -r of the expected image failed"
  cmp "$T/real.img" "$T/ref.img" || fail "$name: fsck.fat 4.2 no longer makes dosfstools' expected image"
  cmp "$T/ours.img" "$T/real.img" || { show; fail "$name: $a: fatck's image differs from fsck.fat's"; }
  expect_rc 0 "$REAL" -n "$T/ours.img"
  expect_rc 0 "$OURS" -n "$T/ours.img"
  pass "$name: $a: exit 1 as fsck.fat, the image fsck.fat's and dosfstools' byte for byte, then -n clean"
}

n=0
for f in "$FIX"/check-*.fsck; do
  one "$(basename "$f" .fsck)"
  n=$((n + 1))
done
[ "$n" -ge 16 ] || fail "only $n dosfstools images found in $FIX"
pass "$n dosfstools images: fatck as fsck.fat repairs each as fsck.fat 4.2 does"
