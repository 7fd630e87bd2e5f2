#!/usr/bin/env bash
# extwb put/mkdir/rm judged by peers: after every scenario e2fsck -fn exits
# 0, debugfs dump and a read-only kernel mount return the bytes we wrote.
. "$(dirname "$0")/lib.sh"
need mke2fs debugfs e2fsck

# check IMG PATH SRC...: e2fsck clean, then each PATH reads as its SRC via debugfs and extwb.
check() {
  local img=$1; shift
  e2fsck -fn "$img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn rejects $img"; }
  while [ $# -gt 0 ]; do
    rm -f "$T/peer"; debugfs -R "dump $1 $T/peer" "$img" >/dev/null 2>&1
    cmp -s "$T/peer" "$2" || fail "$img:$1: debugfs dump differs from the source"
    "$EXTWB" get "$img" "$1" | cmp -s - "$2" || fail "$img:$1: extwb get differs from the source"
    shift 2
  done
}

# kernel_mount IMG: mount IMG read-only on $T/mnt through a loop device;
# where that cannot be done, note the part as skipped and return 1.
kernel_mount() {
  [ "$(id -u)" -eq 0 ] || { skip_part "not root: the kernel's read of $(basename "$1")"; return 1; }
  mkdir -p "$T/mnt"
  # A loop device another test takes at the same moment can fail the mount: try again.
  local try
  for try in 1 2 3; do
    mount -o ro,loop "$1" "$T/mnt" 2>"$T/mount.err" && return 0
    sleep 1
  done
  skip_part "cannot loop-mount $(basename "$1"): $(cat "$T/mount.err")"
  return 1
}

# kernel_check IMG PATH SRC...: the same bytes through a read-only loop mount.
kernel_check() {
  local img=$1; shift
  kernel_mount "$img" || return 0
  MOUNTS+=("$T/mnt")
  while [ $# -gt 0 ]; do
    cmp -s "$T/mnt$1" "$2" || { umount "$T/mnt"; fail "kernel reads $1 differently"; }
    shift 2
  done
  umount "$T/mnt"; MOUNTS=()
}

# 1. A 1 GiB file from standard input in 8 KiB writes: larger than a block group.
img=$T/a.img
mke2fs -q -F -t ext4 -b 4096 "$img" 1600M
head -c 1G /dev/urandom > "$T/big"
dd if="$T/big" bs=8K status=none | "$EXTWB" put --json "$img" /big > "$T/put.json"
[ "$(json "$T/put.json" 'j["size"]')" -eq $((1 << 30)) ] || fail "put reported the wrong size"
[ "$(json "$T/put.json" 'j["writeback"]["blocks_committed"]')" -eq 262144 ] || fail "each block should be committed once"
avg=$(json "$T/put.json" 'j["stats"]["average_request_bytes"]')
[ "$avg" -ge $((512 << 10)) ] || fail "average request $avg bytes: writeback should submit large requests"
check "$img" /big "$T/big"
kernel_check "$img" /big "$T/big"
pass "1 GiB from stdin in 8 KiB writes, average request $avg bytes"

# 2. Nested directories, replace and remove, sparse files, on the same image.
"$EXTWB" mkdir -p "$img" /a/b/c/d
printf 'one' > "$T/one"; printf 'second version' > "$T/two"
"$EXTWB" put -p "$img" /x/y/file "$T/one"
expect_rc 1 "$EXTWB" put "$img" /x/y/file "$T/two"
grep -q "exists; --force replaces it" "$T/err" || fail "put over an existing file should need --force"
"$EXTWB" put --force --mode 600 --uid 1000 --gid 100 "$img" /x/y/file "$T/two"
"$EXTWB" stat --json "$img" /x/y/file > "$T/st.json"
[ "$(json "$T/st.json" '(j["mode"], j["uid"], j["gid"])')" = "(384, 1000, 100)" ] || fail "mode/uid/gid not applied"
{ head -c 70000 /dev/urandom; head -c 3000000 /dev/zero; printf end; } > "$T/sparse"
"$EXTWB" put --sparse "$img" /a/b/c/d/sparse "$T/sparse"
"$EXTWB" stat --json "$img" /a/b/c/d/sparse > "$T/st.json"
[ "$(json "$T/st.json" 'j["blocks_512"]')" -eq 152 ] || fail "sparse: expected 19 data blocks (152 sectors)"
"$EXTWB" put "$img" /gone "$T/one"
"$EXTWB" rm "$img" /gone
expect_rc 1 "$EXTWB" get "$img" /gone
"$EXTWB" mkdir "$img" /empty
"$EXTWB" rm "$img" /empty
expect_rc 1 "$EXTWB" rm "$img" /a
grep -q "not empty" "$T/err" || fail "rm of a non-empty directory should be refused"
check "$img" /x/y/file "$T/two" /a/b/c/d/sparse "$T/sparse" /big "$T/big"
kernel_check "$img" /x/y/file "$T/two" /a/b/c/d/sparse "$T/sparse"
pass "mkdir -p, put -p, --force replace, rm, sparse"

# 2b. An extent tree two levels deep: 800 islands left by --sparse on 1 KiB
# blocks (84 extents per leaf, 4 in the root: leaves, an index, the root).
img=$T/deep.img
mke2fs -q -F -t ext4 -b 1024 "$img" 64M
python3 - "$T/islands" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    for i in range(800):
        f.write(os.urandom(1024).replace(b"\0", b"\1") + b"\0" * 1024)
PY
"$EXTWB" put -q --sparse "$img" /islands "$T/islands"
debugfs -R "ex /islands" "$img" 2>/dev/null | grep -q "^ 0/ 2" || fail "expected an extent tree of depth 2"
check "$img" /islands "$T/islands"
kernel_check "$img" /islands "$T/islands"
pass "800 extents in a tree of depth 2"

# 3. Thousands of small files in one directory on 1 KiB blocks: the
# directory turns into an htree when its first block fills, the root gains
# a level, index nodes split. The first 2800 names go in with one put of a
# directory (inserted one by one in memory), the last 200 one process each,
# so inserts into an index read back from disk split its leaves too. The
# kernel must find every name we check through the index (it looks names up
# by hash), e2fsck checks the hashes.
img=$T/many.img
mke2fs -q -F -t ext4 -b 1024 "$img" 64M
mkdir "$T/many"
for i in $(seq 1 2800); do echo "small $i" > "$T/many/a-rather-long-file-name-to-fill-leaves-quickly-$i"; done
"$EXTWB" put -q "$img" /many "$T/many" || fail "put of 2800 names"
for i in $(seq 2801 3000); do
  echo "small $i" | "$EXTWB" put -q "$img" "/many/a-rather-long-file-name-to-fill-leaves-quickly-$i" || fail "put $i"
done
echo "small 1" > "$T/s1"; echo "small 2999" > "$T/s2999"
"$EXTWB" put -q --force "$img" /many/a-rather-long-file-name-to-fill-leaves-quickly-1 "$T/s1"
"$EXTWB" rm "$img" /many/a-rather-long-file-name-to-fill-leaves-quickly-3000 >/dev/null
[ "$("$EXTWB" ls "$img" /many | wc -l)" -eq 2999 ] || fail "2999 names expected in /many"
[ "$(debugfs -R 'ls -p /many' "$img" 2>/dev/null | grep -c /a-rather)" -eq 2999 ] || fail "debugfs does not list 2999 names"
debugfs -R "htree /many" "$img" > "$T/htree" 2>&1 || fail "debugfs htree rejects /many"
grep -q "Indirect levels: 1" "$T/htree" || fail "/many should have an index level by now"
check "$img" /many/a-rather-long-file-name-to-fill-leaves-quickly-2999 "$T/s2999" \
  /many/a-rather-long-file-name-to-fill-leaves-quickly-1 "$T/s1"
if kernel_mount "$img"; then
  MOUNTS+=("$T/mnt")
  for i in 1 2 17 500 1234 2048 2999; do
    [ "$(cat "$T/mnt/many/a-rather-long-file-name-to-fill-leaves-quickly-$i")" = "small $i" ] ||
      { umount "$T/mnt"; fail "the kernel's hashed lookup misses name $i"; }
  done
  [ "$(ls "$T/mnt/many" | wc -l)" -eq 2999 ] || { umount "$T/mnt"; fail "the kernel lists the wrong number of names"; }
  umount "$T/mnt"; MOUNTS=()
fi
pass "3000 files in one directory on 1 KiB blocks: htree with a level, found by the kernel's hashed lookup"

# 3b. A whole tree in one put (one transaction, like mke2fs -d): nested
# directories, 2000 files in one of them, symbolic links short and long.
img=$T/tree.img
mke2fs -q -F -t ext4 -b 4096 "$img" 256M
mkdir -p "$T/tree/many" "$T/tree/a/b/c"
for i in $(seq 1 2000); do printf 'file %d\n' "$i" > "$T/tree/many/f$i"; done
head -c 300000 /dev/urandom > "$T/tree/a/b/c/blob"
: > "$T/tree/a/empty"
ln -s many/f1 "$T/tree/short-link"
ln -s "$(printf 'long/%.0s' $(seq 1 20))target" "$T/tree/long-link"
"$EXTWB" put --json "$img" /copy "$T/tree" > "$T/tree.json"
[ "$(json "$T/tree.json" '(j["tree"]["files"], j["tree"]["dirs"], j["tree"]["symlinks"])')" = "(2002, 5, 2)" ] ||
  fail "tree counts: $(json "$T/tree.json" 'j["tree"]')"
check "$img" /copy/a/b/c/blob "$T/tree/a/b/c/blob" /copy/many/f1999 "$T/tree/many/f1999"
debugfs -R "htree /copy/many" "$img" >/dev/null 2>&1 || fail "debugfs htree rejects /copy/many"
if kernel_mount "$img"; then
  MOUNTS+=("$T/mnt")
  diff -r --no-dereference "$T/tree" "$T/mnt/copy" > "$T/diff" || { umount "$T/mnt"; cat "$T/diff"; fail "the kernel sees a different tree"; }
  umount "$T/mnt"; MOUNTS=()
fi
pass "a tree of 2002 files, 5 directories and 2 symlinks in one put, identical through the kernel"

# 4. Without metadata_csum (uninit_bg's crc16), without 64bit, and a file larger than a 1 KiB-block group.
for opts in "-O ^metadata_csum,uninit_bg" "-O ^64bit" "-O ^metadata_csum,^uninit_bg,^64bit"; do
  img=$T/o.img
  mke2fs -q -F -t ext4 -b 1024 $opts "$img" 64M
  head -c 10M /dev/urandom > "$T/ten"
  "$EXTWB" put -p "$img" /d/ten "$T/ten"
  "$EXTWB" put "$img" /d/ten2 "$T/ten"
  "$EXTWB" rm "$img" /d/ten2
  check "$img" /d/ten "$T/ten"
  kernel_check "$img" /d/ten "$T/ten"
  pass "ext4 $opts, 1 KiB blocks, 10 MiB file over two groups"
done

# 5. Nearly full: ENOSPC is a clean error and the filesystem stays clean.
img=$T/full.img
mke2fs -q -F -t ext4 -b 4096 "$img" 32M
head -c 20M /dev/urandom > "$T/twenty"
"$EXTWB" put "$img" /first "$T/twenty"
sum=$(sha "$img")
expect_rc 1 "$EXTWB" put "$img" /second "$T/twenty"
grep -q "No space left on device" "$T/err" || fail "ENOSPC should be named: $(cat "$T/err")"
check "$img" /first "$T/twenty"
"$EXTWB" put "$img" /small "$T/one"
check "$img" /small "$T/one" /first "$T/twenty"
pass "ENOSPC is clean (image changed only in free space: $( [ "$(sha "$img")" != "$sum" ] && echo yes))"

# 6. --dry-run writes nothing; SOURCE_DATE_EPOCH sets the timestamps.
sum=$(sha "$img")
"$EXTWB" put --dry-run "$img" /dry "$T/one" > "$T/out"
grep -q "would create /dry" "$T/out" || fail "dry run says nothing"
"$EXTWB" mkdir --dry-run "$img" /drydir >/dev/null
"$EXTWB" rm --dry-run "$img" /small >/dev/null
[ "$(sha "$img")" = "$sum" ] || fail "--dry-run changed the image"
SOURCE_DATE_EPOCH=1700000000 "$EXTWB" put "$img" /dated "$T/one"
"$EXTWB" stat --json "$img" /dated > "$T/st.json"
[ "$(json "$T/st.json" '(j["mtime"]["sec"], j["crtime"]["sec"])')" = "(1700000000, 1700000000)" ] || fail "SOURCE_DATE_EPOCH not used"
check "$img" /dated "$T/one"
pass "--dry-run leaves the image byte-identical; SOURCE_DATE_EPOCH honoured"

# 6b. Ctrl-C while waiting for input: a clean stop, nothing linked.
sum=$(sha "$img")
mkfifo "$T/fifo"
exec 7<>"$T/fifo"   # a writer that never writes nor closes
"$EXTWB" put "$img" /interrupted < "$T/fifo" 2>"$T/err" & pid=$!
interrupt "$pid" 0.5 20 "extwb put reading a fifo that never ends"
exec 7>&-
[ "$RC" -eq 130 ] || fail "SIGINT: exit $RC, expected 130"
grep -q "interrupted; nothing was linked" "$T/err" || fail "SIGINT: $(cat "$T/err")"
[ "$(sha "$img")" = "$sum" ] || fail "an interrupted put with no data changed the image"
check "$img" /first "$T/twenty"
pass "SIGINT stops a put cleanly"

# 7. Refusals leave the image byte-identical: ext3, needs_recovery, an htree directory.
img=$T/r.img
mke2fs -q -F -t ext3 "$img" 32M
sum=$(sha "$img")
expect_rc 1 "$EXTWB" put "$img" /x "$T/one"
grep -q "read-only in extwb" "$T/err" || fail "ext3 write refusal: $(cat "$T/err")"
mke2fs -q -F -t ext4 "$img" 32M
debugfs -w -R "feature needs_recovery" "$img" >/dev/null 2>&1
sum=$(sha "$img")
expect_rc 1 "$EXTWB" put "$img" /x "$T/one"
grep -q "needs_recovery" "$T/err" || fail "needs_recovery refusal: $(cat "$T/err")"
expect_rc 1 "$EXTWB" put --dry-run "$img" /x "$T/one"
grep -q "needs_recovery" "$T/err" || fail "--dry-run does not report the needs_recovery refusal: $(cat "$T/err")"
[ "$(sha "$img")" = "$sum" ] || fail "a refused put changed the image"
mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum "$img" 32M
for i in $(seq 1 120); do echo $i | "$EXTWB" put -p -q "$img" "/idx/some-longer-file-name-$i"; done
e2fsck -fyD "$img" >/dev/null 2>&1 || true   # e2fsck builds its own index
"$EXTWB" put "$img" /idx/new "$T/one"
"$EXTWB" put --force "$img" /idx/some-longer-file-name-7 "$T/one"
"$EXTWB" rm "$img" /idx/some-longer-file-name-8
check "$img" /idx/some-longer-file-name-7 "$T/one" /idx/new "$T/one"
debugfs -R "htree /idx" "$img" >/dev/null 2>&1 || fail "debugfs htree rejects /idx after put, replace and rm"
pass "ext3 and needs_recovery refused, images unchanged; put, replace and rm in an htree made by e2fsck -D"

# 7b. An image mounted through one loop device is refused through a second
# loop device and by its own path, for put, mkdir, rm and under --dry-run.
img=$T/m.img
mke2fs -q -F -t ext4 "$img" 32M
l0=$(new_loop "$img")
mkdir -p "$T/m"
mount "$l0" "$T/m"; MOUNTS+=("$T/m")
l1=$(new_loop "$img")
for target in "$l1" "$img"; do
  for cmd in "put $target /x $T/one" "put --dry-run $target /x $T/one" "mkdir $target /d" "rm $target /lost+found"; do
    # shellcheck disable=SC2086
    expect_rc 1 "$EXTWB" $cmd
    grep -q "mounted on $T/m" "$T/err" || fail "extwb $cmd: not refused as in use: $(cat "$T/err")"
  done
done
umount "$T/m"; MOUNTS=()
e2fsck -fn "$img" >/dev/null 2>&1 || fail "the mounted image is not clean after the refusals"
pass "an image mounted through another loop device is refused, --dry-run too"
