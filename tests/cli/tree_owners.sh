#!/usr/bin/env bash
# Owners of a copied tree (issue 25): mkext4 -d and extwb put, from a
# directory, a tar and a tar on standard input, with --uid-map/--gid-map
# FROM:TO:COUNT (the source's ids FROM.. become TO.., a user namespace's
# uid_map from the source's side), --all-root and -E root_owner. The owners expected are worked by
# hand from the maps, and seen by the kernel (a read-only loop mount,
# stat -c %u:%g) and debugfs; every image e2fsck -fn clean. Bad specs, maps
# that overlap, an id no range covers and contradictory options are refused
# before any write: no file made, an existing image byte-identical.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck debugfs tar mount umount losetup
need_root
MKEXT4=$BUILD/cmd/mkext4
EXTWB=$BUILD/cmd/extwb
export SOURCE_DATE_EPOCH=1700000000  # before the tree was made: every time clamped, so its tar gives the same image
IDS=(-U 0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55 -E hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c)
mkdir -p "$T/mnt" "$T/src/d"

# The source: owners a map must cover (the root directory is 0:0).
S=$T/src
printf 'f\n' > "$S/f"; printf 'g\n' > "$S/d/g"; ln "$S/f" "$S/d/hard"
mkfifo "$S/p"; mknod "$S/c" c 1 3; ln -s f "$S/l"
chown 1000:1000 "$S/f"; chown 1001:2000 "$S/d" "$S/d/g"; chown 5:5 "$S/p"; chown 1002:1000 "$S/c"
chown -h 1000:2000 "$S/l"; chown 0:0 "$S"
tar --format=posix --numeric-owner -cf "$T/src.tar" -C "$S" .

# owners IMG [DIR]: "path uid:gid" of every node under DIR of IMG as the kernel sees them, lost+found aside.
owners() {
  local dev
  e2fsck -fn "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$1: e2fsck -fn is not clean"; }
  dev=$(new_loop "$1")
  mount -o ro "$dev" "$T/mnt" || fail "the kernel does not mount $1"
  MOUNTS+=("$T/mnt")
  (cd "$T/mnt/${2:-}" && find . -not -path './lost+found*' | sort | xargs stat -c '%n %u:%g')
  umount "$T/mnt"; MOUNTS=()
  loop_detach "$dev"
}

# want WHAT HAVE LINES...: the lines, in order, are what HAVE holds.
want() {
  local what=$1 have=$2; shift 2
  printf '%s\n' "$@" > "$T/want"
  diff "$T/want" <(printf '%s\n' "$have") || fail "$what: owners differ (< wanted, > seen)"
}

MAPS=(--uid-map 1000:100000:3 --uid-map 5:7:1 --gid-map 1000:200000:1 --gid-map 2000:300:1 --gid-map 5:5:1)
MAPPED=(". 42:43" "./c 100002:200000" "./d 100001:300" "./d/g 100001:300" "./d/hard 100000:200000"
        "./f 100000:200000" "./l 100000:300" "./p 7:5")

# mkext4 -d: a directory, a tar, a tar on stdin: the same owners, the same image.
"$MKEXT4" -q "${IDS[@]}" -E root_owner=42:43,hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c "${MAPS[@]}" \
  -C -d "$S" "$T/dir.img" 16M || fail "mkext4 -d DIR with maps"
want "mkext4 -d DIR --uid-map --gid-map -E root_owner" "$(owners "$T/dir.img")" "${MAPPED[@]}"
debugfs -R "stat /" "$T/dir.img" 2>/dev/null | grep -q "User: *42 *Group: *43" || fail "debugfs: root is not 42:43"
debugfs -R "stat /d/g" "$T/dir.img" 2>/dev/null | grep -q "User: *100001 *Group: *300" ||
  fail "debugfs: /d/g is not 100001:300"
"$MKEXT4" -q "${IDS[@]}" -E root_owner=42:43,hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c "${MAPS[@]}" \
  -C -d "$T/src.tar" "$T/tar.img" 16M || fail "mkext4 -d TAR with maps"
"$MKEXT4" -q "${IDS[@]}" -E root_owner=42:43,hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c "${MAPS[@]}" \
  -C -d - "$T/stdin.img" 16M < "$T/src.tar" || fail "mkext4 -d - with maps"
[ "$(sha "$T/dir.img")" = "$(sha "$T/tar.img")" ] || fail "maps: the directory's image and the tar's differ"
[ "$(sha "$T/dir.img")" = "$(sha "$T/stdin.img")" ] || fail "maps: the tar on stdin gives another image"
pass "mkext4 -d maps owners (directory, tar, stdin: one image); -E root_owner sets the root"

# Without maps the owners are kept; the root is 0:0 as mke2fs 1.47.0 -d leaves it.
"$MKEXT4" -q "${IDS[@]}" -C -d "$T/src.tar" "$T/kept.img" 16M || fail "mkext4 -d TAR"
want "mkext4 -d TAR (owners kept)" "$(owners "$T/kept.img")" ". 0:0" "./c 1002:1000" "./d 1001:2000" "./d/g 1001:2000" \
  "./d/hard 1000:1000" "./f 1000:1000" "./l 1000:2000" "./p 5:5"
for src in "$S" "$T/src.tar"; do
  rm -f "$T/root.img"
  "$MKEXT4" -q "${IDS[@]}" --all-root -C -d "$src" "$T/root.img" 16M || fail "mkext4 --all-root -d $src"
  want "mkext4 --all-root -d $src" "$(owners "$T/root.img")" ". 0:0" "./c 0:0" "./d 0:0" "./d/g 0:0" "./d/hard 0:0" \
    "./f 0:0" "./l 0:0" "./p 0:0"
done
"$MKEXT4" -q -E root_owner=7:8 --all-root -C -d "$S" "$T/root2.img" 16M || fail "mkext4 --all-root -E root_owner"
[ "$(owners "$T/root2.img" | head -2)" = $'. 7:8\n./c 0:0' ] || fail "--all-root -E root_owner=7:8: root not 7:8"
pass "mkext4 -d keeps owners; --all-root makes them 0:0, -E root_owner still the root's"

# Refusals, before any write: exit 2, the words, no file made.
refuse() {  # refuse WORDS ARGS...: mkext4 ARGS exits 2 saying WORDS and makes no file
  local words=$1; shift
  expect_rc 2 "$MKEXT4" -q -C "$@" "$T/no.img" 16M
  grep -qF -- "$words" "$T/err" || { cat "$T/err"; fail "mkext4 $*: not '$words'"; }
  [ ! -e "$T/no.img" ] || fail "mkext4 $*: made $T/no.img"
}
refuse "--uid-map '1000:0': expected FROM:TO:COUNT" -d "$S" --uid-map 1000:0
refuse "--uid-map '1:2:3:4': expected FROM:TO:COUNT" -d "$S" --uid-map 1:2:3:4
refuse "--gid-map '-1:0:1': FROM, TO and COUNT are decimal numbers" -d "$S" --gid-map=-1:0:1
refuse "--uid-map '1: 2:3': FROM, TO and COUNT are decimal numbers" -d "$S" --uid-map '1: 2:3'
refuse "--uid-map '0x10:0:1': FROM, TO and COUNT are decimal numbers" -d "$S" --uid-map 0x10:0:1
refuse "--uid-map '99999999999:0:1': FROM, TO and COUNT are decimal numbers" -d "$S" --uid-map 99999999999:0:1
refuse "--uid-map '5:5:0': COUNT is at least 1" -d "$S" --uid-map 5:5:0
refuse "--gid-map '4294967294:0:2': the range ends past 4294967294" -d "$S" --gid-map 4294967294:0:2
refuse "--uid-map '0:4294967295:1': the range ends past 4294967294" -d "$S" --uid-map 0:4294967295:1
refuse "--uid-map '1:9:1': its source ids overlap those of 1:1:1" -d "$S" \
  --uid-map 1:1:1 --uid-map 0:4294967294:1 --uid-map 2:2:1 --uid-map 1:9:1
refuse "--uid-map '10:50:5': its source ids overlap those of 0:100:11" -d "$S" --uid-map 0:100:11 --uid-map 10:50:5
refuse "--gid-map '20:104:5': its target ids overlap those of 0:100:5" -d "$S" --gid-map 0:100:5 --gid-map 20:104:5
refuse "--all-root makes every owner 0:0; it takes no --uid-map or --gid-map" -d "$S" --all-root --uid-map 0:0:1
refuse "--uid-map and --gid-map set the owners of a tree's files: they need -d SRC" --gid-map 0:0:1
refuse "--all-root set the owners of a tree's files: they need -d SRC" --all-root
refuse "$S/d: gid 2000 is in no range of --gid-map" -d "$S" --gid-map 1000:0:1
refuse "src.tar: p: uid 5 is in no range of --uid-map" -d "$T/src.tar" --uid-map 1000:0:3
# an existing image, over which -F would format: byte-identical after the refusal
cp "$T/kept.img" "$T/before.img"
expect_rc 2 "$MKEXT4" -q -F --uid-map 1000:0:3 -d "$S" "$T/kept.img"
grep -qF "uid 5 is in no range of --uid-map" "$T/err" || { cat "$T/err"; fail "-F: not the unmapped uid"; }
cmp -s "$T/before.img" "$T/kept.img" || fail "a refused -d changed the target"
pass "mkext4: bad maps, overlaps, unmapped ids and contradictions refused, nothing written"

# extwb put: a directory, a tar (--tar) and a tar on stdin into one image.
"$MKEXT4" -q "${IDS[@]}" -C "$T/put.img" 32M || fail "mkext4 for put"
PUTMAPS=("${MAPS[@]}" --uid-map 0:0:1 --gid-map 0:10:1)
"$EXTWB" put -q "${PUTMAPS[@]}" "$T/put.img" /dir "$S" || fail "extwb put DIR with maps"
"$EXTWB" put -q "${PUTMAPS[@]}" --tar "$T/put.img" /tar "$T/src.tar" || fail "extwb put --tar with maps"
"$EXTWB" put -q "${PUTMAPS[@]}" --tar "$T/put.img" /stdin < "$T/src.tar" || fail "extwb put --tar - with maps"
"$EXTWB" put -q --all-root "$T/put.img" /root "$S" || fail "extwb put --all-root"
"$EXTWB" put -q --uid 3 --gid 4 --tar "$T/put.img" /one < "$T/src.tar" || fail "extwb put --tar --uid --gid"
for d in dir tar stdin; do
  want "extwb put ${PUTMAPS[*]} /$d" "$(owners "$T/put.img" "$d")" ". 0:10" "${MAPPED[@]:1}"
done
want "extwb put --all-root" "$(owners "$T/put.img" root)" ". 0:0" "./c 0:0" "./d 0:0" "./d/g 0:0" "./d/hard 0:0" \
  "./f 0:0" "./l 0:0" "./p 0:0"
want "extwb put --uid 3 --gid 4" "$(owners "$T/put.img" one)" ". 3:4" "./c 3:4" "./d 3:4" "./d/g 3:4" "./d/hard 3:4" \
  "./f 3:4" "./l 3:4" "./p 3:4"
debugfs -R "stat /tar/c" "$T/put.img" 2>/dev/null | grep -q "User: *100002 *Group: *200000" ||
  fail "debugfs: /tar/c is not 100002:200000"
pass "extwb put maps owners from a directory, --tar and stdin; --all-root; --uid/--gid for all"

# extwb put refusals: the image byte-identical.
cp "$T/put.img" "$T/before.img"
put_refuse() {  # put_refuse WORDS ARGS...
  local words=$1; shift
  expect_rc 2 "$EXTWB" put -q "$T/put.img" "$@"
  grep -qF -- "$words" "$T/err" || { cat "$T/err"; fail "extwb put $*: not '$words'"; }
  cmp -s "$T/before.img" "$T/put.img" || fail "extwb put $*: the image changed"
}
put_refuse "$S: uid 0 is in no range of --uid-map" /x "$S" --uid-map 1000:0:3
put_refuse "src.tar: d: gid 2000 is in no range of --gid-map" /x "$T/src.tar" --tar --gid-map 0:0:1 --gid-map 1000:1:1
put_refuse "--uid-map and --gid-map set a tree's owners; --uid and --gid set one owner for all" /x "$S" \
  --uid 1 --uid-map 0:0:1
put_refuse "--all-root set a tree's owners: SRC is a directory, or a tar with --tar" /x "$S/f" --all-root
put_refuse "--gid-map '1:1:1:1': expected FROM:TO:COUNT" /x "$S" --gid-map 1:1:1:1
put_refuse "--all-root makes every owner 0:0" /x "$S" --all-root --gid-map 0:0:1
pass "extwb put: unmapped ids, contradictions and bad specs refused, the image unchanged"
