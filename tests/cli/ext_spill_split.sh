#!/usr/bin/env bash
# A directory's htree leaf split after the metadata cache spilled it: the
# leaf comes back from the device, and the split keeps its lower half there
# while the new name goes into the new upper block. Both halves must reach
# the device. mkext4 -d and extwb put of one directory of 1,500 names with a
# 16 KiB metadata cache (FSIO_META_CACHE), so the cache spills between
# nearly every two names. The hash seeds are ones under which a leaf's last
# split came after its spill and put the new name in the upper half: before
# the fix, the lower half was left out and e2fsck -fn found the old, whole
# leaf beside its upper half ("bad max hash", every upper name twice). Each
# image: e2fsck -fn clean, debugfs lists every name once, and it is the
# image a cache holding everything makes, but for the bytes-written count.
. "$(dirname "$0")/lib.sh"
need e2fsck debugfs dumpe2fs python3
MKEXT4=$BUILD/cmd/mkext4
EXTWB=$BUILD/cmd/extwb
export SOURCE_DATE_EPOCH=1700000000
UUID=11111111-2222-3333-4444-555555555555
mkdir -p "$T/src"
python3 -c '
import sys
for i in range(1500): open("%s/name-%04d" % (sys.argv[1], i), "w").close()' "$T/src"

(cd "$T/src" && ls) > "$T/want"

# check IMG DIR WHAT: e2fsck -fn clean and every source name listed once.
check() {
  e2fsck -fn "$1" > "$T/fsck" 2>&1 || { head -20 "$T/fsck"; fail "$3: e2fsck -fn is not clean"; }
  debugfs_names "$1" "$2" | grep -vxF 'lost+found' > "$T/got"  # the root's
  diff "$T/want" "$T/got" > /dev/null || fail "$3: debugfs lists other names in $2 than the source's"
}

for n in 1 3 6 8; do
  seed=$(printf '%08x-0000-4000-8000-000000000000' "$n")
  ids=(-U "$UUID" -E "hash_seed=$seed")
  rm -f "$T"/*.img
  expect_rc 0 "$MKEXT4" -q -C "${ids[@]}" -d "$T/src" "$T/whole.img" 16M
  expect_rc 0 env FSIO_META_CACHE=16K "$MKEXT4" -q -C "${ids[@]}" -d "$T/src" "$T/spill.img" 16M
  check "$T/spill.img" / "mkext4 -d, hash seed $seed, a 16 KiB cache"
  python3 "$SRC/tests/cli/ext_cmp_kbytes.py" "$T/whole.img" "$T/spill.img" ||
    fail "mkext4 -d, hash seed $seed: a 16 KiB cache changes the image beyond the bytes-written count"

  expect_rc 0 "$MKEXT4" -q -C "${ids[@]}" "$T/put.img" 16M
  cp "$T/put.img" "$T/put-whole.img"
  expect_rc 0 "$EXTWB" put -q "$T/put-whole.img" /dir "$T/src"
  expect_rc 0 env FSIO_META_CACHE=16K "$EXTWB" put -q "$T/put.img" /dir "$T/src"
  check "$T/put.img" /dir "extwb put, hash seed $seed, a 16 KiB cache"
  python3 "$SRC/tests/cli/ext_cmp_kbytes.py" "$T/put-whole.img" "$T/put.img" ||
    fail "extwb put, hash seed $seed: a 16 KiB cache changes the image beyond the bytes-written count"
done
pass "1,500 names with a 16 KiB metadata cache, four hash seeds: mkext4 -d and extwb put clean, every name once"
