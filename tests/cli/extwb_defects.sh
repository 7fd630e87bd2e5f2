#!/usr/bin/env bash
# extwb's refusals, kinds, time limits, memory and per-file cost, each
# judged by e2fsck -fn and debugfs (issue 21's defects 3, 4, 6, 8a, 9, 12d).
. "$(dirname "$0")/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs

# limited_as KBYTES CMD...: CMD under an address-space limit (ulimit -v).
# A sanitizer build maps terabytes of shadow memory and cannot run under
# one: there CMD's peak RSS is held to the same bound instead (the defect
# touched all 16 GiB of the buffer it allocated, so either bound catches it).
sanitized=0
grep -qa __asan_init "$EXTWB" && sanitized=1
limited_as() {
  local kb=$1 rc=0; shift
  if [ "$sanitized" -eq 0 ]; then (ulimit -v "$kb" && exec "$@"); return; fi
  /usr/bin/time -f %M -o "$T/as_rss" "$@" || rc=$?
  [ "$rc" -eq 0 ] || return "$rc"
  [ "$(tail -1 "$T/as_rss")" -lt "$kb" ] || fail "$*: peak RSS $(tail -1 "$T/as_rss") KiB, over $kb KiB"
}
[ "$sanitized" -eq 0 ] || [ -x /usr/bin/time ] || skip "no /usr/bin/time to hold a sanitizer build's peak RSS"

fsck_clean() { e2fsck -fn "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn rejects $1${2:+ ($2)}"; }; }

# 1. A refusal comes before the first write, for every writing command.
# The base image holds what the commands work on; the corrupt copy has one
# padding bit of the block bitmap cleared (past the group's last block, so
# e2fsck -fn reports the padding and the stale checksum, no block's state).
base=$T/base.img
mke2fs -q -F -t ext4 -b 4096 -O metadata_csum "$base" 16M > /dev/null
head -c 20000 /dev/urandom > "$T/a.bin"
printf 'new data' > "$T/small"
mkdir -p "$T/tree/sub"; printf x > "$T/tree/sub/f"
"$EXTWB" put -q "$base" /a.bin "$T/a.bin"
"$EXTWB" mkdir -q "$base" /d
fsck_clean "$base"
bitmap=$(dumpe2fs "$base" 2>/dev/null | sed -n 's/^ *Block bitmap at \([0-9]*\).*/\1/p' | head -1)
[ -n "$bitmap" ] || fail "dumpe2fs shows no block bitmap"
bad=$T/bad.img
cp "$base" "$bad"
# The last byte of the bitmap block: bits of blocks past the 4096 in the group.
printf '\x7f' | dd of="$bad" bs=1 seek=$((bitmap * 4096 + 4095)) conv=notrunc status=none
e2fsck -fn "$bad" > "$T/fsck" 2>&1 && fail "the corrupt copy should not be clean"
grep -qi "padding at end of block bitmap" "$T/fsck" || { cat "$T/fsck"; fail "e2fsck should report the padding"; }
! grep -qE "differences: +[-+(]" "$T/fsck" || { cat "$T/fsck"; fail "the corrupt copy should differ only in padding"; }
refuses() {  # WHAT COMMAND ARGS...: works on the clean image, refused on the corrupt one, --dry-run alike
  local what=$1 before; shift
  cp "$base" "$T/ok.img"
  before=$(sha "$T/ok.img")
  "$EXTWB" "$1" -q --dry-run "$T/ok.img" "${@:2}" || fail "$what --dry-run on the clean image should work"
  [ "$(sha "$T/ok.img")" = "$before" ] || fail "$what --dry-run changed the image"
  "$EXTWB" "$1" -q "$T/ok.img" "${@:2}" || fail "$what on the clean image should work"
  fsck_clean "$T/ok.img" "$what"
  before=$(sha "$bad")
  for dry in --dry-run ""; do
    expect_rc 1 "$EXTWB" "$1" $dry "$bad" "${@:2}"
    grep -q "^extwb: .*block bitmap: checksum" "$T/err" ||
      { cat "$T/err"; fail "$what $dry: the refusal should name the bitmap checksum"; }
  done
  [ "$(sha "$bad")" = "$before" ] || fail "$what was refused but changed the image"
}
refuses "rm of a file" rm /a.bin
refuses "rm of an empty directory" rm /d
refuses "put of a new file" put /new "$T/small"
refuses "put -f over a file" put -f /a.bin "$T/small"
refuses "put of a tree" put /t "$T/tree"
refuses "mkdir" mkdir /nd
pass "a corrupt bitmap refuses rm, rmdir, put, put -f, put of a tree and mkdir (and their --dry-run) with the image unchanged"

# 2. put -f replaces a regular file with a regular file, and nothing else:
# over a symlink it left the entry's file_type a symlink's (e2fsck: incorrect filetype).
img=$T/kinds.img
mke2fs -q -F -t ext4 -b 4096 "$img" 16M > /dev/null
debugfs -w -R "symlink /l /etc/passwd" "$img" > /dev/null 2>&1
"$EXTWB" mkdir -q "$img" /dir
"$EXTWB" put -q "$img" /f "$T/a.bin"
fsck_clean "$img"
before=$(sha "$img")
expect_rc 1 "$EXTWB" put -f "$img" /l "$T/small"
grep -q "^extwb: .*'l' is a symbolic link; --force replaces a regular file with a regular file only" "$T/err" ||
  { cat "$T/err"; fail "put -f over a symlink should be refused naming both kinds"; }
expect_rc 1 "$EXTWB" put -f "$img" /dir "$T/small"
grep -q "^extwb: .*'dir' is a directory; --force replaces a regular file" "$T/err" ||
  { cat "$T/err"; fail "put -f over a directory should be refused naming both kinds"; }
[ "$(sha "$img")" = "$before" ] || fail "a refused put -f changed the image"
"$EXTWB" put -q -f "$img" /f "$T/small"
fsck_clean "$img" "after put -f over a regular file"
debugfs -R "dump /f $T/peer" "$img" > /dev/null 2>&1; cmp -s "$T/peer" "$T/small" || fail "put -f: debugfs reads other bytes"
debugfs -R "stat /l" "$img" 2>/dev/null | grep -q "Type: symlink" || fail "the symlink should be left alone"
pass "put -f over a symlink or a directory is refused naming both kinds; over a regular file it works"

# 3. Times ext4 cannot store are refused before anything is written, naming
# the limit: with the _extra words' epoch bits -2^31 .. 0x37FFFFFFF
# (2446-05-10), in 128-byte inodes -2^31 .. 2^31-1. They used to wrap
# (15032385536 read back as 1901, 17179869184 as 1970). What is stored is
# read back by debugfs.
big=$T/t256.img small=$T/t128.img
mke2fs -q -F -t ext4 -b 4096 -I 256 "$big" 16M > /dev/null
mke2fs -q -F -t ext4 -b 4096 -I 128 "$small" 16M > /dev/null
"$EXTWB" put -q --mtime 15032385535 "$big" /last "$T/small"
debugfs -R "stat /last" "$big" 2>/dev/null | grep -q "mtime: .* May 10 22:38:55 2446" || fail "2446-05-10 should read back"
"$EXTWB" put -q --mtime 2147483647 "$small" /last "$T/small"
"$EXTWB" put -q --mtime -2147483648 "$small" /first "$T/small"
debugfs -R "stat /last" "$small" 2>/dev/null | grep -q "mtime: .* Jan 19 03:14:07 2038" || fail "2038-01-19 should read back"
debugfs -R "stat /first" "$small" 2>/dev/null | grep -q "mtime: .* Dec 13 20:45:52 1901" || fail "1901-12-13 should read back"
fsck_clean "$big"; fsck_clean "$small"
mkdir -p "$T/late"; printf x > "$T/late/f"
late_ok=1; touch -d @2147483648 "$T/late/f" 2>/dev/null || late_ok=0
wraps() {  # IMG WANT_IN_MESSAGE CMD...
  local img=$1 want=$2 before; shift 2
  before=$(sha "$img")
  expect_rc 2 "$@"
  grep -q "^extwb: $want" "$T/err" && grep -q "inodes can store" "$T/err" || { cat "$T/err"; fail "'$*' should name the limit"; }
  [ "$(sha "$img")" = "$before" ] || fail "'$*' was refused but changed the image"
}
wraps "$big" "--mtime 15032385536: .*can store, -2147483648 to 15032385535 (1901-12-13 to 2446-05-10 UTC)" "$EXTWB" put --mtime 15032385536 "$big" /w "$T/small"
wraps "$big" "--mtime 17179869184:" "$EXTWB" put --mtime 17179869184 "$big" /w "$T/small"
wraps "$big" "--mtime -2147483649:" "$EXTWB" put --mtime -2147483649 "$big" /w "$T/small"
wraps "$small" "--mtime 2147483648: .*can store, -2147483648 to 2147483647 (1901-12-13 to 2038-01-19 UTC" "$EXTWB" put --mtime 2147483648 "$small" /w "$T/small"
for cmd in "put /w $T/small" "put /wt $T/tree" "mkdir /wd" "rm /last"; do
  # shellcheck disable=SC2086
  SOURCE_DATE_EPOCH=15032385536 wraps "$big" "SOURCE_DATE_EPOCH 15032385536:" "$EXTWB" ${cmd%% *} "$big" ${cmd#* }
done
SOURCE_DATE_EPOCH=2147483648 wraps "$small" "SOURCE_DATE_EPOCH 2147483648:" "$EXTWB" mkdir "$small" /wd
if [ "$late_ok" -eq 1 ]; then
  wraps "$small" ".*: put /late: $T/late/f: modification time 2147483648:" "$EXTWB" put "$small" /late "$T/late"
  "$EXTWB" put -q "$big" /late "$T/late"
  debugfs -R "stat /late/f" "$big" 2>/dev/null | grep -q "mtime: .* 2038" || fail "a 2038 mtime should read back"
else
  skip_part "touch cannot set a 2038 mtime here"
fi
fsck_clean "$big"; fsck_clean "$small"
pass "times past what the inodes hold are refused with the limit named, the image unchanged"

# 4. A tree of empty files costs per entry what a tree of small files does:
# an empty file (a regular file of known size 0) gets no dirty buffer of
# --dirty-limit bytes. Each took 64 MiB of zeroed memory (24 ms) before; under
# this address-space limit the 1 GiB buffer each asked for cannot exist.
img=$T/empty.img
mke2fs -q -F -t ext4 -b 4096 -N 6000 "$img" 64M > /dev/null
mkdir "$T/empty"
(cd "$T/empty" && seq 1 5000 | sed 's/^/e/' | xargs touch)
start=$(date +%s.%N)
expect_rc 0 limited_as 600000 "$EXTWB" put -q --dirty-limit 1G "$img" /empty "$T/empty"
end=$(date +%s.%N)
fsck_clean "$img" "after a tree of 5000 empty files"
n=$(debugfs -R "ls -p /empty" "$img" 2>/dev/null | grep -c '^/[0-9]*/100644/0/0/e[0-9]*/0/$' || true)
[ "$n" -eq 5000 ] || fail "debugfs lists $n empty files in /empty, not 5000"
# The directory is new in this transaction: its blocks are changed in place
# as leaves split, not copied at each split (which scattered them and made
# each insert walk and rebuild an ever longer extent list: O(N^2)).
debugfs -R "stat /empty" "$img" 2>/dev/null | sed -n '/^EXTENTS:/{n;p}' > "$T/ext"
grep -qE '^\(0-[0-9]+\):[0-9]+-[0-9]+$' "$T/ext" || { cat "$T/ext"; fail "the new directory should be one extent"; }
pass "5000 empty files in one put ($(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s), e2fsck clean, debugfs lists them"

# 5. Memory follows the data, not --dirty-limit: a 3-byte file (from a file
# and from a pipe) and 24 MiB from a pipe go in with a 16G limit under a
# 2 GB address-space limit (each allocated the whole limit before), and a
# limit above the machine's memory is refused.
img=$T/mem.img
mke2fs -q -F -t ext4 -b 4096 "$img" 64M > /dev/null
ram_k=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
limit=16G
[ "$ram_k" -gt $((17 << 20)) ] || limit=$((ram_k / 2 / 1024))M
if [ "$ram_k" -lt $((8 << 20)) ]; then
  skip_part "less than 8 GiB of memory: a dirty limit above the 2 GB address-space limit would be refused"
else
  printf abc > "$T/abc"
  head -c 24M /dev/urandom > "$T/r24"
  expect_rc 0 limited_as 2000000 "$EXTWB" put -q --dirty-limit "$limit" "$img" /file "$T/abc"
  printf abc | limited_as 2000000 "$EXTWB" put -q --dirty-limit "$limit" "$img" /pipe || fail "3 bytes from a pipe under ulimit -v"
  limited_as 2000000 "$EXTWB" put -q --dirty-limit "$limit" "$img" /r24 < <(cat "$T/r24") || fail "24 MiB from a pipe under ulimit -v"
  if [ -x /usr/bin/time ]; then
    # 64 MiB is far below the limit and above what a sanitizer build adds.
    printf abc | /usr/bin/time -f %M -o "$T/rss" "$EXTWB" put -q --dirty-limit "$limit" "$img" /rss
    [ "$(cat "$T/rss")" -lt $(( sanitized ? 262144 : 65536 )) ] ||
      fail "a 3-byte put with --dirty-limit $limit peaked at $(cat "$T/rss") KiB"
  else
    skip_part "no /usr/bin/time for the peak RSS of a 3-byte put"
  fi
  fsck_clean "$img" "after puts with --dirty-limit $limit"
  for f in file pipe; do
    debugfs -R "dump /$f $T/peer" "$img" > /dev/null 2>&1; cmp -s "$T/peer" "$T/abc" || fail "/$f reads back wrong"
  done
  debugfs -R "dump /r24 $T/peer" "$img" > /dev/null 2>&1; cmp -s "$T/peer" "$T/r24" || fail "/r24 reads back wrong"
fi
before=$(sha "$img")
expect_rc 2 "$EXTWB" put --dirty-limit $((ram_k * 2 / 1024))M "$img" /huge "$T/small"
grep -q "^extwb: --dirty-limit .*: more than this machine's .* of memory" "$T/err" || { cat "$T/err"; fail "a dirty limit above RAM should be refused"; }
[ "$(sha "$img")" = "$before" ] || fail "a refused --dirty-limit changed the image"
pass "--dirty-limit $limit: 3 bytes and 24 MiB under ulimit -v 2000000, RSS $(cat "$T/rss" 2>/dev/null) KiB; above RAM refused"

# 6. Every usage error says whose it is ("extwb: ...") and names the field
# and the cause; CLI11's own text came bare ("Could not convert: --uid = -1").
img=$T/usage.img
mke2fs -q -F -t ext4 -b 4096 "$img" 16M > /dev/null
before=$(sha "$img")
usage_error() {  # TOOL WANT ARGS...: a usage exit, every line of stderr "TOOL: ...", WANT in it
  local tool=$1 want=$2 rc=2; shift 2
  [ "$tool" != fatck ] || rc=16  # fsck's "usage or syntax error"
  expect_rc "$rc" "$BUILD/cmd/$tool" "$@"
  if grep -qv "^$tool: " "$T/err" || ! grep -qF -- "$want" "$T/err"; then
    cat "$T/err"; fail "'$tool $*' should say '$tool: ...$want...' on every line"
  fi
}
usage_error extwb "--uid: '-1': expected a whole number from 0 to 4294967295" put --uid -1 "$img" /x "$T/small"
usage_error extwb "--gid: '4294967296': expected a whole number" mkdir --gid 4294967296 "$img" /x
usage_error extwb "--uid: 'abc': expected a whole number" put --uid abc "$img" /x "$T/small"
usage_error extwb "--dirty-limit: size '12Q'" put --dirty-limit 12Q "$img" /x "$T/small"
usage_error extwb "--offset: size 'x'" ls --offset x "$img"
usage_error extwb "--mode '9'" put --mode 9 "$img" /x "$T/small"
usage_error extwb "--mtime 'soon'" put --mtime soon "$img" /x "$T/small"
SOURCE_DATE_EPOCH=-5 usage_error extwb "SOURCE_DATE_EPOCH '-5': expected a whole number of seconds since the epoch, 0 or more" mkdir "$img" /x
SOURCE_DATE_EPOCH=soon usage_error extwb "SOURCE_DATE_EPOCH 'soon': expected a whole number" mkdir "$img" /x
sde_malformed extwb mkdir "$img" /x
usage_error extwb "subcommand is required"
usage_error extwb "TARGET is required" put
usage_error extwb "--bogus" put --bogus "$img" /x "$T/small"
# The other tools that parse through cmd/common.cpp.
usage_error fatfill "--bogus" --bogus "$img"
usage_error fatck "--bogus" --bogus "$img"
usage_error fsimg "--bogus" info --bogus x
[ "$(sha "$img")" = "$before" ] || fail "a usage error changed the image"
"$EXTWB" put -q --uid 196613 --gid 70000 "$img" /top "$T/small"
debugfs -R "stat /top" "$img" 2>/dev/null | grep -qE "User: +196613 +Group: +70000 " || fail "--uid/--gid above 65535 should be stored whole"
fsck_clean "$img"
pass "usage errors of extwb, fatfill, fatck and fsimg say 'TOOL: ...' and name the field"

# 7. The same for a put whose data is written in several passes and reaches
# a later block group: the bitmaps any allocation could reach are checked
# before the first pass's data goes out (the first passes were written,
# then the group-3 bitmap refused). Four groups of 1024 blocks (the journal
# fills group 2); the last one's bitmap (initialized: mke2fs wrote it) has
# a padding bit cleared. Passes and batches of 1 MiB.
img=$T/groups.img
mke2fs -q -F -t ext4 -b 4096 -g 1024 -N 128 "$img" 15M > /dev/null
head -c 8M /dev/urandom > "$T/r8"
bitmap=$(dumpe2fs "$img" 2>/dev/null | awk '/^Group 3:/ {g=1} g && /Block bitmap at/ {print $4; exit}')
[ -n "$bitmap" ] || fail "dumpe2fs shows no block bitmap for group 3"
dumpe2fs "$img" 2>/dev/null | grep "^Group 3:" | grep -q BLOCK_UNINIT && fail "group 3's bitmap should be initialized"
cp "$img" "$T/groups-ok.img"
"$EXTWB" put -q --writeback-chunk 1M "$T/groups-ok.img" /r8 "$T/r8" || fail "an 8 MiB put into the clean image should work"
fsck_clean "$T/groups-ok.img" "after an 8 MiB put over four groups"
debugfs -R "stat /r8" "$T/groups-ok.img" 2>/dev/null | grep -qE "\):3[0-9]{3}-" || fail "the 8 MiB file should reach group 3"
# The last bit the checksum covers (blocks_per_group / 8 bytes): block 1023 of a group of 768.
printf '\x7f' | dd of="$img" bs=1 seek=$((bitmap * 4096 + 127)) conv=notrunc status=none
before=$(sha "$img")
for dry in --dry-run ""; do
  expect_rc 1 "$EXTWB" put $dry --writeback-chunk 1M "$img" /r8 "$T/r8"
  grep -q "^extwb: .*group 3 block bitmap: checksum" "$T/err" || { cat "$T/err"; fail "put $dry should name group 3's bitmap"; }
done
expect_rc 1 bash -c 'cat "$1" | "$0" put --writeback-chunk 1M --dirty-limit 1M "$2" /r8' "$EXTWB" "$T/r8" "$img"
grep -q "^extwb: .*group 3 block bitmap: checksum" "$T/err" || { cat "$T/err"; fail "put from a pipe should name group 3's bitmap"; }
# A tree whose first file's data goes out (a batch is full) before the
# second file is allocated in group 3.
mkdir "$T/two"; head -c 3M "$T/r8" > "$T/two/a"; tail -c 5M "$T/r8" > "$T/two/b"
expect_rc 1 "$EXTWB" put --writeback-chunk 1M "$img" /two "$T/two"
grep -q "^extwb: .*group 3 block bitmap: checksum" "$T/err" || { cat "$T/err"; fail "put of a tree should name group 3's bitmap"; }
[ "$(sha "$img")" = "$before" ] || fail "a put refused by group 3's bitmap changed the image"
pass "a put whose later passes reach a corrupt bitmap is refused before its first data, from a file, a pipe and a tree"

# 8. The directory entry is made (in memory) before the data is written: a
# put whose data fits group 0 but whose directory must grow into group 3
# (corrupt bitmap) is refused with nothing written (the data was written
# first, then the directory's growth refused).
img=$T/grow.img
mke2fs -q -F -t ext4 -b 4096 -g 1024 -N 128 -O ^dir_index "$img" 15M > /dev/null
head -c $((1904 * 4096)) /dev/zero > "$T/fill"   # groups 0 and 1 (group 2 is the journal)
"$EXTWB" put -q "$img" /fill "$T/fill"
"$EXTWB" mkdir -q "$img" /d
: > "$T/none"
for i in $(seq 1 19); do "$EXTWB" put -q "$img" "/d/$(printf '%0200d' "$i")" "$T/none"; done  # the block is full
"$EXTWB" rm -q "$img" /fill
long=$(printf '%0200d' 99)
cp "$img" "$T/grow-ok.img"
"$EXTWB" put -q "$T/grow-ok.img" "/d/$long" "$T/small"
fsck_clean "$T/grow-ok.img" "after a put that grows /d"
debugfs -R "stat /d" "$T/grow-ok.img" 2>/dev/null | grep -qE '^\(0-1\):3[0-9]{3}-3[0-9]{3}$' ||
  fail "/d should grow into group 3 here"
debugfs -R "stat /d/$long" "$T/grow-ok.img" 2>/dev/null | grep -qE '^\(0\):[0-9]{1,3}$' || fail "the data should go to group 0"
bitmap=$(dumpe2fs "$img" 2>/dev/null | awk '/^Group 3:/ {g=1} g && /Block bitmap at/ {print $4; exit}')
printf '\x7f' | dd of="$img" bs=1 seek=$((bitmap * 4096 + 127)) conv=notrunc status=none
before=$(sha "$img")
expect_rc 1 "$EXTWB" put "$img" "/d/$long" "$T/small"
grep -q "^extwb: .*group 3 block bitmap: checksum" "$T/err" || { cat "$T/err"; fail "the growth should name group 3's bitmap"; }
[ "$(sha "$img")" = "$before" ] || fail "a put refused by its directory's growth changed the image"
pass "a put whose directory must grow into a corrupt group is refused before its data"
